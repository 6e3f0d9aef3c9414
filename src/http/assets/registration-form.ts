/**
 * The event page's script, bundled for the browser by scripts/bundle-browser.mjs and served from
 * /assets/ (same origin, so the Content-Security-Policy allows it with no inline code). The form works
 * without it; with it the form starts with one attendee row and shows a live total priced by the
 * server's own priceRegistration.
 */
import { enhanceAttendeeRows } from './attendee-rows.js';
import { showLiveTotal } from './live-total.js';
import { submitOnce } from './submit-once.js';

const form = document.querySelector<HTMLFormElement>('#registration-form');
if (form) {
  submitOnce(form);
  const total = showLiveTotal(form);
  form.addEventListener('input', total.refresh);
  form.addEventListener('change', total.refresh);
  enhanceAttendeeRows(form, total.refresh);
}
