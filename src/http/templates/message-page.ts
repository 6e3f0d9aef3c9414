import { definePage } from '../pages.js';

export interface MessagePageData {
  heading: string;
  message: string;
  linkHref?: string;
  linkLabel?: string;
  /** The error-log row of an unexpected failure, for whoever the visitor tells. */
  errorId?: number;
  /** A form post that failed: what was typed, in hidden fields, to send again with one button. */
  resend?: { action: string; fields: Array<{ name: string; value: string }>; botCheck?: boolean };
}

/** A page that only says something: not found, sold out, not payable, an error. */
export const messagePage = definePage<MessagePageData>(`
<div class="card">
  <h1>{{heading}}</h1>
  <p role="alert">{{message}}</p>
  {{#if errorId}}<p class="muted">Error reference: {{errorId}}</p>{{/if}}
  {{#if resend}}
  <form method="post" action="{{resend.action}}" id="resend">
    {{#each resend.fields}}<input type="hidden" name="{{name}}" value="{{value}}">{{/each}}
    <p>What you typed is kept on this page: "Send again" {{#if resend.botCheck}}puts it back on the form; complete the bot check there and register.{{else}}sends it once more.{{/if}}</p>
    <button type="submit">Send again</button>
  </form>
  {{/if}}
  {{#if linkHref}}<p><a class="back-link" href="{{linkHref}}">{{linkLabel}}</a></p>{{/if}}
</div>`);
