import type { PayPlanOption } from '../pay-plan-view.js';
import { definePage } from '../pages.js';
import { QUESTION_FIELD, QUESTION_STYLES, type QuestionFieldView } from './question-fields.js';
import { ADDON_CONTROL, type AddonControlView, type AddonFormViews } from '../addon-view.js';

export interface FieldProblem {
  /** The form field, e.g. "email" or "attendees[2].tier". */
  field: string;
  /** Who reads it: "Email: enter a valid email address". */
  message: string;
}

export interface AttendeeRowView {
  number: number;
  name: string;
  nameError?: string;
  /** Ids of the messages that describe the name field (its own, and the attendees' problem on row 1). */
  nameDescribedBy?: string;
  nameFocus?: boolean;
  tierError?: string;
  tierFocus?: boolean;
  options: Array<{ id: string; label: string; selected: boolean }>;
  /** The event's attendee questions for this row (the script shows only those for the row's ticket). */
  questions: QuestionFieldView[];
  /** The per-attendee add-ons of this row. */
  addons?: AddonFormViews['rows'][number];
}

export interface FieldErrorView {
  error?: string;
  focus?: boolean;
}

export interface EventPageData {
  eventTitle: string;
  when: string;
  location?: string;
  description?: string;
  tiers: Array<{ label: string; price: string }>;
  /** "38 places left", "Only 3 places left" when few are (places-words.ts); absent when the event has no capacity limit. */
  seatsLine?: string;
  /** Above the attendee rows, once: how many people this registration may name (none when claiming an offer, whose note says it). */
  limitNote?: { text: string; strong: boolean };
  soldOut: boolean;
  /** The event has started: the public form is closed. */
  registrationClosed: boolean;
  /** Beside the household box: what the family waiver takes off. */
  familyNote?: string;
  discountNote?: string;
  /** Every ticket is free: no payment choice, the form says so instead. */
  nothingToPay: boolean;
  /** A neutral notice at the top, e.g. after a cancelled card checkout. */
  notice?: string;
  /** A problem with the whole submission (captcha, no longer fits, closed): above the form, or instead of the closed or sold-out line. */
  formError?: string;
  /** The summary at the top; href names the field, which also shows its message beside it. */
  errors?: Array<FieldProblem & { href?: string }>;
  /** Each field's message, shown under it and tied to it (aria-describedby); focus: the first one with a problem. */
  fields?: Record<'name' | 'email' | 'mobile' | 'family', FieldErrorView> & Record<'attendees' | 'payment', { error?: string }>;
  action: string;
  values: { name: string; email: string; mobile: string; family: boolean; help?: boolean };
  /** The event offers "We would like to talk about help with the cost" (its file's helpWithCost). */
  helpWithCost: boolean;
  familyWaiver: boolean;
  /** The household box is offered: the event has a family waiver or a family maximum (each applies only to one household). */
  household: boolean;
  /** The event's questions asked once per registration. */
  registrationQuestions: QuestionFieldView[];
  /** The per-registration add-ons, and their problem. */
  registrationAddons?: AddonControlView[];
  registrationAddonsError?: string;
  paymentOptions: Array<{ value: 'card' | 'bank'; label: string; hint: string; checked: boolean; focus?: boolean }>;
  /** On an event with a deposit: the whole amount, the deposit, or the deposit and instalments (pay-plan-view.ts). */
  payPlanOptions?: PayPlanOption[];
  attendeeRows: AttendeeRowView[];
  /** The most rows the form offers: the event's maxAttendeesPerRegistration, or the places left when fewer and there is no waiting list. */
  maxAttendees: number;
  /** The places left, when the family may name more people than that and is then offered the waiting list (the script's cue). */
  placesLeft?: number;
  /** A waiting-list offer's places priced by the server, shown in the total box at once (the script then prices the rows as named). */
  offerTotal?: { heading: string; amount: string; minor: number; detail?: string };
  /** The date-of-birth rule for the script (AgeLimitsConfig as JSON), when a tier has an age limit. */
  ageLimits?: string;
  /** The rows the page's script keeps at first: it removes the blank rows past them (every row is there without script). */
  initialRows: number;
  captchaSiteKey?: string;
  /** Once per page, for the bot check of whichever form it shows (registration, waiting list or both). */
  captchaScript?: boolean;
  /** The event's prices for the script's live total (LiveTotalConfig as JSON). */
  livePricing: string;
  /** The page's script (src/http/assets/), when built. */
  formScript?: string;
  /**
   * The join-the-waiting-list form, when fewer places are left than one registration may name (its bot check as the
   * form's). Hidden unless `shown` (sold out, given back, or a registration asked for more than is left); `offered`: a
   * registration just asked for more places than are left, and the form's top links to it.
   */
  waitlist?: {
    action: string;
    intro: string;
    maxPlaces: number;
    shown: boolean;
    offered: boolean;
    error?: string;
    values: { name: string; email: string; mobile: string; places: string };
    /** The ticket type waited for, when a type with places of its own is full: any, or one of those. */
    tiers?: Array<{ id: string; label: string; selected: boolean }>;
  };
  /** A waiting-list offer being claimed: its token travels with the form post. */
  offer?: { token: string; note: string };
  /** "Have a code?": a small form of its own (GET, so nothing typed above is sent); a code applied travels with the registration. */
  /** "Have a code?": only for an event with a code a family could still use, or a code already typed. */
  codeForm?: { action: string; value: string; applied?: string; note?: string; error?: string };
}

const JOIN_WAITLIST = `
  <section id="waitlist" aria-labelledby="waitlist-heading"{{#unless waitlist.shown}} hidden{{/unless}}>
  <h2 id="waitlist-heading" tabindex="-1">Join the waiting list</h2>
  <p>{{waitlist.intro}}</p>
  {{#if waitlist.error}}<p class="error" role="alert" id="waitlist-error">{{waitlist.error}}</p>{{/if}}
  <form method="post" action="{{waitlist.action}}" id="waitlist-form">
    <label for="waitlist-name">Your name</label>
    <input id="waitlist-name" name="name" value="{{waitlist.values.name}}" autocomplete="name" required maxlength="80">
    <label for="waitlist-email">Email</label>
    <input id="waitlist-email" name="email" type="email" value="{{waitlist.values.email}}" autocomplete="email" required maxlength="254">
    <label for="waitlist-mobile">Mobile <span class="optional">(optional)</span></label>
    <input id="waitlist-mobile" name="mobile" type="tel" value="{{waitlist.values.mobile}}" autocomplete="tel" maxlength="40">
    <label for="waitlist-places">Places wanted</label>
    <input id="waitlist-places" name="places" type="number" min="1" max="{{waitlist.maxPlaces}}" value="{{waitlist.values.places}}" required>
    {{#if waitlist.tiers}}<label for="waitlist-tier">Ticket</label>
    <select id="waitlist-tier" name="tier">{{#each waitlist.tiers}}<option value="{{id}}"{{#if selected}} selected{{/if}}>{{label}}</option>{{/each}}</select>{{/if}}
    {{#if captchaSiteKey}}<div class="cf-turnstile" data-sitekey="{{captchaSiteKey}}"></div>{{/if}}
    <button type="submit" id="join-waitlist">Join the waiting list</button>
  </form>
  </section>`;

export const eventPage = definePage<EventPageData>(`
<style>
  /* "Have a code?" is a control a finger taps: as tall as a button. */
  #code-details > summary { display: flex; align-items: center; min-height: 44px; cursor: pointer; }
  h2 { font-size: 1.15rem; margin: 0 0 8px; }
  /* Tighter than the browser's 1em around each paragraph: on a phone every line of margin is scrolling. */
  .card p { margin: 6px 0; }
  .card label { margin-top: 10px; }
  /* An option row is 44 px tall already: no margin between rows. */
  .card .choice { margin: 0; }
  .card > h2:not(:first-child) { margin-top: 16px; }
  /* A choice with a hint under its label (payment, household): the box sits by the first line. */
  .card .hinted-choice { align-items: flex-start; margin: 4px 0; }
  .hinted-choice input { margin-top: 2px; }
  fieldset { border: 0; padding: 0; margin: 16px 0 0; }
  legend { font-weight: 600; padding: 0; }
  .attendee { display: grid; grid-template-columns: minmax(0, 1fr); gap: 0 12px; border-top: 1px solid #e4e4e7; padding-top: 4px; margin-top: 8px; }
  /* Name and ticket side by side only past a phone's width (481 px up): on a phone a long ticket label
     ("Child (4-12) ($10.00)") would leave the name a sliver, so they stack. The ticket takes at most 16rem. */
  @media (min-width: 481px) { .attendee { grid-template-columns: minmax(0, 1fr) minmax(0, max-content); } .attendee select { max-width: 16rem; } }
  #add-attendee { margin-top: 10px; }
  #over-places .notice { margin: 10px 0 0; }
  /* Under the registration form, the waiting list is a section of its own. */
  #registration-form ~ #waitlist { margin-top: 24px; padding-top: 16px; border-top: 2px solid #e4e4e7; }
  .tiers { list-style: none; padding: 0; margin: 4px 0 8px; }
  .tiers li { display: flex; justify-content: space-between; gap: 12px; border-bottom: 1px solid #e4e4e7; padding: 4px 0; }
  /* A ticket's name is never broken inside a word by a long price schedule beside it. */
  .tiers li > span:first-child { flex: 0 0 auto; max-width: 50%; overflow-wrap: normal; }
  .tiers li > span:last-child { text-align: right; }
  .description { white-space: pre-line; }
  .notice { background: #fef9c3; border-radius: 6px; padding: 10px 12px; }
  .errors { border: 2px solid #b91c1c; border-radius: 6px; padding: 10px 12px; }
  .errors ul { margin: 4px 0; padding-left: 20px; }
  .errors a { display: inline-flex; align-items: center; min-height: 44px; }
  .optional { font-weight: 400; color: #71717a; }
  .field-error { margin: 4px 0 0; }
  [aria-invalid="true"] { border: 2px solid #b91c1c; }
  .remove-attendee { grid-column: 1 / -1; justify-self: start; margin-top: 6px; padding: 8px 16px; background: #fff; color: #b91c1c; border: 1px solid #d4d4d8; }
  .remove-attendee:hover { background: #fef2f2; }
  /* The total beside the Register button, as a phone's checkout shows it. */
  .submit-bar { display: flex; align-items: flex-start; gap: 12px; border-top: 2px solid #e4e4e7; margin-top: 16px; padding-top: 12px; }
  .submit-bar #register { margin: 0 0 0 auto; flex: none; }
  .live-total { flex: 1; min-width: 0; }
  .live-total p { margin: 0; }
  #live-total-amount { display: block; font-size: 1.25rem; }
  .attendee-questions { grid-column: 1 / -1; }
  .attendee-addons { grid-column: 1 / -1; margin-top: 10px; }
  ${QUESTION_STYLES}
  .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
</style>
{{#if notice}}<p class="notice" role="status">{{notice}}</p>{{/if}}
<div class="card">
  <h1><bdi>{{eventTitle}}</bdi></h1>
  <p><strong>When:</strong> {{when}}</p>
  {{#if location}}<p><strong>Where:</strong> {{location}}</p>{{/if}}
  {{#if description}}<p class="description">{{description}}</p>{{/if}}
  <h2>Tickets</h2>
  <ul class="tiers">
    {{#each tiers}}<li><span>{{label}}</span><span>{{price}}</span></li>{{/each}}
  </ul>
  {{#if discountNote}}<p>{{discountNote}}</p>{{/if}}
  {{#if seatsLine}}<p><strong>{{seatsLine}}</strong></p>{{/if}}
</div>
<div class="card">
{{#if registrationClosed}}
  <h2>Registration closed</h2>
  {{#if formError}}<p class="error" role="alert">{{formError}}</p>{{else}}<p>Registration closed when the event started.</p>{{/if}}
{{else if soldOut}}
  <h2>Sold out</h2>
  {{#if formError}}<p class="error" role="alert">{{formError}}</p>{{else}}<p>Every place for this event is taken.</p>{{/if}}
  {{#if waitlist}}${JOIN_WAITLIST}{{/if}}
{{else}}
  <h2>Register</h2>
  {{#if offer}}<p class="notice" role="status" id="offer-note">{{offer.note}}</p>{{/if}}
  {{#if formError}}<p class="error" role="alert" id="form-error" tabindex="-1" autofocus>{{formError}}</p>{{/if}}
  {{#if errors}}
  <div class="errors" role="alert">
    <p class="error"><strong>Please check these fields:</strong></p>
    <ul>{{#each errors}}<li class="error" data-field="{{field}}">{{#if href}}<a class="error" href="{{href}}">{{message}}</a>{{else}}{{message}}{{/if}}</li>{{/each}}</ul>
  </div>
  {{/if}}
  {{#if waitlist.offered}}<p><a class="button outline" id="to-waitlist" href="#waitlist-heading">Join the waiting list instead</a></p>{{/if}}
  {{#if codeForm}}
  <details id="code-details"{{#if codeForm.value}} open{{/if}}><summary>Have a code?</summary>
  <form id="code-form" method="get" action="{{codeForm.action}}">
    {{#if offer}}<input type="hidden" name="offer" value="{{offer.token}}">{{/if}}
    <label for="code">Code</label>
    <input id="code" name="code" value="{{codeForm.value}}" maxlength="40" autocomplete="off" autocapitalize="characters"{{#if codeForm.error}} aria-invalid="true" aria-describedby="code-error"{{/if}}>
    {{#if codeForm.error}}<p class="error field-error" id="code-error">{{codeForm.error}}</p>{{/if}}
    {{#if codeForm.note}}<p class="notice" role="status" id="code-note">{{codeForm.note}}</p>{{/if}}
    <button type="submit" id="apply-code">Apply code</button>
  </form>
  </details>
  {{/if}}
  <form id="registration-form" method="post" action="{{action}}"{{#if ageLimits}} data-age-limits="{{ageLimits}}"{{/if}}>
    {{#if offer}}<input type="hidden" name="offer" value="{{offer.token}}">{{/if}}
    {{#if codeForm.applied}}<input type="hidden" name="code" value="{{codeForm.applied}}">{{/if}}
    <label for="name">Your name</label>
    <input id="name" name="name" value="{{values.name}}" autocomplete="name" required maxlength="80"{{#if fields.name.error}} aria-invalid="true" aria-describedby="name-error"{{/if}}{{#if fields.name.focus}} autofocus{{/if}}>
    {{#if fields.name.error}}<p class="error field-error" id="name-error">{{fields.name.error}}</p>{{/if}}
    <label for="email">Email</label>
    <input id="email" name="email" type="email" value="{{values.email}}" autocomplete="email" required maxlength="254"{{#if fields.email.error}} aria-invalid="true" aria-describedby="email-error"{{/if}}{{#if fields.email.focus}} autofocus{{/if}}>
    {{#if fields.email.error}}<p class="error field-error" id="email-error">{{fields.email.error}}</p>{{/if}}
    <label for="mobile">Mobile <span class="optional">(optional)</span></label>
    <input id="mobile" name="mobile" type="tel" value="{{values.mobile}}" autocomplete="tel" maxlength="40"{{#if fields.mobile.error}} aria-invalid="true" aria-describedby="mobile-error"{{/if}}{{#if fields.mobile.focus}} autofocus{{/if}}>
    {{#if fields.mobile.error}}<p class="error field-error" id="mobile-error">{{fields.mobile.error}}</p>{{/if}}

    <fieldset id="attendees">
      <legend>Who is coming</legend>
      {{#if limitNote}}<p id="attendee-limit"{{#unless limitNote.strong}} class="muted"{{/unless}}>{{#if limitNote.strong}}<strong>{{limitNote.text}}</strong>{{else}}{{limitNote.text}}{{/if}}</p>{{/if}}
      {{#if fields.attendees.error}}<p class="error field-error" id="attendees-error">{{fields.attendees.error}}</p>{{/if}}
      {{#each attendeeRows}}
      <div class="attendee">
        <div>
          <label for="attendee-name-{{number}}">Attendee {{number}} name</label>
          <input id="attendee-name-{{number}}" name="attendee_name" value="{{name}}" maxlength="80"{{#if nameError}} aria-invalid="true"{{/if}}{{#if nameDescribedBy}} aria-describedby="{{nameDescribedBy}}"{{/if}}{{#if nameFocus}} autofocus{{/if}}>
          {{#if nameError}}<p class="error field-error" id="attendee-name-{{number}}-error">{{nameError}}</p>{{/if}}
        </div>
        <div>
          <label for="attendee-tier-{{number}}">Attendee {{number}} ticket</label>
          <select id="attendee-tier-{{number}}" name="attendee_tier"{{#if tierError}} aria-invalid="true" aria-describedby="attendee-tier-{{number}}-error"{{/if}}{{#if tierFocus}} autofocus{{/if}}>
            {{#each options}}<option value="{{id}}"{{#if selected}} selected{{/if}}>{{label}}</option>{{/each}}
          </select>
          {{#if tierError}}<p class="error field-error" id="attendee-tier-{{number}}-error">{{tierError}}</p>{{/if}}
        </div>
        {{#if questions.length}}<div class="attendee-questions">{{#each questions}}${QUESTION_FIELD}{{/each}}</div>{{/if}}
        {{#if addons.controls.length}}<fieldset class="attendee-addons"><legend class="addon-legend">{{addons.legend}}</legend>{{#if addons.error}}<p class="error field-error">{{addons.error}}</p>{{/if}}{{#each addons.controls}}${ADDON_CONTROL}{{/each}}</fieldset>{{/if}}
        <button type="button" class="remove-attendee" aria-label="Remove attendee {{number}}" hidden>Remove</button>
      </div>
      {{/each}}
      <p id="attendee-status" class="visually-hidden" role="status"></p>
      <div id="over-places" role="status"></div>
    </fieldset>
    <button type="button" id="add-attendee" class="outline" data-max="{{maxAttendees}}" data-initial="{{initialRows}}"{{#if placesLeft}} data-places-left="{{placesLeft}}"{{/if}} hidden>Add another person</button>
    {{#if registrationQuestions.length}}<div id="registration-questions">{{#each registrationQuestions}}${QUESTION_FIELD}{{/each}}</div>{{/if}}
    {{#if registrationAddons.length}}<fieldset id="registration-addons"><legend>Extras for the registration</legend>{{#if registrationAddonsError}}<p class="error field-error">{{registrationAddonsError}}</p>{{/if}}{{#each registrationAddons}}${ADDON_CONTROL}{{/each}}</fieldset>{{/if}}

    {{#if household}}
    <label class="choice hinted-choice" for="family"><input id="family" name="family" type="checkbox" value="on"{{#if values.family}} checked{{/if}}{{#if fields.family.error}} aria-invalid="true" aria-describedby="family-error"{{/if}}{{#if fields.family.focus}} autofocus{{/if}}> <span>We are one household{{#if familyWaiver}} (family waiver){{/if}}{{#if familyNote}}<br><span class="muted">{{familyNote}}</span>{{/if}}</span></label>
    {{#if fields.family.error}}<p class="error field-error" id="family-error">{{fields.family.error}}</p>{{/if}}
    {{/if}}

    {{#if nothingToPay}}
    <p id="payment-free"><strong>Free:</strong> nothing to pay.</p>
    {{else}}
    <fieldset>
      <legend>Payment</legend>
      {{#if fields.payment.error}}<p class="error field-error" id="payment-error">{{fields.payment.error}}</p>{{/if}}
      {{#each paymentOptions}}
      <label class="choice hinted-choice" for="payment-{{value}}"><input id="payment-{{value}}" name="payment" type="radio" value="{{value}}"{{#if checked}} checked{{/if}} required{{#if ../fields.payment.error}} aria-invalid="true" aria-describedby="payment-error"{{/if}}{{#if focus}} autofocus{{/if}}> <span>{{label}}<br><span class="muted">{{hint}}</span></span></label>
      {{/each}}
    </fieldset>
    {{#if helpWithCost}}
    <label class="choice hinted-choice" for="help-with-cost"><input id="help-with-cost" name="help_with_cost" type="checkbox" value="on"{{#if values.help}} checked{{/if}}> <span>We would like to talk about help with the cost<br><span class="muted">Nothing is charged now, whichever payment you chose: the office will be in touch, and your places are held until then.</span></span></label>
    {{/if}}
    {{#if payPlanOptions}}
    <fieldset id="pay-plan">
      <legend>How much to pay now</legend>
      {{#each payPlanOptions}}
      <label class="choice hinted-choice" for="pay-plan-{{value}}"><input id="pay-plan-{{value}}" name="pay_plan" type="radio" value="{{value}}"{{#if checked}} checked{{/if}}> <span>{{label}}<br><span class="muted">{{hint}}</span></span></label>
      {{/each}}
    </fieldset>
    {{/if}}
    {{/if}}

    {{#if captchaSiteKey}}
    <div class="cf-turnstile" data-sitekey="{{captchaSiteKey}}"></div>
    {{/if}}
    <div class="submit-bar">
      <div id="live-total" class="live-total" role="status" data-pricing="{{livePricing}}"{{#unless offerTotal}} hidden{{/unless}}>
        <p><span id="live-total-label">{{#if offerTotal}}{{offerTotal.heading}}{{else}}Total{{/if}}</span> <strong id="live-total-amount"{{#if offerTotal}} data-total-minor="{{offerTotal.minor}}"{{/if}}>{{offerTotal.amount}}</strong></p>
        <p class="muted" id="live-total-detail"{{#unless offerTotal.detail}} hidden{{/unless}}>{{offerTotal.detail}}</p>
      </div>
      <button type="submit" id="register">Register</button>
    </div>
  </form>
  {{#if waitlist}}${JOIN_WAITLIST}{{/if}}
  {{! After the waiting list: the script, run as it is read, shows that form when the rows outnumber the places. }}
  {{#if formScript}}<script nonce="{{cspNonce.script}}" src="{{formScript}}"></script>{{/if}}
{{/if}}
{{#if captchaScript}}<script src="https://challenges.cloudflare.com/turnstile/v0/api.js" async defer></script>{{/if}}
</div>`);
