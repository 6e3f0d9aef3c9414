import { defineEmailTemplate } from '../mail/render.js';
import { BANK_TRANSFER_HTML, BANK_TRANSFER_TEXT } from '../payments/templates/bank-transfer-lines.js';
import { MANAGE_LINK_HTML, MANAGE_LINK_TEXT } from '../payments/templates/manage-link-lines.js';

export interface EmailChangedData {
  name: string;
  eventTitle: string;
  reference: string;
  newEmail: string;
  /** The old address's way back: a page with an "Undo" button. */
  undoUrl: string;
  undoUntil: Date;
}

/** To the old address once the new one confirmed the change: the old links no longer work, and how to undo it. */
export const contactEmailChangedEmail = defineEmailTemplate<EmailChangedData>({
  subject: 'Your registration email was changed: {{eventTitle}}',
  html: `<p>Hi {{name}},</p>
<p>The contact email of your registration for <strong>{{eventTitle}}</strong> (reference <strong>{{reference}}</strong>) was changed on its manage page to {{newEmail}}, and that address confirmed it. From now on we write to the new address, and the links in the emails we sent here no longer work.</p>
<p>If you did not make this change, undo it: <a href="{{undoUrl}}">Undo the change</a> (until {{dateTime undoUntil}}). The registration's email goes back to this address, we send its new links here, and the links sent to the other address stop working. Then please contact the church office and quote the reference.</p>`,
  text: `Hi {{name}},

The contact email of your registration for {{eventTitle}} (reference {{reference}}) was changed on its manage page to {{newEmail}}, and that address confirmed it. From now on we write to the new address, and the links in the emails we sent here no longer work.

If you did not make this change, undo it (until {{dateTime undoUntil}}): {{undoUrl}}
The registration's email goes back to this address, we send its new links here, and the links sent to the other address stop working. Then please contact the church office and quote the reference.`,
});

export interface ConfirmEmailData {
  eventTitle: string;
  reference: string;
  confirmUrl: string;
  confirmBy: Date;
}

/**
 * To the new address when a change to it is asked for on the manage page: its confirmation link. It says nothing
 * of the registration beyond the event and reference (no names, amounts or answers): this address is not proven yet.
 */
export const confirmEmailChangeEmail = defineEmailTemplate<ConfirmEmailData>({
  subject: 'Confirm your email address: {{eventTitle}}',
  html: `<p>Hello,</p>
<p>On the manage page of a registration for <strong>{{eventTitle}}</strong> (reference <strong>{{reference}}</strong>), someone asked to make this address its contact email.</p>
<p>If that was you, confirm it: <a href="{{confirmUrl}}">Confirm this address</a> (until {{dateTime confirmBy}}). Until then we keep writing to the registration's current address.</p>
<p>If it was not you, ignore this email: nothing changes.</p>`,
  text: `Hello,

On the manage page of a registration for {{eventTitle}} (reference {{reference}}), someone asked to make this address its contact email.

If that was you, confirm it (until {{dateTime confirmBy}}): {{confirmUrl}}
Until then we keep writing to the registration's current address.

If it was not you, ignore this email: nothing changes.`,
});

export interface NewManageLinkData {
  name: string;
  eventTitle: string;
  eventStartsAt: Date;
  reference: string;
  manageUrl: string;
}

/** To the new address once it confirmed an email change (or the old one, after an undo): the registration's new manage link. */
export const newManageLinkEmail = defineEmailTemplate<NewManageLinkData>({
  subject: 'Your registration: {{eventTitle}}',
  html: `<p>Hi {{name}},</p>
<p>This address is now the contact for the registration for <strong>{{eventTitle}}</strong> ({{dateTime eventStartsAt}}), reference <strong>{{reference}}</strong>.</p>
${MANAGE_LINK_HTML}
<p>Keep this email: the links sent to the old address no longer work.</p>`,
  text: `Hi {{name}},

This address is now the contact for the registration for {{eventTitle}} ({{dateTime eventStartsAt}}), reference {{reference}}.
${MANAGE_LINK_TEXT}

Keep this email: the links sent to the old address no longer work.`,
});

export interface RegistrantCancelledData {
  reference: string;
  contactName: string;
  eventTitle: string;
  eventStartsAt: Date;
  seatsFreed: number;
  /** "1 place was" or "3 places were". */
  placesReleased?: string;
}

/** To the office (ADMIN and STAFF users) when a registrant cancelled an unpaid or free registration themselves. */
export const registrantCancelledOfficeEmail = defineEmailTemplate<RegistrantCancelledData>({
  subject: 'Registration {{reference}} cancelled by the registrant: {{eventTitle}}',
  html: `<p><strong>{{contactName}}</strong> cancelled registration <strong>{{reference}}</strong> for <strong>{{eventTitle}}</strong> ({{dateTime eventStartsAt}}) on its manage page.</p>
<p>Nothing had been paid, so nothing is owed back. {{placesReleased}} released.</p>
<p style="font-family:monospace;">eventops registrations show {{reference}}</p>`,
  text: `{{contactName}} cancelled registration {{reference}} for {{eventTitle}} ({{dateTime eventStartsAt}}) on its manage page.

Nothing had been paid, so nothing is owed back. {{placesReleased}} released.

eventops registrations show {{reference}}`,
});

export interface ExtrasAddedData {
  name: string;
  eventTitle: string;
  eventStartsAt: Date;
  reference: string;
  /** Each extra added by this post, at the price it was added for. */
  added: Array<{ label: string; amount: number }>;
  totalMinor: number;
  /** Paid so far, and help with the cost, as the ledger holds them once the extras are written. */
  paidMinor: number;
  creditedMinor: number;
  balanceMinor: number;
  /** While something is owed and Settings hold all three bank details. */
  bank?: { accountName: string; bsb: string; accountNumber: string };
  /** While something is owed and a card can pay it: the pay page asks for the balance left when it is opened. */
  payNowUrl?: string;
  manageUrl?: string;
}

/** To the registration's contact when the family adds extras on the manage page: what was added, the new total and how to pay what is owed. */
export const extrasAddedEmail = defineEmailTemplate<ExtrasAddedData>({
  subject: 'Extras added: {{eventTitle}}',
  html: `<p>Hi {{name}},</p>
<p>These extras were added to your registration for <strong>{{eventTitle}}</strong> ({{dateTime eventStartsAt}}), reference <strong>{{reference}}</strong>:</p>
<table role="presentation" cellspacing="0" cellpadding="0" style="margin:0 0 16px;">
{{#each added}}<tr><td style="padding:2px 12px 2px 0;">{{label}}</td><td style="text-align:right;">{{money amount}}</td></tr>
{{/each}}</table>
<p>The registration's total is now <strong>{{money totalMinor}}</strong>.{{#if paidMinor}} Paid so far: {{money paidMinor}}.{{/if}}{{#if creditedMinor}} Help with the cost: {{money creditedMinor}}.{{/if}}
{{#if balanceMinor}}Still to pay: <strong>{{money balanceMinor}}</strong>.{{else}}Nothing more is owed.{{/if}}</p>
{{#if payNowUrl}}<p><a href="{{payNowUrl}}" style="display:inline-block;padding:10px 16px;border-radius:6px;background:#0f172a;color:#ffffff;text-decoration:none;">Pay now by card</a></p>{{/if}}
${BANK_TRANSFER_HTML}
${MANAGE_LINK_HTML}`,
  text: `Hi {{name}},

These extras were added to your registration for {{eventTitle}} ({{dateTime eventStartsAt}}), reference {{reference}}:
{{#each added}}
- {{label}}: {{money amount}}
{{/each}}

The registration's total is now {{money totalMinor}}.{{#if paidMinor}} Paid so far: {{money paidMinor}}.{{/if}}{{#if creditedMinor}} Help with the cost: {{money creditedMinor}}.{{/if}}
{{#if balanceMinor}}Still to pay: {{money balanceMinor}}.{{else}}Nothing more is owed.{{/if}}
{{#if payNowUrl}}

Pay now by card: {{payNowUrl}}
{{/if}}
{{#if bank}}

{{/if}}
${BANK_TRANSFER_TEXT}
${MANAGE_LINK_TEXT}`,
});
