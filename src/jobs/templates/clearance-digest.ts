import { defineEmailTemplate } from '../../mail/render.js';
import type { OverdueBalanceEntry } from '../overdue-balances.js';

export type ClearanceStatus = 'missing' | 'expired' | 'expiring';

/** One line of the digest: who, in which ministry, and which clearance (never its number). */
export interface ClearanceDigestEntry {
  name: string;
  roles: string;
  /** Absent for a missing clearance. */
  kind?: string;
  /** Calendar date YYYY-MM-DD; absent for a missing clearance. */
  expiresOn?: string;
}

export interface ClearanceDigestGroup {
  status: ClearanceStatus;
  title: string;
  entries: ClearanceDigestEntry[];
}

export interface ClearanceDigestData {
  /** The recipient's name. */
  name: string;
  /** e.g. "December 2026". */
  monthLabel: string;
  /** "1 person needs attention" / "3 people need attention". */
  attention: string;
  groups: ClearanceDigestGroup[];
  /** Days ahead that count as "expiring soon". */
  windowDays: number;
  /** Balances past a due date of their schedule: listed after the clearances. */
  overdueBalances?: OverdueBalanceEntry[];
}

export const clearanceDigestEmail = defineEmailTemplate<ClearanceDigestData>({
  subject: 'Clearance digest for {{monthLabel}}: {{attention}}',
  heading: 'Clearance digest for {{monthLabel}}',
  html: `<p>Hi {{name}},</p>
{{#if groups.length}}<p>These people with a ministry role have a working-with-children or similar clearance that is missing, expired,
or expiring within {{windowDays}} days.</p>{{/if}}
{{#each groups}}
<h2 style="margin:20px 0 8px;font-size:16px;">{{title}} ({{entries.length}})</h2>
<table role="presentation" cellspacing="0" cellpadding="0" style="width:100%;border-collapse:collapse;margin:0 0 8px;">
<tr><th align="left" style="padding:4px 8px 4px 0;border-bottom:1px solid #e4e4e7;">Name</th><th align="left" style="padding:4px 8px 4px 0;border-bottom:1px solid #e4e4e7;">Ministry</th><th align="left" style="padding:4px 8px 4px 0;border-bottom:1px solid #e4e4e7;">Clearance</th><th align="left" style="padding:4px 0;border-bottom:1px solid #e4e4e7;">Expiry</th></tr>
{{#each entries}}<tr><td style="padding:4px 8px 4px 0;">{{name}}</td><td style="padding:4px 8px 4px 0;">{{roles}}</td><td style="padding:4px 8px 4px 0;">{{#if kind}}{{kind}}{{else}}none on record{{/if}}</td><td style="padding:4px 0;">{{#if expiresOn}}{{date expiresOn}}{{else}}&ndash;{{/if}}</td></tr>
{{/each}}</table>
{{/each}}
{{#if groups.length}}<p>Please follow up with each person and update their record once a current clearance is sighted.</p>{{/if}}
{{#if overdueBalances.length}}
<h2 style="margin:20px 0 8px;font-size:16px;">Balances overdue ({{overdueBalances.length}})</h2>
<table role="presentation" cellspacing="0" cellpadding="0" style="width:100%;border-collapse:collapse;margin:0 0 8px;">
<tr><th align="left" style="padding:4px 8px 4px 0;border-bottom:1px solid #e4e4e7;">Reference</th><th align="left" style="padding:4px 8px 4px 0;border-bottom:1px solid #e4e4e7;">Family</th><th align="left" style="padding:4px 8px 4px 0;border-bottom:1px solid #e4e4e7;">Event</th><th align="left" style="padding:4px 8px 4px 0;border-bottom:1px solid #e4e4e7;">Balance</th><th align="left" style="padding:4px 0;border-bottom:1px solid #e4e4e7;">Was due</th></tr>
{{#each overdueBalances}}<tr><td style="padding:4px 8px 4px 0;">{{reference}}</td><td style="padding:4px 8px 4px 0;">{{contactName}}</td><td style="padding:4px 8px 4px 0;">{{eventTitle}}</td><td style="padding:4px 8px 4px 0;">{{balance}}</td><td style="padding:4px 0;">{{date dueOn}}</td></tr>
{{/each}}</table>
<p>See <code>eventops registrations balances --event SLUG --overdue</code>.</p>
{{/if}}`,
  text: `Hi {{name}},

{{#if groups.length}}These people with a ministry role have a working-with-children or similar clearance that is missing, expired, or expiring within {{windowDays}} days.{{/if}}
{{#each groups}}

{{title}} ({{entries.length}})
{{#each entries}}
- {{name}} ({{roles}}){{#if kind}}: {{kind}}{{else}}: no clearance on record{{/if}}{{#if expiresOn}}, expiry {{date expiresOn}}{{/if}}
{{/each}}
{{/each}}
{{#if groups.length}}

Please follow up with each person and update their record once a current clearance is sighted.{{/if}}
{{#if overdueBalances.length}}

Balances overdue ({{overdueBalances.length}})
{{#each overdueBalances}}
- {{reference}} {{contactName}}, {{eventTitle}}: {{balance}}, was due {{date dueOn}}
{{/each}}
See eventops registrations balances --event SLUG --overdue.{{/if}}`,
});
