import { definePage } from '../pages.js';
import { BALANCE_SECTION, BANK_DETAILS, BANK_STYLES, LINE_LABEL, type BankInstructionsView, type LineView } from './registration-page.js';
import { QUESTION_FIELD, QUESTION_STYLES } from './question-fields.js';
import type { AnswersFormView, AnswersView } from '../manage-answers-view.js';
import type { BalanceSectionView } from '../balance-view.js';
import type { ExtrasFormView } from '../add-extras-view.js';
import { ADDON_CONTROL } from '../addon-view.js';

export interface ManagePageData {
  eventTitle: string;
  when: string;
  location?: string;
  reference: string;
  statusLabel: string;
  /** Said at the top after a change: from a fixed list, never from the address. */
  notice?: string;
  /** A change refused as a whole (closed, cancelled, a field problem). */
  formError?: string;
  attendees: Array<{ name: string; tier: string }>;
  lines: LineView[];
  total: string;
  /** Nothing to pay and nothing paid: no "Nothing has been paid yet". */
  free: boolean;
  /** What came in, each payment: "Bank transfer", "$60.00", "12 Nov 2026". */
  payments: Array<{ how: string; amount: string; when: string }>;
  paid: string;
  /** Help with the cost from named funds standing on the registration: "Help from Camp scholarships". */
  help: Array<{ fund: string; amount: string }>;
  refunded?: string;
  owing?: string;
  heldUntil?: string;
  /** While a bank transfer is owed: the bank details, the amount and the reference. */
  bank?: BankInstructionsView;
  payNowHref?: string;
  /** Paying in parts: the registration page's balance section (balance-view.ts), its pay form standing for payNowHref. */
  balance?: BalanceSectionView;
  /** While extras may be added: the "Add extras" form (add-extras-view.ts). */
  extras?: ExtrasFormView;
  /** The contact details as stored, shown to read. */
  contact: { name: string; email: string; mobile: string };
  /** Present while the registrant may change details (before changesCloseAt, not cancelled). */
  details?: {
    action: string;
    closesAt: string;
    /** What was wrong with a refused post, by the form it came from: that form is shown open again. */
    contactErrors: Array<{ field: string; message: string }>;
    attendeeErrors: Array<{ field: string; message: string }>;
    values: { name: string; email: string; mobile: string; attendees: Array<{ name: string; tier: string; number: number }> };
    /** What the page first showed: a field posted unchanged from it keeps what is stored when it is saved. */
    was: { name: string; email: string; mobile: string; attendeeNames: string[] };
    errors: Array<{ field: string; message: string }>;
  };
  /** The family's answers to the event's questions, when it asks any. */
  answers?: AnswersView;
  /** Present while the answers may be corrected; `open` after a refused post. */
  answersForm?: AnswersFormView & { action: string; open: boolean; errors: Array<{ field: string; message: string }> };
  /** Why details cannot be changed here any more, when they cannot. */
  changesClosedNote?: string;
  cancelHref?: string;
  askOfficeAction?: string;
}

/**
 * Each section (payment, attendees, contact details, answers, cancelling) is shown once, to read; its form is folded
 * away under a "Change" control (<details>, so it opens without script) and is open only when a post of it was
 * refused. Every control is at least 44×44 px, for a finger on a phone.
 */
const MANAGE_STYLES = `
  h2 { font-size: 1.15rem; margin: 0 0 8px; }
  h3 { font-size: 1rem; margin: 12px 0 2px; }
  .lines { list-style: none; padding: 0; margin: 8px 0; }
  .lines li { display: flex; justify-content: space-between; gap: 12px; border-bottom: 1px solid #e4e4e7; padding: 6px 0; }
  .lines li.total { font-weight: 700; border-bottom: 0; }
  .notice { padding: 8px 12px; background: #ecfdf5; border-radius: 4px; }
  .event { margin: 0 0 8px; }
  .status { margin: 0; }
  .plain { list-style: none; padding: 0; margin: 0; }
  .plain li { padding: 2px 0; }
  dl.pairs { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 2px 12px; margin: 0; }
  dl.pairs dt { font-weight: 600; }
  dl.pairs dd { margin: 0; }
  .answers { margin: 0; }
  .answers dt { font-weight: 600; margin-top: 6px; }
  .answers dd { margin: 0; white-space: pre-line; }
  #bank-instructions h3 { margin-top: 16px; }
  ${BANK_STYLES}
  .card { margin-bottom: 12px; }
  section.card { position: relative; }
  section.card > h2 { min-height: 28px; padding-right: 104px; }
  /* The "Change" control sits on its section's heading row; its form opens below what it changes, which it then replaces. */
  details.change > summary { position: absolute; top: 8px; right: 12px; display: inline-flex; align-items: center; justify-content: center; min-height: 44px; min-width: 44px; padding: 0 18px; border: 1px solid #71717a; border-radius: 6px; background: #fff; color: #18181b; font-weight: 600; cursor: pointer; list-style: none; }
  details.change > summary::-webkit-details-marker { display: none; }
  details.change[open] > summary { background: #f4f4f5; }
  details.change > summary:focus-visible { outline: 3px solid #18181b; outline-offset: 2px; }
  section.card:has(details.change[open]) .shown { display: none; }
  input, select, textarea { min-height: 44px; }
  button, .button { min-height: 44px; min-width: 44px; }
  button.secondary, .button.secondary { background: #52525b; }
  .actions { display: flex; flex-wrap: wrap; gap: 0 12px; align-items: center; }
  fieldset.attendee-answers { border: 0; border-top: 1px solid #e4e4e7; padding: 8px 0 0; margin: 16px 0 0; }
  fieldset.attendee-answers > legend { font-weight: 700; padding: 0; }
  .choice { display: flex; gap: 10px; font-weight: 400; }
  .choice input { width: auto; flex: none; min-height: 0; }
  .question-group { border: 0; padding: 0; margin: 0; }
  .question-group legend { font-weight: 600; padding: 0; }
  .optional { font-weight: 400; color: #71717a; }
  .choice.hinted-choice { min-height: 44px; align-items: center; }
  .addon-hint { font-weight: 400; }
  .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
  ${QUESTION_STYLES}
`;

/** Both details forms carry what the page first showed, so a save changes only the fields the family edited. */
const shownFields = `<input type="hidden" name="was_name" value="{{details.was.name}}"><input type="hidden" name="was_email" value="{{details.was.email}}"><input type="hidden" name="was_mobile" value="{{details.was.mobile}}">{{#each details.was.attendeeNames}}<input type="hidden" name="was_attendee_name" value="{{this}}">{{/each}}`;

/** The "Change" control of a section: `what` names it for a screen reader ("Change your contact details"). */
const change = (what: string) => `<summary>Change<span class="visually-hidden"> ${what}</span></summary>`;

// Names and the event's title are typed by people, in any script: each is isolated (<bdi>) from the words around it.
export const managePage = definePage<ManagePageData>(`
<style>${MANAGE_STYLES}</style>
<div class="card">
  <h1>Manage your registration</h1>
  {{#if notice}}<p class="notice" id="notice" role="status">{{notice}}</p>{{/if}}
  {{#if formError}}<p class="error" id="form-error" role="alert">{{formError}}</p>{{/if}}
  <p class="event"><bdi>{{eventTitle}}</bdi><br><span class="muted">{{when}}</span>{{#if location}}<br><span class="muted"><bdi>{{location}}</bdi></span>{{/if}}</p>
  <p class="status"><strong>Status:</strong> <span id="status">{{statusLabel}}</span><br><strong>Reference:</strong> <span id="reference">{{reference}}</span></p>
  {{#if details}}<p class="muted" id="changes-until">You can make changes here until {{details.closesAt}}.</p>{{/if}}
  {{#if changesClosedNote}}<p id="changes-closed">{{changesClosedNote}}</p>{{/if}}
</div>
<section class="card" id="money" aria-labelledby="money-heading">
  <h2 id="money-heading">Payment</h2>
  <ul class="lines">
    {{#each lines}}<li><span>${LINE_LABEL}</span><span>{{amount}}</span></li>{{/each}}
    <li class="total"><span>Total</span><span id="total">{{total}}</span></li>
  </ul>
  {{#if help.length}}<ul id="help" class="plain">{{#each help}}<li>Help from <bdi>{{fund}}</bdi>: {{amount}}</li>{{/each}}</ul>{{/if}}
  {{#if payments.length}}<ul id="payments" class="plain">{{#each payments}}<li>{{how}}: {{amount}} <span class="muted">({{when}})</span></li>{{/each}}</ul>
  {{#if balance}}{{#if refunded}}<p><strong>Paid back:</strong> {{refunded}}</p>{{/if}}{{else}}<p><strong>Paid:</strong> <span id="paid">{{paid}}</span>{{#if refunded}}<br><strong>Paid back:</strong> {{refunded}}{{/if}}{{#if owing}}<br><strong>Still to pay:</strong> <span id="owing">{{owing}}</span>{{/if}}</p>{{/if}}
  {{else}}{{#unless free}}{{#unless balance}}<p>Nothing has been paid yet.{{#if owing}}<br><strong>Still to pay:</strong> <span id="owing">{{owing}}</span>{{/if}}</p>{{/unless}}{{/unless}}{{/if}}
  {{#if heldUntil}}<p id="held-until">Your places are held until {{heldUntil}}. If your payment has not reached us by then, they are released for others.</p>{{/if}}
  {{#if bank}}<div id="bank-instructions"><h3>Pay by bank transfer</h3>
  ${BANK_DETAILS}
  </div>{{/if}}
  {{#if payNowHref}}<a class="button" id="pay-now" href="{{payNowHref}}">Pay now by card</a>{{/if}}
</section>
${BALANCE_SECTION}
{{#if extras}}
<section class="card" id="extras-section" aria-labelledby="extras-heading">
  <h2 id="extras-heading">Extras</h2>
  <div class="shown">
  {{#if extras.had.length}}<ul id="extras-had" class="plain">{{#each extras.had}}<li><bdi>{{this}}</bdi></li>{{/each}}</ul>{{else}}<p class="muted" id="extras-none">No extras chosen yet.</p>{{/if}}
  </div>
  <details class="change" id="add-extras"{{#if extras.open}} open{{/if}}><summary>Add<span class="visually-hidden"> extras</span></summary>
  <form method="post" action="{{extras.action}}" id="extras">
    {{#if extras.errors.length}}<ul class="error" id="extras-errors" role="alert">{{#each extras.errors}}<li>{{message}}</li>{{/each}}</ul>{{/if}}
    {{#each extras.rows}}
    <fieldset class="attendee-answers"><legend><bdi>{{name}}</bdi></legend>
    {{#each controls}}${ADDON_CONTROL}{{/each}}
    </fieldset>
    {{/each}}
    {{#if extras.registration.length}}
    <fieldset class="attendee-answers"><legend>For the whole registration</legend>
    {{#each extras.registration}}${ADDON_CONTROL}{{/each}}
    </fieldset>
    {{/if}}
    <p class="muted">{{extras.payNote}}</p>
    <button type="submit" id="add-extras-submit">Add extras</button>
  </form>
  </details>
</section>
{{/if}}
<section class="card" id="attendees-section" aria-labelledby="attendees-heading">
  <h2 id="attendees-heading">Attendees</h2>
  <ul id="attendees" class="plain shown">{{#each attendees}}<li><bdi>{{name}}</bdi> <span class="muted">({{tier}})</span></li>{{/each}}</ul>
  {{#if details}}
  <details class="change" id="change-attendees"{{#if details.attendeeErrors.length}} open{{/if}}>${change('attendee names')}
  <form method="post" action="{{details.action}}" id="attendee-names">
    {{#if details.attendeeErrors.length}}<ul class="error" id="attendee-errors">{{#each details.attendeeErrors}}<li>{{message}}</li>{{/each}}</ul>{{/if}}
    <input type="hidden" name="name" value="{{details.values.name}}">
    <input type="hidden" name="email" value="{{details.values.email}}">
    <input type="hidden" name="mobile" value="{{details.values.mobile}}">
    ${shownFields}
    {{#each details.values.attendees}}
    <label for="attendee-{{@index}}">Attendee {{number}} <span class="muted">({{tier}})</span></label>
    <input id="attendee-{{@index}}" name="attendee_name" value="{{name}}" required>
    {{/each}}
    <p class="muted">Adding or removing an attendee, or changing a ticket type, is done by the church office: please contact them.</p>
    <button type="submit">Save names</button>
  </form>
  </details>
  {{/if}}
</section>
<section class="card" id="contact-section" aria-labelledby="contact-heading">
  <h2 id="contact-heading">Your contact details</h2>
  <dl class="pairs shown" id="contact">
    <dt>Name</dt><dd><bdi>{{contact.name}}</bdi></dd>
    <dt>Email</dt><dd>{{contact.email}}</dd>
    <dt>Mobile</dt><dd>{{#if contact.mobile}}{{contact.mobile}}{{else}}<span class="muted">None given</span>{{/if}}</dd>
  </dl>
  {{#if details}}
  <details class="change" id="change-contact"{{#if details.contactErrors.length}} open{{/if}}>${change('your contact details')}
  <form method="post" action="{{details.action}}" id="details">
    {{#if details.contactErrors.length}}<ul class="error" id="field-errors">{{#each details.contactErrors}}<li>{{message}}</li>{{/each}}</ul>{{/if}}
    <label for="name">Your name</label>
    <input id="name" name="name" autocomplete="name" value="{{details.values.name}}" required>
    <label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="email" value="{{details.values.email}}" required>
    <label for="mobile">Mobile (optional)</label>
    <input id="mobile" name="mobile" type="tel" autocomplete="tel" value="{{details.values.mobile}}">
    {{#each details.values.attendees}}<input type="hidden" name="attendee_name" value="{{name}}">{{/each}}
    ${shownFields}
    <p class="muted">If you change the email, we send a new link to the new address and this page's link stops working.</p>
    <button type="submit">Save changes</button>
  </form>
  </details>
  {{/if}}
</section>
{{#if answers}}
<section class="card" id="your-answers" aria-labelledby="answers-heading">
  <h2 id="answers-heading">Your answers</h2>
  <div class="shown" id="answers-shown">
  {{#if answers.registration.length}}<dl class="answers">{{#each answers.registration}}<dt>{{label}}</dt><dd>{{value}}</dd>{{/each}}</dl>{{/if}}
  {{#each answers.attendees}}{{#if answers.length}}<h3><bdi>{{name}}</bdi></h3><dl class="answers">{{#each answers}}<dt>{{label}}</dt><dd>{{value}}</dd>{{/each}}</dl>{{/if}}{{/each}}
  </div>
  {{#if answersForm}}
  <details class="change" id="change-answers"{{#if answersForm.open}} open{{/if}}>${change('your answers')}
  <form method="post" action="{{answersForm.action}}" id="answers">
    {{#if answersForm.errors.length}}<ul class="error" id="answer-errors" role="alert">{{#each answersForm.errors}}<li>{{message}}</li>{{/each}}</ul>{{/if}}
    {{#each answersForm.registration}}${QUESTION_FIELD}{{/each}}
    {{#each answersForm.attendees}}{{#if questions.length}}
    <fieldset class="attendee-answers"><legend><bdi>{{name}}</bdi> <span class="muted">({{tier}})</span></legend>
    {{#each questions}}${QUESTION_FIELD}{{/each}}
    </fieldset>
    {{/if}}{{/each}}
    <button type="submit">Save answers</button>
  </form>
  </details>
  {{else}}<p class="muted">Only you, through this page's link, and the church office see these answers.</p>{{/if}}
</section>
{{/if}}
{{#if cancelHref}}
<section class="card" id="cancel-section" aria-labelledby="cancel-heading">
  <h2 id="cancel-heading">Cannot come?</h2>
  <p>You can cancel this registration yourself. Its places are released for others.</p>
  <a class="button secondary" id="cancel" href="{{cancelHref}}">Cancel this registration</a>
</section>
{{/if}}
{{#if askOfficeAction}}
<section class="card" id="cancel-section" aria-labelledby="cancel-heading">
  <h2 id="cancel-heading">Cannot come?</h2>
  <p>Money has been paid for this registration, so the church office cancels it. Nothing is refunded automatically: the office will look at your request and reply to you.</p>
  <form method="post" action="{{askOfficeAction}}" id="ask-office">
    <button type="submit" class="secondary">Ask the office to cancel</button>
  </form>
</section>
{{/if}}`);

export interface ManageCancelPageData {
  eventTitle: string;
  when: string;
  seats: number;
  /** "its place" or "its 3 places". */
  seatsInWords?: string;
  action: string;
  backHref: string;
}

/** The confirmation step of the registrant's own cancel: nothing changes until its button is pressed. */
export const manageCancelPage = definePage<ManageCancelPageData>(`
<style>
  .actions { display: flex; flex-wrap: wrap; gap: 0 12px; align-items: center; }
  button, .button { min-height: 44px; min-width: 44px; }
  .button.secondary { background: #52525b; }
</style>
<div class="card">
  <h1>Cancel your registration?</h1>
  <p>This cancels your registration for <strong><bdi>{{eventTitle}}</bdi></strong> ({{when}}) and releases {{seatsInWords}} for others. It cannot be undone here.</p>
  <div class="actions">
    <form method="post" action="{{action}}" id="confirm-cancel">
      <button type="submit">Yes, cancel my registration</button>
    </form>
    <a class="button secondary" id="keep" href="{{backHref}}">No, keep it</a>
  </div>
</div>`);
