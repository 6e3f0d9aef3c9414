import { defineEmailTemplate } from '../../mail/render.js';

export interface OperationsAlertEmailData {
  alertId: number;
  kindLabel: string;
  reason: string;
  /** Provider and staging ids an administrator needs to find the payment, as label/value pairs. */
  facts: Array<{ label: string; value: string }>;
  amountMinor?: number;
}

/** To every ADMIN: what happened, the ids to look up, and how to mark it handled. */
export const operationsAlertEmail = defineEmailTemplate<OperationsAlertEmailData>({
  subject: 'Payment needs manual attention: {{kindLabel}} (alert {{alertId}})',
  heading: 'Payment needs manual attention',
  html: `<p><strong>{{kindLabel}}</strong>: {{reason}}</p>
{{#if amountMinor}}<p>Amount: <strong>{{money amountMinor}}</strong></p>{{/if}}
<table role="presentation" cellspacing="0" cellpadding="0" style="border-collapse:collapse;margin:0 0 12px;">
{{#each facts}}<tr><td style="padding:2px 12px 2px 0;color:#71717a;">{{label}}</td><td style="padding:2px 0;font-family:monospace;">{{value}}</td></tr>
{{/each}}</table>
<p>The money has been kept; nothing was refunded automatically. Look the payment up in the card provider's
dashboard with the ids above, contact the payer, then mark the alert handled:</p>
<p style="font-family:monospace;">eventops alerts resolve {{alertId}} --note "what was done"</p>`,
  text: `{{kindLabel}}: {{reason}}
{{#if amountMinor}}
Amount: {{money amountMinor}}
{{/if}}
{{#each facts}}
{{label}}: {{value}}
{{/each}}

The money has been kept; nothing was refunded automatically. Look the payment up in the card provider's dashboard with the ids above, contact the payer, then mark the alert handled:

  eventops alerts resolve {{alertId}} --note "what was done"`,
});
