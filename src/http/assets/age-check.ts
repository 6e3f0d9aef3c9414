/**
 * A date of birth checked as soon as it is typed (input, change, leaving the field), by the server's own rule and
 * in its words (registrations/age-limit.ts, bundled here): "Date of birth: Child tickets are for ages 5 to 12 on
 * the first day of the event, and Sam will be 3". The server still checks every post. The message goes under the
 * field, where the server puts its own, and describes the field; it goes once the date fits. Checked only once the
 * row has a name, as the server checks only named rows (and says the name).
 */
import { dateOfBirthProblem } from '../../registrations/age-limit.js';
import type { AgeLimitsConfig } from '../live-total-config.js';

const DATE_OF_BIRTH = /^q\.\d+\.dateOfBirth$/;

function describedBy(field: HTMLElement, id: string, on: boolean): void {
  const ids = (field.getAttribute('aria-describedby') ?? '').split(' ').filter((other) => other !== '' && other !== id);
  if (on) ids.push(id);
  if (ids.length > 0) field.setAttribute('aria-describedby', ids.join(' '));
  else field.removeAttribute('aria-describedby');
}

/** Says `message` under the field (or takes away what was said); a message the server wrote stays unless the date changed. */
function say(field: HTMLInputElement, message: string | undefined, dateTyped: boolean): void {
  const id = `${field.id}-error`;
  let shown = document.getElementById(id);
  if (!message) {
    if (shown && (dateTyped || shown.hasAttribute('data-live'))) {
      shown.remove();
      field.removeAttribute('aria-invalid');
      describedBy(field, id, false);
    }
    return;
  }
  if (!shown) {
    shown = document.createElement('p');
    shown.className = 'error field-error';
    shown.id = id;
    field.insertAdjacentElement('afterend', shown);
  }
  shown.setAttribute('data-live', '');
  if (shown.textContent !== message) shown.textContent = message;
  field.setAttribute('aria-invalid', 'true');
  describedBy(field, id, true);
}

function check(config: AgeLimitsConfig, field: HTMLInputElement): void {
  const row = field.closest<HTMLElement>('.attendee');
  const name = row?.querySelector<HTMLInputElement>('input[name="attendee_name"]')?.value.trim() ?? '';
  const tier = row?.querySelector<HTMLSelectElement>('select[name="attendee_tier"]')?.value ?? '';
  const typed = field.value.trim();
  const asked = !field.disabled && typed !== '' && name !== '';
  const problem = asked ? dateOfBirthProblem(config.tiers[tier], typed, config.firstDay, name) : undefined;
  say(field, problem ? `${config.label}: ${problem}` : undefined, asked);
}

/** Checks the form's dates of birth as they are typed; the function returned checks them all again (rows added or removed). */
export function checkAgesLive(form: HTMLFormElement): () => void {
  const raw = form.getAttribute('data-age-limits');
  if (!raw) return () => {};
  const config = JSON.parse(raw) as AgeLimitsConfig;
  const fields = () => Array.from(form.querySelectorAll<HTMLInputElement>('input')).filter((field) => DATE_OF_BIRTH.test(field.name));
  const checkRowOf = (target: EventTarget | null) => {
    if (!(target instanceof HTMLElement)) return;
    const row = target.closest<HTMLElement>('.attendee');
    // A name or ticket changed: the row's date of birth is judged again (the message names the person and the ticket).
    fields()
      .filter((field) => field === target || (row !== null && field.closest('.attendee') === row))
      .forEach((field) => check(config, field));
  };
  for (const type of ['input', 'change', 'focusout']) form.addEventListener(type, (event) => checkRowOf(event.target));
  const all = () => fields().forEach((field) => check(config, field));
  all();
  return all;
}
