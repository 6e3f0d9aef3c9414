import { defineEmailTemplate } from '../../mail/render.js';
import { BANK_TRANSFER_HTML, BANK_TRANSFER_TEXT } from '../../payments/templates/bank-transfer-lines.js';
import { MANAGE_LINK_HTML, MANAGE_LINK_TEXT } from '../../payments/templates/manage-link-lines.js';

export interface ReminderEvent {
  title: string;
  startsAt: Date;
  /** Shown as the end of the "When" line of the plain reminder; null when the office gave none. */
  endsAt?: Date | null;
  location: string | null;
}

export interface EventReminderData {
  name: string;
  event: ReminderEvent;
  /** The registrant's own "Manage your registration" link (manage-link.ts), the email's one link to the registration; absent when no public URL is configured. */
  manageUrl?: string;
}

export interface PaymentReminderData extends EventReminderData {
  amountMinor: number;
  reference: string;
  /** Shown when Settings hold all three bank details. */
  bank?: { accountName: string; bsb: string; accountNumber: string };
  /** Present only when the event takes card payment and a provider is configured. */
  payNowUrl?: string;
  /** What pay-now charges by card: the amount owing plus the card fee when the event passes it on. */
  cardAmountMinor?: number;
  /** The card processing fee in cardAmountMinor; 0 when the event does not pass the fee on. */
  cardFeeMinor?: number;
}

/** Plain reminder: date and time in APP_TIMEZONE, place, and an .ics attachment added by the job. */
export const eventReminderEmail = defineEmailTemplate<EventReminderData>({
  subject: 'Reminder: {{event.title}}',
  heading: 'See you at {{event.title}}',
  html: `<p>Hi {{name}},</p>
<p>This is a reminder that you are registered for <strong>{{event.title}}</strong>.</p>
<table role="presentation" cellspacing="0" cellpadding="0" style="margin:0 0 16px;">
<tr><td style="padding:2px 12px 2px 0;color:#71717a;">When</td><td>{{dateTimeSpan event.startsAt event.endsAt}}</td></tr>
{{#if event.location}}<tr><td style="padding:2px 12px 2px 0;color:#71717a;">Where</td><td>{{event.location}}</td></tr>{{/if}}
</table>
<p>The attached calendar file adds the event to your calendar.</p>
${MANAGE_LINK_HTML}`,
  text: `Hi {{name}},

This is a reminder that you are registered for {{event.title}}.

When: {{dateTimeSpan event.startsAt event.endsAt}}
{{#if event.location}}Where: {{event.location}}
{{/if}}
The attached calendar file adds the event to your calendar.
${MANAGE_LINK_TEXT}`,
});

/** Payment reminder for a PENDING registration with an amount owing. */
export const paymentReminderEmail = defineEmailTemplate<PaymentReminderData>({
  subject: 'Payment reminder: {{event.title}}',
  heading: 'Payment still owing for {{event.title}}',
  html: `<p>Hi {{name}},</p>
<p>{{event.title}} is coming up on {{dateTime event.startsAt}}{{#if event.location}} at {{event.location}}{{/if}}.
Our records show <strong>{{money amountMinor}}</strong> still owing for your registration.</p>
{{#if payNowUrl}}<p><a href="{{payNowUrl}}" style="display:inline-block;padding:10px 18px;background:#18181b;color:#ffffff;text-decoration:none;border-radius:4px;">Pay {{money cardAmountMinor}} by card</a></p>
{{#if cardFeeMinor}}<p style="color:#71717a;">By card the total is {{money cardAmountMinor}}, which includes a {{money cardFeeMinor}} card processing fee.</p>{{/if}}{{/if}}
${BANK_TRANSFER_HTML}
<p>If you have paid in the last few days, thank you, and please ignore this reminder.</p>
${MANAGE_LINK_HTML}`,
  text: `Hi {{name}},

{{event.title}} is coming up on {{dateTime event.startsAt}}{{#if event.location}} at {{event.location}}{{/if}}.
Our records show {{money amountMinor}} still owing for your registration.
{{#if payNowUrl}}
Pay by card: {{payNowUrl}}
{{#if cardFeeMinor}}By card the total is {{money cardAmountMinor}}, which includes a {{money cardFeeMinor}} card processing fee.
{{/if}}{{/if}}
${BANK_TRANSFER_TEXT}
If you have paid in the last few days, thank you, and please ignore this reminder.
${MANAGE_LINK_TEXT}`,
});
