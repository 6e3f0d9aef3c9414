import { defineEmailTemplate } from '../../mail/render.js';
import { MANAGE_LINK_HTML, MANAGE_LINK_TEXT } from '../../payments/templates/manage-link-lines.js';

export interface CancellationNoticeData {
  name: string;
  eventTitle: string;
  eventStartsAt: Date;
  reference: string;
  /** The unpaid hold ended (no payment arrived in time) rather than the office cancelling. */
  holdReleased: boolean;
  /** Money had been received: any refund is arranged by the church, not sent automatically. */
  paid: boolean;
  /** The registrant cancelled it on the manage page. */
  byRegistrant?: boolean;
}

/** Sent when the office cancels with --notify, and when an unpaid hold is released. */
export const cancellationNoticeEmail = defineEmailTemplate<CancellationNoticeData>({
  subject: 'Registration cancelled: {{eventTitle}}',
  html: `<p>Hi {{name}},</p>
{{#if holdReleased}}<p>We held your place at <strong>{{eventTitle}}</strong> ({{dateTime eventStartsAt}}) while we waited for your payment. No payment has reached us, so the places have been released and your registration (reference <strong>{{reference}}</strong>) is cancelled.</p>
<p>If you have paid in the last day or two, or still want to come, please contact us and we will sort it out.</p>
{{else}}<p>{{#if byRegistrant}}As you asked, your{{else}}Your{{/if}} registration for <strong>{{eventTitle}}</strong> ({{dateTime eventStartsAt}}), reference <strong>{{reference}}</strong>, has been cancelled{{#if byRegistrant}} and its places released{{/if}}.</p>
{{#if paid}}<p>We will be in touch about the money you paid.</p>{{/if}}
<p>If this is not what you expected, please contact us.</p>{{/if}}`,
  text: `Hi {{name}},

{{#if holdReleased}}We held your place at {{eventTitle}} ({{dateTime eventStartsAt}}) while we waited for your payment. No payment has reached us, so the places have been released and your registration (reference {{reference}}) is cancelled.

If you have paid in the last day or two, or still want to come, please contact us and we will sort it out.{{else}}{{#if byRegistrant}}As you asked, your{{else}}Your{{/if}} registration for {{eventTitle}} ({{dateTime eventStartsAt}}), reference {{reference}}, has been cancelled{{#if byRegistrant}} and its places released{{/if}}.
{{#if paid}}

We will be in touch about the money you paid.
{{/if}}

If this is not what you expected, please contact us.{{/if}}`,
});

export interface HoldEndingData {
  name: string;
  eventTitle: string;
  eventStartsAt: Date;
  reference: string;
  balanceMinor: number;
  releaseAt: Date;
  payNowUrl?: string;
  /** The registrant's own "Manage your registration" link. */
  manageUrl?: string;
}

/** One day before an unpaid bank-transfer hold is released. */
export const holdEndingEmail = defineEmailTemplate<HoldEndingData>({
  subject: 'Your place is held until {{dateTime releaseAt}}: {{eventTitle}}',
  html: `<p>Hi {{name}},</p>
<p>We are holding your place at <strong>{{eventTitle}}</strong> ({{dateTime eventStartsAt}}), but we have not received your payment of <strong>{{money balanceMinor}}</strong> yet (reference <strong>{{reference}}</strong>).</p>
<p>If it has not reached us by <strong>{{dateTime releaseAt}}</strong>, the places are released for others.</p>
{{#if payNowUrl}}<p><a href="{{payNowUrl}}" style="display:inline-block;padding:10px 16px;border-radius:6px;background:#0f172a;color:#ffffff;text-decoration:none;">Pay now by card</a></p>{{/if}}
${MANAGE_LINK_HTML}`,
  text: `Hi {{name}},

We are holding your place at {{eventTitle}} ({{dateTime eventStartsAt}}), but we have not received your payment of {{money balanceMinor}} yet (reference {{reference}}).

If it has not reached us by {{dateTime releaseAt}}, the places are released for others.
{{#if payNowUrl}}

Pay now by card: {{payNowUrl}}
{{/if}}
${MANAGE_LINK_TEXT}`,
});
