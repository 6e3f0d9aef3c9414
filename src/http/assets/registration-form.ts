/**
 * The event page's script, bundled for the browser by scripts/bundle-browser.mjs and served from
 * /assets/ (same origin, so the Content-Security-Policy allows it with no inline code). The form works
 * without it; with it the form starts with one attendee row and shows a live total priced by the
 * server's own priceRegistration, and asks each question only where it applies (question-visibility.ts).
 */
import { enhanceAttendeeRows } from './attendee-rows.js';
import { showLiveTotal } from './live-total.js';
import { enhanceQuestions } from './question-visibility.js';
import { submitOnce } from './submit-once.js';

const form = document.querySelector<HTMLFormElement>('#registration-form');
if (form) {
  submitOnce(form);
  const total = showLiveTotal(form);
  form.addEventListener('input', total.refresh);
  form.addEventListener('change', total.refresh);
  const questions = enhanceQuestions(form);
  // A row added or removed, or a ticket changed: its questions follow it.
  enhanceAttendeeRows(form, () => {
    questions();
    total.refresh();
  });
}
