import { definePage } from '../pages.js';

export interface MessagePageData {
  heading: string;
  message: string;
  linkHref?: string;
  linkLabel?: string;
}

/** A page that only says something: not found, sold out, not payable. */
export const messagePage = definePage<MessagePageData>(`
<div class="card">
  <h1>{{heading}}</h1>
  <p role="alert">{{message}}</p>
  {{#if linkHref}}<p><a href="{{linkHref}}">{{linkLabel}}</a></p>{{/if}}
</div>`);
