/**
 * Shows a question only where it applies: an attendee question in the rows whose ticket is one of its
 * `data-tiers`, and any question whose `data-show-if` question is answered with `data-show-if-equals` (a yes/no
 * as "yes"/"no", a choice exactly (radios or a select), a multichoice when one ticked option is it). A hidden question's inputs are
 * disabled, so the browser does not send them. Without script every question is shown and the server drops the
 * answers whose showIf is not met (QUESTIONS-CONTRACT).
 *
 * A showIf names a question of the same attendee row first, else a registration-wide one; a question whose
 * trigger is hidden is hidden too.
 */

const rowOf = (element: Element) => element.closest<HTMLElement>('.attendee');

/** The values a question's enabled fields hold now: the ticked options, or the text typed. */
function answerOf(question: HTMLElement): string[] {
  const fields = Array.from(question.querySelectorAll<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>('input, textarea, select'));
  return fields
    .filter((field) => !field.disabled && (!(field instanceof HTMLInputElement) || !['radio', 'checkbox'].includes(field.type) || field.checked))
    .map((field) => field.value.trim())
    .filter((value) => value !== '');
}

function findTrigger(root: HTMLElement, question: HTMLElement, id: string): HTMLElement | undefined {
  const row = rowOf(question);
  const inRow = row?.querySelector<HTMLElement>(`.question[data-question="${CSS.escape(id)}"]`);
  if (inRow) return inRow;
  return Array.from(root.querySelectorAll<HTMLElement>(`.question[data-question="${CSS.escape(id)}"]`)).find((candidate) => !rowOf(candidate));
}

function tierAllowed(question: HTMLElement): boolean {
  const tiers = question.getAttribute('data-tiers');
  if (!tiers) return true;
  const tier = rowOf(question)?.querySelector<HTMLSelectElement>('select[name="attendee_tier"]')?.value;
  return tier !== undefined && tiers.split(' ').includes(tier);
}

function setShown(question: HTMLElement, shown: boolean): boolean {
  if (question.hidden === !shown) return false;
  question.hidden = !shown;
  question.querySelectorAll<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>('input, textarea, select').forEach((field) => {
    field.disabled = !shown;
  });
  return true;
}

/** Shows and hides the questions under `root` as the answers and tickets now stand; call again after any change. */
export function applyQuestionVisibility(root: HTMLElement): void {
  const questions = Array.from(root.querySelectorAll<HTMLElement>('.question'));
  // A showIf may name a question further down, or a chain of them: settle until nothing changes.
  for (let pass = 0; pass <= questions.length; pass++) {
    let changed = false;
    for (const question of questions) {
      const trigger = question.getAttribute('data-show-if');
      let shown = tierAllowed(question);
      if (shown && trigger) {
        const source = findTrigger(root, question, trigger);
        shown = source !== undefined && !source.hidden && answerOf(source).includes(question.getAttribute('data-show-if-equals') ?? '');
      }
      changed = setShown(question, shown) || changed;
    }
    if (!changed) return;
  }
}

export function enhanceQuestions(root: HTMLElement): () => void {
  const refresh = () => applyQuestionVisibility(root);
  root.addEventListener('input', refresh);
  root.addEventListener('change', refresh);
  refresh();
  return refresh;
}
