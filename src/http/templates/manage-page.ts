import { definePage } from '../pages.js';
import { LINE_LABEL, type LineView } from './registration-page.js';
import { QUESTION_FIELD, QUESTION_STYLES } from './question-fields.js';
import type { AnswersFormView, AnswersView } from '../manage-answers-view.js';

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
  /** What came in, each payment: "Bank transfer", "$60.00", "12 Nov 2026". */
  payments: Array<{ how: string; amount: string; when: string }>;
  paid: string;
  /** Help with the cost from named funds standing on the registration: "Help from Camp scholarships". */
  help: Array<{ fund: string; amount: string }>;
  refunded?: string;
  owing?: string;
  heldUntil?: string;
  payNowHref?: string;
  /** Present while the registrant may change details (before changesCloseAt, not cancelled). */
  details?: {
    action: string;
    closesAt: string;
    values: { name: string; email: string; mobile: string; attendees: Array<{ name: string; tier: string; number: number }> };
    errors: Array<{ field: string; message: string }>;
  };
  /** The family's answers to the event's questions, when it asks any. */
  answers?: AnswersView;
  /** Present while the answers may be corrected. */
  answersForm?: AnswersFormView & { action: string; errors: Array<{ field: string; message: string }> };
  /** Why details cannot be changed here any more, when they cannot. */
  changesClosedNote?: string;
  cancelHref?: string;
  askOfficeAction?: string;
}

// Names and the event's title are typed by people, in any script: each is isolated (<bdi>) from the words around it.
export const managePage = definePage<ManagePageData>(`
<style>
  h2 { font-size: 1.15rem; margin: 0 0 8px; }
  .lines { list-style: none; padding: 0; margin: 8px 0; }
  .lines li { display: flex; justify-content: space-between; gap: 12px; border-bottom: 1px solid #e4e4e7; padding: 6px 0; }
  .lines li.total { font-weight: 700; border-bottom: 0; }
  .notice { padding: 8px 12px; background: #ecfdf5; border-radius: 4px; }
  button.secondary { background: #52525b; }
  .answers dt { font-weight: 600; margin-top: 8px; }
  .answers dd { margin: 0; white-space: pre-line; }
  fieldset.attendee-answers { border: 0; border-top: 1px solid #e4e4e7; padding: 8px 0 0; margin: 16px 0 0; }
  fieldset.attendee-answers > legend { font-weight: 700; padding: 0; }
  .choice { display: flex; gap: 10px; font-weight: 400; }
  .choice input { width: auto; flex: none; }
  .question-group { border: 0; padding: 0; margin: 0; }
  .question-group legend { font-weight: 600; padding: 0; }
  .optional { font-weight: 400; color: #71717a; }
  .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
  ${QUESTION_STYLES}
</style>
<div class="card">
  <h1>Manage your registration</h1>
  {{#if notice}}<p class="notice" id="notice" role="status">{{notice}}</p>{{/if}}
  {{#if formError}}<p class="error" id="form-error" role="alert">{{formError}}</p>{{/if}}
  <p><bdi>{{eventTitle}}</bdi><br><span class="muted">{{when}}</span>{{#if location}}<br><span class="muted"><bdi>{{location}}</bdi></span>{{/if}}</p>
  <p><strong>Status:</strong> <span id="status">{{statusLabel}}</span><br><strong>Reference:</strong> <span id="reference">{{reference}}</span></p>
  <h2>Attendees</h2>
  <ul id="attendees">{{#each attendees}}<li><bdi>{{name}}</bdi> <span class="muted">({{tier}})</span></li>{{/each}}</ul>
  <ul class="lines">
    {{#each lines}}<li><span>${LINE_LABEL}</span><span>{{amount}}</span></li>{{/each}}
    <li class="total"><span>Total</span><span id="total">{{total}}</span></li>
  </ul>
</div>
<div class="card" id="money">
  <h2>Payments</h2>
  {{#if payments.length}}<ul id="payments">{{#each payments}}<li>{{how}}: {{amount}} <span class="muted">({{when}})</span></li>{{/each}}</ul>{{else}}<p>Nothing has been paid yet.</p>{{/if}}
  {{#if help.length}}<ul id="help">{{#each help}}<li>Help from <bdi>{{fund}}</bdi>: {{amount}}</li>{{/each}}</ul>{{/if}}
  <p><strong>Paid:</strong> <span id="paid">{{paid}}</span>{{#if refunded}}<br><strong>Paid back:</strong> {{refunded}}{{/if}}{{#if owing}}<br><strong>Still to pay:</strong> <span id="owing">{{owing}}</span>{{/if}}</p>
  {{#if heldUntil}}<p id="held-until">Your places are held until {{heldUntil}}. If your payment has not reached us by then, they are released for others.</p>{{/if}}
  {{#if payNowHref}}<a class="button" id="pay-now" href="{{payNowHref}}">Pay now by card</a>{{/if}}
</div>
{{#if details}}
<div class="card">
  <h2>Correct your details</h2>
  <p class="muted">You can correct these until {{details.closesAt}}. Adding or removing an attendee, or changing a ticket type, is done by the church office: please contact them.</p>
  {{#if details.errors.length}}<ul class="error" id="field-errors">{{#each details.errors}}<li>{{message}}</li>{{/each}}</ul>{{/if}}
  <form method="post" action="{{details.action}}" id="details">
    <label for="name">Your name</label>
    <input id="name" name="name" autocomplete="name" value="{{details.values.name}}" required>
    <label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="email" value="{{details.values.email}}" required>
    <label for="mobile">Mobile (optional)</label>
    <input id="mobile" name="mobile" type="tel" autocomplete="tel" value="{{details.values.mobile}}">
    {{#each details.values.attendees}}
    <label for="attendee-{{@index}}">Attendee {{number}} <span class="muted">({{tier}})</span></label>
    <input id="attendee-{{@index}}" name="attendee_name" value="{{name}}" required>
    {{/each}}
    <button type="submit">Save changes</button>
  </form>
  <p class="muted">If you change the email, we send a new link to the new address and this page's link stops working.</p>
</div>
{{/if}}
{{#if answers}}
<div class="card" id="your-answers">
  <h2>Your answers</h2>
  {{#if answers.registration.length}}<dl class="answers">{{#each answers.registration}}<dt>{{label}}</dt><dd>{{value}}</dd>{{/each}}</dl>{{/if}}
  {{#each answers.attendees}}{{#if answers.length}}<h3><bdi>{{name}}</bdi></h3><dl class="answers">{{#each answers}}<dt>{{label}}</dt><dd>{{value}}</dd>{{/each}}</dl>{{/if}}{{/each}}
  {{#unless answersForm}}<p class="muted">Only you, through this page's link, and the church office see these answers.</p>{{/unless}}
</div>
{{/if}}
{{#if answersForm}}
<div class="card">
  <h2>Correct your answers</h2>
  {{#if answersForm.errors.length}}<ul class="error" id="answer-errors" role="alert">{{#each answersForm.errors}}<li>{{message}}</li>{{/each}}</ul>{{/if}}
  <form method="post" action="{{answersForm.action}}" id="answers">
    {{#each answersForm.registration}}${QUESTION_FIELD}{{/each}}
    {{#each answersForm.attendees}}{{#if questions.length}}
    <fieldset class="attendee-answers"><legend><bdi>{{name}}</bdi> <span class="muted">({{tier}})</span></legend>
    {{#each questions}}${QUESTION_FIELD}{{/each}}
    </fieldset>
    {{/if}}{{/each}}
    <button type="submit">Save answers</button>
  </form>
</div>
{{/if}}
{{#if changesClosedNote}}<div class="card"><p id="changes-closed">{{changesClosedNote}}</p></div>{{/if}}
{{#if cancelHref}}
<div class="card">
  <h2>Cannot come?</h2>
  <p>You can cancel this registration yourself. Its places are released for others.</p>
  <a class="button" id="cancel" href="{{cancelHref}}">Cancel this registration</a>
</div>
{{/if}}
{{#if askOfficeAction}}
<div class="card">
  <h2>Cannot come?</h2>
  <p>Money has been paid for this registration, so the church office cancels it. Nothing is refunded automatically: the office will look at your request and reply to you.</p>
  <form method="post" action="{{askOfficeAction}}" id="ask-office">
    <button type="submit" class="secondary">Ask the office to cancel</button>
  </form>
</div>
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
<div class="card">
  <h1>Cancel your registration?</h1>
  <p>This cancels your registration for <strong><bdi>{{eventTitle}}</bdi></strong> ({{when}}) and releases {{seatsInWords}} for others. It cannot be undone here.</p>
  <form method="post" action="{{action}}" id="confirm-cancel">
    <button type="submit">Yes, cancel my registration</button>
  </form>
  <p><a href="{{backHref}}">No, keep it</a></p>
</div>`);
