/**
 * The event page's script, bundled for the browser by scripts/bundle-browser.mjs and served from
 * /assets/ (same origin, so the Content-Security-Policy allows it with no inline code). The form works
 * without it; with it the form starts with one attendee row and shows a live total priced by the
 * server's own priceRegistration, asks each question only where it applies (question-visibility.ts), checks a
 * date of birth by the server's age rule as it is typed (age-check.ts), and offers the waiting list once more
 * people are named than there are places left (waitlist-offer.ts).
 */
import { checkAgesLive } from './age-check.js';
import { enhanceAttendeeRows } from './attendee-rows.js';
import { showLiveTotal } from './live-total.js';
import { enhanceQuestions } from './question-visibility.js';
import { submitOnce } from './submit-once.js';
import { offerWaitlistPastPlacesLeft } from './waitlist-offer.js';

const form = document.querySelector<HTMLFormElement>('#registration-form');
if (form) {
  submitOnce(form);
  const total = showLiveTotal(form);
  form.addEventListener('input', total.refresh);
  form.addEventListener('change', total.refresh);
  const questions = enhanceQuestions(form);
  const ages = checkAgesLive(form);
  const waitlist = offerWaitlistPastPlacesLeft(form);
  // A row added or removed, or a ticket changed: its questions follow it.
  enhanceAttendeeRows(form, () => {
    questions();
    ages();
    total.refresh();
    waitlist();
  });
}
