/**
 * The bank-transfer details of an email that asks for money: the church's account and the registration's
 * reference, after a card link when there is one ("Or pay …") and alone otherwise ("Please pay …"). Written inside
 * an email template whose data has an optional `bank`, `payNowUrl` and a `reference`.
 */

export const BANK_TRANSFER_HTML = `{{#if bank}}<p>{{#if payNowUrl}}Or pay{{else}}Please pay{{/if}} by bank transfer:</p>
<table role="presentation" cellspacing="0" cellpadding="0" style="margin:0 0 16px;">
<tr><td style="padding:2px 12px 2px 0;color:#71717a;">Account name</td><td>{{bank.accountName}}</td></tr>
<tr><td style="padding:2px 12px 2px 0;color:#71717a;">BSB</td><td>{{bank.bsb}}</td></tr>
<tr><td style="padding:2px 12px 2px 0;color:#71717a;">Account number</td><td>{{bank.accountNumber}}</td></tr>
<tr><td style="padding:2px 12px 2px 0;color:#71717a;">Reference</td><td>{{reference}}</td></tr>
</table>{{/if}}`;

export const BANK_TRANSFER_TEXT = `{{#if bank}}
{{#if payNowUrl}}Or pay{{else}}Please pay{{/if}} by bank transfer:
Account name: {{bank.accountName}}
BSB: {{bank.bsb}}
Account number: {{bank.accountNumber}}
Reference: {{reference}}
{{/if}}`;
