import { defineEmailTemplate } from '../../mail/render.js';

export interface BalanceReminderData {
  name: string;
  eventTitle: string;
  /** Past its date (the one overdue reminder), or due today; neither: a few days before. */
  overdue: boolean;
  today: boolean;
  /** What this date asks for, and the balance left, in minor units (the `money` helper formats them). */
  dueMinor: number;
  balanceMinor: number;
  /** The due date, YYYY-MM-DD (the `date` helper writes it as a calendar day). */
  dueOn: string;
  /** Pay-now for exactly dueMinor; absent without a public URL. */
  payNowUrl?: string;
  /** The registration page, where the bank details and the schedule are. */
  registrationUrl?: string;
}

/** A payment of a registration's schedule coming due, due today, or overdue (sent once). */
export const balanceReminderEmail = defineEmailTemplate<BalanceReminderData>({
  subject: '{{#if overdue}}Overdue payment{{else}}Payment due{{/if}}: {{eventTitle}}',
  heading: '{{#if overdue}}A payment is overdue{{else}}A payment is due{{/if}} for {{eventTitle}}',
  html: `<p>Hi {{name}},</p>
<p>{{#if overdue}}<strong>{{money dueMinor}}</strong> was due on {{date dueOn}} for {{eventTitle}}, and we have not received it yet.{{else if today}}<strong>{{money dueMinor}}</strong> is due today for {{eventTitle}}.{{else}}<strong>{{money dueMinor}}</strong> is due on {{date dueOn}} for {{eventTitle}}.{{/if}}</p>
<p>Balance left on your registration: {{money balanceMinor}}.</p>
{{#if payNowUrl}}<p><a href="{{payNowUrl}}" style="display:inline-block;padding:10px 18px;background:#18181b;color:#ffffff;text-decoration:none;border-radius:4px;">Pay {{money dueMinor}} by card</a></p>{{/if}}
{{#if registrationUrl}}<p>{{#if payNowUrl}}Or pay{{else}}Pay{{/if}} by bank transfer with the details on <a href="{{registrationUrl}}">your registration page</a>.</p>{{/if}}
<p>If you have paid in the last few days, thank you, and please ignore this reminder.</p>`,
  text: `Hi {{name}},

{{#if overdue}}{{money dueMinor}} was due on {{date dueOn}} for {{eventTitle}}, and we have not received it yet.{{else if today}}{{money dueMinor}} is due today for {{eventTitle}}.{{else}}{{money dueMinor}} is due on {{date dueOn}} for {{eventTitle}}.{{/if}}
Balance left on your registration: {{money balanceMinor}}.
{{#if payNowUrl}}
Pay {{money dueMinor}} by card: {{payNowUrl}}
{{/if}}{{#if registrationUrl}}
{{#if payNowUrl}}Or pay{{else}}Pay{{/if}} by bank transfer with the details on your registration page: {{registrationUrl}}
{{/if}}
If you have paid in the last few days, thank you, and please ignore this reminder.`,
});
