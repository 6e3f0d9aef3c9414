import { definePage } from '../pages.js';
import { LINE_LABEL, type LineView } from './registration-page.js';

export interface SuccessPageData {
  eventTitle: string;
  /** Absent once the event's page no longer shows it (deleted or unpublished). */
  eventHref?: string;
  /** The event's form still takes registrations: a checkout that ended unpaid may register again. */
  registrationOpen: boolean;
  paid: boolean;
  /** Paid, then fully refunded or disputed: the registration was cancelled. */
  cancelled: boolean;
  /** Paid, then cancelled for another reason (by the office, which never refunds): just cancelled. */
  registrationCancelled: boolean;
  /** No confirmation yet, and one may still come. */
  processing: boolean;
  unfulfilled: boolean;
  /** Paid, but the event has since been cancelled (deleted): no "see you there". */
  eventCancelled?: boolean;
  /** Unfulfilled because the registration was already paid: this payment is a second one. */
  paidTwice?: boolean;
  /** The provider confirmed that nothing was charged. */
  notCompleted: boolean;
  /** No confirmation came within the provider's redelivery window, and none was asked for. */
  unconfirmed: boolean;
  lines?: LineView[];
  total?: string;
  registrationHref?: string;
  payNowHref?: string;
}

export const successPage = definePage<SuccessPageData>(`
<style>
  .lines { list-style: none; padding: 0; margin: 8px 0; }
  .lines li { display: flex; justify-content: space-between; gap: 12px; border-bottom: 1px solid #e4e4e7; padding: 6px 0; }
  .lines li.total { font-weight: 700; border-bottom: 0; }
  /* Links standing on their own are full-size targets for a finger on a phone. */
  a.action { display: inline-flex; align-items: center; min-height: 44px; min-width: 44px; }
  .button { min-height: 44px; min-width: 44px; }
</style>
<div class="card" id="outcome">
{{#if paid}}
  <h1>Payment received, you are registered</h1>
  {{#if eventCancelled}}
  <p>Thank you: your payment for <bdi>{{eventTitle}}</bdi> was received. This event has since been cancelled; the church will contact you.</p>
  {{else}}
  <p>Thank you. Your place at <bdi>{{eventTitle}}</bdi> is confirmed and a receipt is on its way by email.</p>
  {{/if}}
  {{#if lines}}
  <ul class="lines">
    {{#each lines}}<li><span>${LINE_LABEL}</span><span>{{amount}}</span></li>{{/each}}
    <li class="total"><span>Paid</span><span>{{total}}</span></li>
  </ul>
  {{/if}}
  {{#if registrationHref}}<p><a class="action" href="{{registrationHref}}">View your registration</a></p>{{/if}}
{{/if}}
{{#if cancelled}}
  <h1>Payment refunded: registration cancelled</h1>
  <p>Your card payment for <bdi>{{eventTitle}}</bdi> was refunded or disputed, so this registration was cancelled and its places released.</p>
  {{#if registrationHref}}<p><a class="action" href="{{registrationHref}}">View your registration</a></p>{{/if}}
{{/if}}
{{#if registrationCancelled}}
  <h1>Registration cancelled</h1>
  <p>Your registration for <bdi>{{eventTitle}}</bdi> was cancelled and its places released. If you have any questions, please contact the church.</p>
  {{#if registrationHref}}<p><a class="action" href="{{registrationHref}}">View your registration</a></p>{{/if}}
{{/if}}
{{#if processing}}
  <h1>Processing your payment…</h1>
  <p>We are waiting for the card payment provider to confirm your payment for <bdi>{{eventTitle}}</bdi>. We will email you as soon as your card payment is confirmed; if you were charged you do not need to pay again.</p>
  <p class="muted">This page refreshes itself; it usually takes a few seconds.</p>
{{/if}}
{{#if unconfirmed}}
  <h1>We have no confirmation of this payment</h1>
  <p>The card payment provider never confirmed a payment for <bdi>{{eventTitle}}</bdi>. If your card was charged, please do not pay again: reply to any email from the church, or contact the church, and it will be sorted out.</p>
{{/if}}
{{#if unfulfilled}}
  <h1>Payment received: we will follow up</h1>
  {{#if paidTwice}}
  <p>Your registration for <bdi>{{eventTitle}}</bdi> was already paid, so this payment was a second one. Your money is safe: someone from the church will contact you by email about it.</p>
  {{else}}
  <p>Your payment for <bdi>{{eventTitle}}</bdi> reached us, but we could not complete the registration automatically (for example, the last places were taken while you were paying). Your money is safe: someone from the church will contact you by email to sort it out.</p>
  {{/if}}
{{/if}}
{{#if notCompleted}}
  <h1>Payment not completed</h1>
  <p>The card payment for <bdi>{{eventTitle}}</bdi> was not completed, and nothing was charged.</p>
  {{#if payNowHref}}
  <a class="button" id="pay-now" href="{{payNowHref}}">Pay now by card</a>
  {{else if registrationHref}}
  <p><a class="action" href="{{registrationHref}}">See your registration</a></p>
  {{else if registrationOpen}}
  <p>To register again: <a class="action" href="{{eventHref}}">Back to the event</a></p>
  {{else}}
  <p>Registration for this event is closed.</p>
  {{/if}}
{{/if}}
</div>`);
