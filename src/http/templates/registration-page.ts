import { definePage } from '../pages.js';
import { KEEP_LINK_PRIVATE } from '../../payments/templates/manage-link-lines.js';
import type { BalanceSectionView } from '../balance-view.js';

export interface LineView {
  label: string;
  amount: string;
  /** The label around the attendee name it carries, so the name is shown isolated (<bdi>). */
  named?: { before: string; name: string; after: string };
}

/** A line's label, its attendee name isolated: written inside {{#each lines}}. */
export const LINE_LABEL = '{{#if named}}{{named.before}}<bdi>{{named.name}}</bdi>{{named.after}}{{else}}{{label}}{{/if}}';

export interface BankInstructionsView {
  accountName?: string;
  bsb?: string;
  accountNumber?: string;
  /** False when Settings hold no bank account yet. */
  configured: boolean;
  reference: string;
  amount: string;
}

export interface RegistrationPageData {
  eventTitle: string;
  eventHref?: string;
  when: string;
  statusLabel: string;
  statusNote: string;
  location?: string;
  /** The form's confirmation email was held back by an hourly limit: this page is all the registrant has. */
  confirmationHeldNote?: string;
  /** The payment reference, shown on its own when the confirmation email (which names it) was held back. */
  heldBackReference?: string;
  /** The manage link, shown only to the browser that registered when its confirmation email was held back. */
  manageHref?: string;
  /** The non-sensitive answers, as the held-back email would have listed them. */
  answerGroups?: Array<{ heading: string; answers: Array<{ label: string; value: string }> }>;
  /** While awaiting payment: keep this page's address. */
  keepPageNote?: string;
  contactName: string;
  lines: LineView[];
  total: string;
  bank?: BankInstructionsView;
  payNowHref?: string;
  /** Paying in parts: what was paid, the help, the balance, its dates and the pay form (balance-view.ts). */
  balance?: BalanceSectionView;
}

/** Paid, help with the cost, the balance and its schedule, with a form for any part of it by card (also on the manage page). */
export const BALANCE_SECTION = `{{#if balance}}
<div class="card" id="balance">
  <h2>Your balance</h2>
  {{#if balance.depositPaid}}<p id="deposit-paid"><strong>Deposit paid</strong></p>{{/if}}
  <dl class="bank">
    <dt>Paid</dt><dd id="paid">{{balance.paid}}</dd>
    {{#if balance.credited}}<dt>Help with the cost</dt><dd id="credited">{{balance.credited}}</dd>{{/if}}
    <dt>Balance</dt><dd id="balance-left">{{balance.balance}}</dd>
  </dl>
  {{#if balance.nextDue}}<p id="next-due">Next payment: <strong>{{balance.nextDue.amount}}</strong> by {{balance.nextDue.on}}</p>{{/if}}
  {{#if balance.schedule}}<ul class="lines" id="schedule">{{#each balance.schedule}}<li><span>{{on}}{{#if met}} (paid){{/if}}</span><span>{{amount}}</span></li>{{/each}}</ul>{{/if}}
  {{#if balance.payForm}}
  <form method="post" action="{{balance.payForm.action}}">
    <input type="hidden" name="token" value="{{balance.payForm.token}}">
    <label for="pay-amount">Amount to pay by card</label>
    <input id="pay-amount" name="pay_amount" type="number" inputmode="decimal" value="{{balance.payForm.value}}" min="{{balance.payForm.min}}" max="{{balance.payForm.max}}" step="{{balance.payForm.step}}" required>
    <button type="submit" id="pay-part">Pay by card</button>
  </form>
  <p class="muted">You will be taken to our card payment provider's secure page.</p>
  {{/if}}
</div>
{{/if}}`;

/**
 * The bank details, the amount and the reference of a `bank` (BankInstructionsView), as the registration page and
 * the manage page give them while a bank transfer is owed.
 */
export const BANK_DETAILS = `{{#if bank.configured}}
  <dl class="bank">
    {{#if bank.accountName}}<dt>Account name</dt><dd>{{bank.accountName}}</dd>{{/if}}
    {{#if bank.bsb}}<dt>BSB</dt><dd>{{bank.bsb}}</dd>{{/if}}
    {{#if bank.accountNumber}}<dt>Account number</dt><dd>{{bank.accountNumber}}</dd>{{/if}}
    <dt>Amount</dt><dd>{{bank.amount}}</dd>
    <dt>Reference</dt><dd><strong>{{bank.reference}}</strong></dd>
  </dl>
  <p class="muted">Please quote the reference so we can match your payment to this registration.</p>
  {{else}}
  <p>The church will email you its bank details. Please transfer {{bank.amount}} with the reference <strong>{{bank.reference}}</strong>.</p>
  {{/if}}`;

export const BANK_STYLES = `dl.bank { display: grid; grid-template-columns: auto 1fr; gap: 4px 12px; }
  dl.bank dt { font-weight: 600; }
  dl.bank dd { margin: 0; }`;

// Names and the event's title are typed by people, in any script: each is isolated (<bdi>) from the words around it.
export const registrationPage = definePage<RegistrationPageData>(`
<style>
  h2 { font-size: 1.15rem; margin: 0 0 8px; }
  .lines { list-style: none; padding: 0; margin: 8px 0; }
  .lines li { display: flex; justify-content: space-between; gap: 12px; border-bottom: 1px solid #e4e4e7; padding: 6px 0; }
  .lines li.total { font-weight: 700; border-bottom: 0; }
  ${BANK_STYLES}
  /* Links standing on their own are full-size targets for a finger on a phone. */
  a.event-link, #manage-link a { display: inline-flex; align-items: center; min-height: 44px; min-width: 44px; }
</style>
<div class="card">
  <h1>Your registration</h1>
  {{#if confirmationHeldNote}}<p id="confirmation-held"><strong>{{confirmationHeldNote}}</strong></p>{{/if}}
  <p>{{#if eventHref}}<a class="event-link" href="{{eventHref}}"><bdi>{{eventTitle}}</bdi></a>{{else}}<bdi>{{eventTitle}}</bdi>{{/if}}<br><span class="muted">{{when}}</span>{{#if location}}<br><span class="muted" id="location"><bdi>{{location}}</bdi></span>{{/if}}</p>
  <p><strong>Status:</strong> <span id="status">{{statusLabel}}</span></p>
  {{#if heldBackReference}}<p><strong>Reference:</strong> <span id="reference">{{heldBackReference}}</span></p>{{/if}}
  <p>{{statusNote}}</p>
  {{#if keepPageNote}}<p id="keep-this-page"><strong>{{keepPageNote}}</strong></p>{{/if}}
  <p><strong>Registered by:</strong> <bdi>{{contactName}}</bdi></p>
  <ul class="lines">
    {{#each lines}}<li><span>${LINE_LABEL}</span><span>{{amount}}</span></li>{{/each}}
    <li class="total"><span>Total</span><span>{{total}}</span></li>
  </ul>
  {{#if answerGroups}}<div id="answers">{{#each answerGroups}}
  <h2><bdi>{{heading}}</bdi></h2>
  <ul>{{#each answers}}<li>{{label}}: <bdi>{{value}}</bdi></li>{{/each}}</ul>{{/each}}
  </div>{{/if}}
  {{#if manageHref}}<p id="manage-link"><a href="{{manageHref}}">Manage your registration</a>: correct your details or answers, or cancel. Bookmark it. ${KEEP_LINK_PRIVATE}</p>{{/if}}
</div>
${BALANCE_SECTION}
{{#if payNowHref}}
<div class="card">
  <h2>Pay by card</h2>
  <p>You can pay now by card instead of by bank transfer.</p>
  <a class="button" id="pay-now" href="{{payNowHref}}">Pay now by card</a>
</div>
{{/if}}
{{#if bank}}
<div class="card" id="bank-instructions">
  <h2>Pay by bank transfer</h2>
  ${BANK_DETAILS}
</div>
{{/if}}`);
