import { definePage } from '../pages.js';

export interface UnsubscribePageData {
  /** First names, written "Tom" or "Tom and Lan", each isolated (<bdi>): they may be in any script. */
  names: string[];
  churchName: string;
  /** GET with emails still on: the confirm button (a GET changes nothing: mail scanners follow links). */
  action?: string;
  /** The emails are off: after the POST, or already before it. */
  done: boolean;
}

const NAMES = '{{#each names}}{{#unless @first}} and {{/unless}}<bdi>{{this}}</bdi>{{/each}}';

export const unsubscribePage = definePage<UnsubscribePageData>(`
<div class="card">
  {{#if done}}
  <h1>You are unsubscribed</h1>
  <p role="status">${NAMES} will not receive birthday or anniversary emails from {{churchName}} any more.</p>
  <p class="muted">Changed your mind? Ask the church office to turn them on again.</p>
  {{else}}
  <h1>Stop birthday and anniversary emails?</h1>
  <p>{{churchName}} will stop sending birthday and anniversary emails to ${NAMES}. Other emails, such as those about events you register for, are not affected.</p>
  <form method="post" action="{{action}}">
    <input type="hidden" name="List-Unsubscribe" value="One-Click">
    <button type="submit" id="unsubscribe">Unsubscribe</button>
  </form>
  {{/if}}
</div>`);
