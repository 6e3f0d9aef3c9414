import { definePage } from '../pages.js';

export interface MessagePageData {
  heading: string;
  message: string;
  linkHref?: string;
  linkLabel?: string;
  /** The error-log row of an unexpected failure, for whoever the visitor tells. */
  errorId?: number;
}

/** A page that only says something: not found, sold out, not payable, an error. */
export const messagePage = definePage<MessagePageData>(`
<div class="card">
  <h1>{{heading}}</h1>
  <p role="alert">{{message}}</p>
  {{#if errorId}}<p class="muted">Error reference: {{errorId}}</p>{{/if}}
  {{#if linkHref}}<p><a href="{{linkHref}}">{{linkLabel}}</a></p>{{/if}}
</div>`);
