import { defineEmailTemplate } from '../../mail/render.js';

export interface OperationsAlertEmailData {
  alertId: number;
  kindLabel: string;
  /** The subject's and heading's first words: 'Payment needs manual attention', or for an alert about no payment, 'Needs attention'. */
  headline: string;
  /** What happened, in words (alertGuidance). */
  happened: string;
  /** The case's own sentence, as the alert row keeps it. */
  reason: string;
  /** What to do about it, in words (alertGuidance). */
  toDo: string;
  /** The short reference of the registration the alert is about, when there is one. */
  reference?: string;
  /** Who paid: name and email (the email only here, never in the alert row). */
  payer?: string;
  amountMinor?: number;
  /** Provider and internal ids and amounts for the dashboard and support, as label/value pairs: the details block at the end. */
  details: Array<{ label: string; value: string }>;
}

/** To every ADMIN: what happened and what to do in words, the registration and payer, then the details to look things up with. */
export const operationsAlertEmail = defineEmailTemplate<OperationsAlertEmailData>({
  subject: '{{headline}}: {{kindLabel}} (alert {{alertId}})',
  heading: '{{headline}}',
  html: `<p><strong>{{kindLabel}}.</strong> {{happened}}</p>
<p>{{reason}}</p>
<table role="presentation" cellspacing="0" cellpadding="0" style="border-collapse:collapse;margin:0 0 12px;">
{{#if reference}}<tr><td style="padding:2px 12px 2px 0;color:#71717a;">Registration</td><td style="padding:2px 0;font-family:monospace;">{{reference}}</td></tr>{{/if}}
{{#if payer}}<tr><td style="padding:2px 12px 2px 0;color:#71717a;">Payer</td><td style="padding:2px 0;">{{payer}}</td></tr>{{/if}}
{{#if amountMinor}}<tr><td style="padding:2px 12px 2px 0;color:#71717a;">Amount</td><td style="padding:2px 0;"><strong>{{money amountMinor}}</strong></td></tr>{{/if}}
</table>
<p><strong>What to do:</strong> {{toDo}}</p>
<p>When it is handled, mark the alert resolved with a note of what was done:</p>
<p style="font-family:monospace;">eventops alerts resolve {{alertId}} --note "what was done"</p>
<p style="margin:16px 0 4px;color:#71717a;">Details (for the card provider's dashboard and support):</p>
<table role="presentation" cellspacing="0" cellpadding="0" style="border-collapse:collapse;margin:0 0 12px;color:#71717a;font-size:13px;">
{{#each details}}<tr><td style="padding:2px 12px 2px 0;">{{label}}</td><td style="padding:2px 0;font-family:monospace;">{{value}}</td></tr>
{{/each}}</table>`,
  text: `{{kindLabel}}. {{happened}}

{{reason}}
{{#if reference}}
Registration: {{reference}}
{{/if}}
{{#if payer}}
Payer: {{payer}}
{{/if}}
{{#if amountMinor}}
Amount: {{money amountMinor}}
{{/if}}

What to do: {{toDo}}

When it is handled, mark the alert resolved with a note of what was done:

  eventops alerts resolve {{alertId}} --note "what was done"

Details (for the card provider's dashboard and support):
{{#each details}}
  {{label}}: {{value}}
{{/each}}`,
});
