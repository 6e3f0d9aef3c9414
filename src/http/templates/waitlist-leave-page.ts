import { definePage } from '../pages.js';

export interface WaitlistLeavePageData {
  eventTitle: string;
  /** GET while on the list: the confirm button (a GET changes nothing: mail scanners follow links). */
  action?: string;
  /** Off the list: after the POST, or already before it. */
  done: boolean;
}

export const waitlistLeavePage = definePage<WaitlistLeavePageData>(`
<div class="card">
  {{#if done}}
  <h1>You are off the waiting list</h1>
  <p role="status">You are no longer on the waiting list for <bdi>{{eventTitle}}</bdi>, and we will not offer you places for it.</p>
  {{else}}
  <h1>Leave the waiting list?</h1>
  <p>You will no longer be offered places for <bdi>{{eventTitle}}</bdi>. Places held for you now go to the next family.</p>
  <form method="post" action="{{action}}">
    <button type="submit" id="leave-waitlist">Leave the waiting list</button>
  </form>
  {{/if}}
</div>`);
