/** One post per click: a double-click would otherwise register the family twice and hold their seats twice. */
export function submitOnce(form: HTMLFormElement): void {
  const submit = form.querySelector<HTMLButtonElement>('#register');
  if (!submit) return;
  form.addEventListener('submit', (event) => {
    if (submit.disabled) {
      event.preventDefault();
      return;
    }
    submit.disabled = true;
  });
  // Coming back to the page (the browser's back button) finds the form usable again.
  window.addEventListener('pageshow', () => {
    submit.disabled = false;
  });
}
