import { definePage } from '../pages.js';

export interface EmailChangePageData {
  heading: string;
  message: string;
  /** The button's post (nothing changes before it is pressed: mail scanners follow links). */
  action?: string;
  button?: string;
}

/** The confirm and undo links of an email change: what pressing the button does, then what it did. */
export const emailChangePage = definePage<EmailChangePageData>(`
<div class="card">
  <h1>{{heading}}</h1>
  <p id="email-change-message"><bdi>{{message}}</bdi></p>
  {{#if action}}
  <form method="post" action="{{action}}" id="email-change">
    <button type="submit">{{button}}</button>
  </form>
  {{/if}}
</div>`);
