import { definePage } from '../pages.js';
import { LINE_LABEL, type LineView } from './registration-page.js';

export interface PayNowPageData {
  eventTitle: string;
  when: string;
  /** What will be charged, the card processing fee line included when the event passes it on. */
  lines: LineView[];
  total: string;
  action: string;
  token: string;
  /** A part of a balance: exactly what was shown, in minor units, posted back so pay-now charges it. */
  amountMinor?: string;
  registrationHref: string;
}

/** GET shows this and creates nothing: mail scanners follow links. Only the POST starts a checkout. */
export const payNowPage = definePage<PayNowPageData>(`
<style>
  .lines { list-style: none; padding: 0; margin: 8px 0; }
  .lines li { display: flex; justify-content: space-between; gap: 12px; border-bottom: 1px solid #e4e4e7; padding: 6px 0; }
  .lines li.total { font-weight: 700; border-bottom: 0; }
  button { min-height: 44px; min-width: 44px; }
  a.back { display: inline-flex; align-items: center; min-height: 44px; min-width: 44px; }
</style>
<div class="card">
  <h1>Pay by card</h1>
  <p><bdi>{{eventTitle}}</bdi><br><span class="muted">{{when}}</span></p>
  <ul class="lines">
    {{#each lines}}<li><span>${LINE_LABEL}</span><span>{{amount}}</span></li>{{/each}}
    <li class="total"><span>To pay</span><span id="amount">{{total}}</span></li>
  </ul>
  <form method="post" action="{{action}}">
    <input type="hidden" name="token" value="{{token}}">
    {{#if amountMinor}}<input type="hidden" name="amount" value="{{amountMinor}}">{{/if}}
    <button type="submit" id="pay">Pay {{total}}</button>
  </form>
  <p class="muted">You will be taken to our card payment provider's secure page.</p>
  <p><a class="back" href="{{registrationHref}}">Back to your registration</a></p>
</div>`);
