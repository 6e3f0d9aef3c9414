import { definePage } from '../pages.js';

export interface WaitlistConfirmPageData {
  eventTitle: string;
  /** GET of a link still to confirm: the button (a GET changes nothing: mail scanners follow links). */
  action?: string;
  places?: number;
  severalPlaces?: boolean;
  /** On the list (just confirmed, or before): its place in the queue, when it still waits. */
  onList?: { position?: number };
  /** The mailbox was on the list already through another join. */
  already?: boolean;
  /** Too late, gone, or the event no longer takes joins: with the event's page to join again. */
  closed?: { message: string; eventHref: string };
}

export const waitlistConfirmPage = definePage<WaitlistConfirmPageData>(`
<div class="card">
  {{#if action}}
  <h1>Confirm your place on the waiting list</h1>
  <p>For <bdi>{{eventTitle}}</bdi>, {{places}} {{#if severalPlaces}}places{{else}}place{{/if}}. When places free up we offer them in order, by email.</p>
  <form method="post" action="{{action}}">
    <button type="submit" id="confirm-waitlist">Confirm my place</button>
  </form>
  {{else if onList}}
  <h1>You are on the waiting list</h1>
  <p role="status">{{#if onList.position}}You are number {{onList.position}} on the waiting list for <bdi>{{eventTitle}}</bdi>.{{else}}You are on the waiting list for <bdi>{{eventTitle}}</bdi>, and places are held for you: see the email we sent.{{/if}} We have emailed you, and we will email again when places are free for you.</p>
  {{else if already}}
  <h1>You are already on the waiting list</h1>
  <p role="status">This email address was already on the waiting list for <bdi>{{eventTitle}}</bdi>, so nothing has changed.</p>
  {{else}}
  <h1>This link no longer works</h1>
  <p role="alert">{{closed.message}}</p>
  <p><a class="back-link" href="{{closed.eventHref}}">Back to the event</a></p>
  {{/if}}
</div>`);
