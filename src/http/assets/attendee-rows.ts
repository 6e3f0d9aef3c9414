/**
 * The attendee rows with script. Without it the form is complete: the server renders every row the
 * registration may name, blank ones ignored. With it the form starts with one row (the blank rows past
 * data-initial go), "Add another person" adds a row up to data-max, and each row's "Remove" button takes it
 * away; the rows after it are numbered again (labels, ids, messages and the summary's links with them), so
 * what is posted and what the page says stay in step. The first row takes the contact's name as it is
 * typed, until its own name is changed by hand.
 */

const ROW_ID = /^attendee-(name|tier)-\d+/;
/** A question's field in row n: id `q-<n>-<question>`, name `q.<n - 1>.<question>` (QUESTIONS-CONTRACT). */
const QUESTION_ID = /^q-\d+-/;
const QUESTION_NAME = /^q\.\d+\./;

/** An add-on's control in row n: id `addon-<n>-<addon>`, name `addon.<n - 1>.<addon>` (addon-view.ts). */
const ADDON_ID = /^addon-\d+-/;
const ADDON_NAME = /^addon\.\d+\./;

const renamed = (id: string, n: number) => id.replace(ROW_ID, `attendee-$1-${n}`).replace(QUESTION_ID, `q-${n}-`).replace(ADDON_ID, `addon-${n}-`);
const retitled = (text: string, n: number) => text.replace(/^Attendee \d+/, `Attendee ${n}`);

export function enhanceAttendeeRows(form: HTMLFormElement, changed: () => void): void {
  const button = form.querySelector<HTMLButtonElement>('#add-attendee');
  const list = form.querySelector<HTMLElement>('#attendees');
  if (!button || !list) return;
  const max = Number(button.getAttribute('data-max'));
  const initial = Number(button.getAttribute('data-initial'));
  const status = list.querySelector<HTMLElement>('#attendee-status');
  const rows = () => Array.from(list.querySelectorAll<HTMLElement>('.attendee'));
  const nameOf = (row: HTMLElement) => row.querySelector('input') as HTMLInputElement;

  // The blank rows past the first few go; "Add another person" brings them back one at a time.
  const all = rows();
  for (let i = all.length - 1; i >= initial && nameOf(all[i] as HTMLElement).value.trim() === ''; i--) (all[i] as HTMLElement).remove();

  /** Everything in a row that says its number, said again as row n. */
  const number = (row: HTMLElement, n: number) => {
    row.querySelectorAll('label').forEach((label) => {
      label.htmlFor = renamed(label.htmlFor, n);
      if (ROW_ID.test(label.htmlFor)) label.textContent = `Attendee ${n}${label.htmlFor.startsWith('attendee-name') ? ' name' : ' ticket'}`;
    });
    row.querySelectorAll<HTMLElement>('.row-label').forEach((label) => {
      label.textContent = `Attendee ${n}: `;
    });
    row.querySelectorAll<HTMLElement>('.addon-legend').forEach((legend) => {
      legend.textContent = retitled(legend.textContent ?? '', n);
    });
    row.querySelectorAll<HTMLElement>('.question-help, .addon-hint, fieldset').forEach((element) => {
      if (element.id) element.id = renamed(element.id, n);
      const described = element.getAttribute('aria-describedby');
      if (described) element.setAttribute('aria-describedby', described.split(' ').map((id) => renamed(id, n)).join(' '));
    });
    row.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>('input, select, textarea').forEach((field) => {
      field.id = renamed(field.id, n);
      field.name = field.name.replace(QUESTION_NAME, `q.${n - 1}.`).replace(ADDON_NAME, `addon.${n - 1}.`);
      const described = field.getAttribute('aria-describedby');
      if (described) field.setAttribute('aria-describedby', described.split(' ').map((id) => renamed(id, n)).join(' '));
    });
    row.querySelectorAll<HTMLElement>('.field-error').forEach((message) => {
      message.id = renamed(message.id, n);
      message.textContent = retitled(message.textContent ?? '', n);
    });
    row.querySelector('.remove-attendee')?.setAttribute('aria-label', `Remove attendee ${n}`);
  };

  /** The summary at the top: the removed row's lines go, the later rows' lines follow their rows. */
  const summaryWithout = (position: number) => {
    const summary = document.querySelector('.errors');
    if (!summary) return;
    summary.querySelectorAll('li[data-field]').forEach((line) => {
      const field = line.getAttribute('data-field') ?? '';
      const match = /^attendees\[(\d+)\]/.exec(field) ?? /^q\.(\d+)\./.exec(field);
      if (!match) return;
      const index = Number(match[1]);
      if (index + 1 === position) {
        line.remove();
        return;
      }
      if (index + 1 < position) return;
      line.setAttribute('data-field', field.replace(/^attendees\[\d+\]/, `attendees[${index - 1}]`).replace(QUESTION_NAME, `q.${index - 1}.`));
      const link = line.querySelector('a');
      if (link) link.setAttribute('href', `#${renamed((link.getAttribute('href') ?? '#').slice(1), index)}`);
      const target = link ?? line;
      target.textContent = retitled(target.textContent ?? '', index);
    });
    if (!summary.querySelector('li')) summary.remove();
  };

  /** The problem with the attendees as a whole describes the first row's name, whichever row that now is. */
  const describeFirstRow = () => {
    const first = rows()[0];
    if (!document.getElementById('attendees-error') || !first) return;
    const field = nameOf(first);
    const ids = (field.getAttribute('aria-describedby') ?? '').split(' ').filter(Boolean);
    if (!ids.includes('attendees-error')) field.setAttribute('aria-describedby', ['attendees-error', ...ids].join(' '));
  };

  const update = () => {
    const count = rows().length;
    button.hidden = count >= max;
    list.querySelectorAll<HTMLElement>('.remove-attendee').forEach((remove) => {
      remove.hidden = count <= 1;
    });
    changed();
  };

  button.addEventListener('click', () => {
    const current = rows();
    const last = current[current.length - 1];
    if (current.length >= max || !last) return;
    const row = last.cloneNode(true) as HTMLElement;
    // A new row starts clean: no copy of the last row's message or its marks.
    row.querySelectorAll('.field-error').forEach((message) => message.remove());
    row.querySelectorAll('input, select, textarea, fieldset').forEach((field) => {
      field.removeAttribute('aria-invalid');
      field.removeAttribute('autofocus');
      // A question keeps its help text, an add-on its price; nothing else describes a new row's field.
      const help = (field.getAttribute('aria-describedby') ?? '').split(' ').filter((id) => id.endsWith('-help') || id.endsWith('-hint'));
      if (help.length > 0) field.setAttribute('aria-describedby', help.join(' '));
      else field.removeAttribute('aria-describedby');
    });
    clearAnswers(row);
    number(row, current.length + 1);
    nameOf(row).value = '';
    (row.querySelector('select') as HTMLSelectElement).selectedIndex = 0;
    list.insertBefore(row, status);
    update();
    nameOf(row).focus();
  });

  list.addEventListener('click', (event) => {
    const remove = event.target instanceof Element ? event.target.closest('.remove-attendee') : null;
    if (!remove) return;
    const current = rows();
    const row = remove.closest<HTMLElement>('.attendee');
    if (current.length <= 1 || !row) return;
    const position = current.indexOf(row) + 1;
    const name = nameOf(row).value.trim();
    row.remove();
    summaryWithout(position);
    rows().forEach((later, index) => number(later, index + 1));
    describeFirstRow();
    update();
    const left = rows();
    const next = left[Math.min(position, left.length) - 1];
    if (next) nameOf(next).focus();
    if (status) status.textContent = `Removed attendee ${position}${name ? ` (${name})` : ''}.`;
  });

  prefillFirstRow(form, rows, nameOf, changed);
  update();
}

/**
 * The first attendee is most often the person registering: their name follows the contact's name while the
 * row's name is empty or still what was copied into it. A name typed into the row itself is left alone.
 */
function prefillFirstRow(
  form: HTMLFormElement,
  rows: () => HTMLElement[],
  nameOf: (row: HTMLElement) => HTMLInputElement,
  changed: () => void,
): void {
  const contact = form.querySelector<HTMLInputElement>('#name');
  if (!contact) return;
  let copied = contact.value;
  contact.addEventListener('input', () => {
    const first = rows()[0];
    if (!first) return;
    const field = nameOf(first);
    if (field.value === '' || field.value === copied) {
      field.value = contact.value;
      changed();
    }
    copied = contact.value;
  });
}

/** A new row's questions start unanswered and its add-ons unchosen (the row it was copied from may have them). */
function clearAnswers(row: HTMLElement): void {
  row.querySelectorAll<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>('.question input, .question textarea, .question select, .attendee-addons input, .attendee-addons select').forEach((field) => {
    if (field instanceof HTMLInputElement && (field.type === 'radio' || field.type === 'checkbox')) field.checked = false;
    else if (field instanceof HTMLSelectElement) field.selectedIndex = 0;
    else field.value = '';
  });
}
