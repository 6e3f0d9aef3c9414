import { defineEmailTemplate } from '../../mail/render.js';
import { MANAGE_LINK_HTML, MANAGE_LINK_TEXT } from './manage-link-lines.js';

export interface ReceiptEmailData {
  name: string;
  eventTitle: string;
  eventStartsAt: Date;
  lines: Array<{ label: string; amount: number }>;
  amountMinor: number;
  /** Help with the cost from named funds, shown above the total paid ("Help from Camp scholarships"). */
  help?: Array<{ fund: string; amountMinor: number }>;
  /** A payment of part of the total: paid so far (this payment included), the balance left, and whether anything is still owed. */
  part?: { paidSoFarMinor: number; balanceLeftMinor: number; owing: boolean };
  paidAt: Date;
  /** The provider's payment reference; card payments only. */
  paymentIntentId?: string;
  /** A new card registration's non-sensitive answers, labelled, per attendee (answer-lines.ts); never a sensitive one. */
  answerGroups?: Array<{ heading: string; answers: Array<{ label: string; value: string }> }>;
  /** How the money came, as the receipt says it: "card payment", "bank transfer", "bank transfer and cash payment". */
  methodWords: string;
  /** The "Paid by" line: the method, or each method with its amount when the money came several ways. */
  paidByWords: string;
  /** The money came several ways ("have been received"). */
  several: boolean;
  /** Short reference of the registration. */
  reference: string;
  /** The registrant's own "Manage your registration" link (manage-link.ts), the email's one link to the registration; absent when no public URL is configured. */
  manageUrl?: string;
}

/** Sent on every payment: one that made a registration PAID (card, or received by the office), and each part of a total paid in parts. The church identity (name, address, ABN) is part of the receipt. */
export const receiptEmail = defineEmailTemplate<ReceiptEmailData>({
  subject: 'Receipt: {{eventTitle}}',
  heading: 'Payment received: {{eventTitle}}',
  html: `<p>Hi {{name}},</p>
<p>Thank you: your {{methodWords}} for <strong>{{eventTitle}}</strong> ({{dateTime eventStartsAt}}) {{#if several}}have{{else}}has{{/if}} been received{{#if part.owing}}. Your places are kept; the balance left is <strong>{{money part.balanceLeftMinor}}</strong>.{{else}} and your registration is confirmed.{{/if}}</p>
<table role="presentation" cellspacing="0" cellpadding="0" style="width:100%;border-collapse:collapse;margin:0 0 12px;">
{{#each lines}}<tr><td style="padding:4px 8px 4px 0;border-bottom:1px solid #e4e4e7;">{{label}}</td><td align="right" style="padding:4px 0;border-bottom:1px solid #e4e4e7;">{{money amount}}</td></tr>
{{/each}}{{#each help}}<tr><td style="padding:4px 8px 4px 0;border-bottom:1px solid #e4e4e7;">Help from {{fund}}</td><td align="right" style="padding:4px 0;border-bottom:1px solid #e4e4e7;">−{{money amountMinor}}</td></tr>
{{/each}}<tr><td style="padding:6px 8px 4px 0;"><strong>{{#if part}}This payment{{else}}Total paid{{/if}}</strong></td><td align="right" style="padding:6px 0 4px;"><strong>{{money amountMinor}}</strong></td></tr>
{{#if part}}<tr><td style="padding:4px 8px 4px 0;">Paid so far</td><td align="right" style="padding:4px 0;">{{money part.paidSoFarMinor}}</td></tr>
<tr><td style="padding:4px 8px 4px 0;">Balance left</td><td align="right" style="padding:4px 0;">{{money part.balanceLeftMinor}}</td></tr>{{/if}}
</table>
{{#each answerGroups}}<p style="margin:12px 0 4px;"><strong>{{heading}}</strong></p>
<ul style="margin:0 0 8px;padding-left:20px;">{{#each answers}}<li>{{label}}: {{value}}</li>{{/each}}</ul>
{{/each}}<p>Paid to {{church.name}}{{#if church.abn}} (ABN {{church.abn}}){{/if}}{{#if church.address}}, {{church.address}}{{/if}} on {{date paidAt}}.<br>
Paid by: {{paidByWords}}<br>
{{#if paymentIntentId}}Payment reference: <span style="font-family:monospace;">{{paymentIntentId}}</span><br>{{/if}}
Registration reference: <span style="font-family:monospace;">{{reference}}</span></p>
${MANAGE_LINK_HTML}
<p>Please keep this email as your receipt.</p>`,
  text: `Hi {{name}},

Thank you: your {{methodWords}} for {{eventTitle}} ({{dateTime eventStartsAt}}) {{#if several}}have{{else}}has{{/if}} been received{{#if part.owing}}. Your places are kept; the balance left is {{money part.balanceLeftMinor}}.{{else}} and your registration is confirmed.{{/if}}

{{#each lines}}
{{label}}: {{money amount}}
{{/each}}
{{#each help}}Help from {{fund}}: −{{money amountMinor}}
{{/each}}
{{#if part}}This payment: {{money amountMinor}}
Paid so far: {{money part.paidSoFarMinor}}
Balance left: {{money part.balanceLeftMinor}}
{{else}}Total paid: {{money amountMinor}}
{{/if}}{{#each answerGroups}}
{{heading}}
{{#each answers}}- {{label}}: {{value}}
{{/each}}{{/each}}
Paid to {{church.name}}{{#if church.abn}} (ABN {{church.abn}}){{/if}}{{#if church.address}}, {{church.address}}{{/if}} on {{date paidAt}}.
Paid by: {{paidByWords}}
{{#if paymentIntentId}}Payment reference: {{paymentIntentId}}
{{/if}}Registration reference: {{reference}}
${MANAGE_LINK_TEXT}

Please keep this email as your receipt.`,
});
