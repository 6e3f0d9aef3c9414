import { defineEmailTemplate } from '../../mail/render.js';
import type { BankDetails } from '../../settings.js';
import { MANAGE_LINK_HTML, MANAGE_LINK_TEXT } from '../../payments/templates/manage-link-lines.js';

export interface ConfirmationEmailData {
  name: string;
  eventTitle: string;
  eventStartsAt: Date;
  eventEndsAt?: Date | null;
  location?: string | null;
  lines: Array<{ label: string; amount: number }>;
  totalMinor: number;
  /** What is still to pay: the total less what the office has recorded and help with the cost. */
  balanceMinor: number;
  /** Recorded by the office so far (a part-payment); 0 for a new registration. */
  paidMinor: number;
  /** Help with the cost from the church's funds (credits, net of reversals); 0 for a new registration. */
  creditedMinor?: number;
  /** Something was received or credited: the email says what and what is still to pay. */
  showBalance?: boolean;
  /** A card payment for it may still arrive: nothing is asked for meanwhile. */
  cardPaymentInFlight: boolean;
  /** When its places are released unless paid (events with a hold limit; see hold-release.ts). */
  heldUntil?: Date;
  /** More than one attendee: "your places are held", not "your place is". */
  severalPlaces: boolean;
  free: boolean;
  reference: string;
  bank?: BankDetails;
  /** The registrant's own "Manage your registration" link (manage-link.ts), the email's one link to the registration; absent when no public URL is configured. */
  manageUrl?: string;
  payNowUrl?: string;
  /** The event's other live registrations made with this address: perhaps the member registered twice. */
  otherRegistrations: Array<{ reference: string; paid: boolean }>;
  /** The non-sensitive answers, labelled, per attendee where they apply (answer-lines.ts); never a sensitive one. */
  answerGroups?: Array<{ heading: string; answers: Array<{ label: string; value: string }> }>;
  /** Paying in parts (a deposit, or a deposit and instalments): each payment by its date (YYYY-MM-DD), the deposit first. */
  schedule?: Array<{ amountMinor: number; dueOn: string; deposit: boolean }>;
}

/** Sent when a free registration is confirmed or a bank-transfer registration is received. */
export const registrationConfirmationEmail = defineEmailTemplate<ConfirmationEmailData>({
  subject: '{{#if free}}Registration confirmed{{else}}Registration received{{/if}}: {{eventTitle}}',
  html: `<p>Hi {{name}},</p>
{{#if free}}<p>{{#if severalPlaces}}Your places at <strong>{{eventTitle}}</strong> are{{else}}Your place at <strong>{{eventTitle}}</strong> is{{/if}} confirmed. There is nothing to pay.</p>
{{else}}{{#if cardPaymentInFlight}}<p>Thank you for registering for <strong>{{eventTitle}}</strong>. A card payment for it is being processed; there is nothing more to do for now.</p>{{else}}<p>Thank you for registering for <strong>{{eventTitle}}</strong>. {{#if heldUntil}}{{#if severalPlaces}}Your places are{{else}}Your place is{{/if}} held until {{dateTime heldUntil}}; please pay {{money balanceMinor}} by then to confirm {{#if severalPlaces}}them{{else}}it{{/if}}. If we have not received it by then, {{#if severalPlaces}}your places are{{else}}your place is{{/if}} released for others.{{else}}{{#if severalPlaces}}Your places are{{else}}Your place is{{/if}} held; please pay {{money balanceMinor}} to confirm {{#if severalPlaces}}them{{else}}it{{/if}}.{{/if}}</p>{{/if}}{{/if}}
{{#if otherRegistrations.length}}<p style="padding:8px 12px;background:#fef3c7;border-radius:4px;">This email address also registered for {{eventTitle}} before: {{#each otherRegistrations}}<strong>{{reference}}</strong>{{#if paid}} (paid){{/if}}{{#unless @last}}, {{/unless}}{{/each}}. If this registration is a repeat, please do not pay for it twice: contact the church office and they will cancel the one you do not need.</p>
{{/if}}<p>{{dateTimeSpan eventStartsAt eventEndsAt}}{{#if location}}<br>{{location}}{{/if}}</p>
<table role="presentation" cellspacing="0" cellpadding="0" style="width:100%;border-collapse:collapse;margin:0 0 12px;">
{{#each lines}}<tr><td style="padding:4px 8px 4px 0;border-bottom:1px solid #e4e4e7;">{{label}}</td><td align="right" style="padding:4px 0;border-bottom:1px solid #e4e4e7;">{{money amount}}</td></tr>
{{/each}}<tr><td style="padding:6px 8px 4px 0;"><strong>Total</strong></td><td align="right" style="padding:6px 0 4px;"><strong>{{money totalMinor}}</strong></td></tr>
{{#if showBalance}}{{#if paidMinor}}<tr><td style="padding:4px 8px 4px 0;">Received so far</td><td align="right" style="padding:4px 0;">{{money paidMinor}}</td></tr>
{{/if}}{{#if creditedMinor}}<tr><td style="padding:4px 8px 4px 0;">Help with the cost</td><td align="right" style="padding:4px 0;">{{money creditedMinor}}</td></tr>
{{/if}}<tr><td style="padding:4px 8px 4px 0;"><strong>Still to pay</strong></td><td align="right" style="padding:4px 0;"><strong>{{money balanceMinor}}</strong></td></tr>
{{/if}}</table>
{{#if schedule}}<p><strong>Paying in parts</strong></p>
<ul style="margin:0 0 8px;padding-left:20px;">{{#each schedule}}<li>{{money amountMinor}} {{#if deposit}}deposit, due now to keep your place{{else}}by {{date dueOn}}{{/if}}</li>{{/each}}</ul>
{{/if}}
{{#if answerGroups.length}}{{#each answerGroups}}<p style="margin:12px 0 4px;"><strong>{{heading}}</strong></p>
<ul style="margin:0 0 8px;padding-left:20px;">{{#each answers}}<li>{{label}}: {{value}}</li>{{/each}}</ul>
{{/each}}{{/if}}
{{#unless free}}{{#unless cardPaymentInFlight}}{{#if bank}}<p><strong>Bank transfer</strong><br>
Account name: {{bank.accountName}}<br>BSB: {{bank.bsb}}<br>Account number: {{bank.accountNumber}}<br>
Reference: <strong>{{reference}}</strong></p>{{else}}<p>Please use the reference <strong>{{reference}}</strong> with your payment.</p>{{/if}}
{{#if payNowUrl}}<p><a href="{{payNowUrl}}" style="display:inline-block;padding:10px 16px;border-radius:6px;background:#0f172a;color:#ffffff;text-decoration:none;">Pay now by card</a></p>{{/if}}{{/unless}}{{/unless}}
${MANAGE_LINK_HTML}`,
  text: `Hi {{name}},

{{#if free}}{{#if severalPlaces}}Your places at {{eventTitle}} are{{else}}Your place at {{eventTitle}} is{{/if}} confirmed. There is nothing to pay.{{else}}{{#if cardPaymentInFlight}}Thank you for registering for {{eventTitle}}. A card payment for it is being processed; there is nothing more to do for now.{{else}}Thank you for registering for {{eventTitle}}. {{#if heldUntil}}{{#if severalPlaces}}Your places are{{else}}Your place is{{/if}} held until {{dateTime heldUntil}}; please pay {{money balanceMinor}} by then to confirm {{#if severalPlaces}}them{{else}}it{{/if}}. If we have not received it by then, {{#if severalPlaces}}your places are{{else}}your place is{{/if}} released for others.{{else}}{{#if severalPlaces}}Your places are{{else}}Your place is{{/if}} held; please pay {{money balanceMinor}} to confirm {{#if severalPlaces}}them{{else}}it{{/if}}.{{/if}}{{/if}}{{/if}}
{{#if otherRegistrations.length}}
This email address also registered for {{eventTitle}} before: {{#each otherRegistrations}}{{reference}}{{#if paid}} (paid){{/if}}{{#unless @last}}, {{/unless}}{{/each}}. If this registration is a repeat, please do not pay for it twice: contact the church office and they will cancel the one you do not need.
{{/if}}

{{dateTimeSpan eventStartsAt eventEndsAt}}{{#if location}}
{{location}}{{/if}}

{{#each lines}}
{{label}}: {{money amount}}
{{/each}}
Total: {{money totalMinor}}
{{#if showBalance}}{{#if paidMinor}}Received so far: {{money paidMinor}}
{{/if}}{{#if creditedMinor}}Help with the cost: {{money creditedMinor}}
{{/if}}Still to pay: {{money balanceMinor}}
{{/if}}{{#if schedule}}
Paying in parts:
{{#each schedule}}- {{money amountMinor}} {{#if deposit}}deposit, due now to keep your place{{else}}by {{date dueOn}}{{/if}}
{{/each}}{{/if}}{{#each answerGroups}}

{{heading}}
{{#each answers}}- {{label}}: {{value}}
{{/each}}{{/each}}{{#unless free}}{{#unless cardPaymentInFlight}}

{{#if bank}}Bank transfer
Account name: {{bank.accountName}}
BSB: {{bank.bsb}}
Account number: {{bank.accountNumber}}
Reference: {{reference}}{{else}}Please use the reference {{reference}} with your payment.{{/if}}
{{#if payNowUrl}}

Pay now by card: {{payNowUrl}}
{{/if}}{{/unless}}{{/unless}}
${MANAGE_LINK_TEXT}`,
});
