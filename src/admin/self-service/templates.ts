import { defineEmailTemplate } from '../../mail/render.js';

export interface EmailChangedData {
  name: string;
  eventTitle: string;
  reference: string;
}

/** To the old address when the registrant moved the registration to another: the old manage link no longer works. */
export const contactEmailChangedEmail = defineEmailTemplate<EmailChangedData>({
  subject: 'Your registration email was changed: {{eventTitle}}',
  html: `<p>Hi {{name}},</p>
<p>The contact email of your registration for <strong>{{eventTitle}}</strong> (reference <strong>{{reference}}</strong>) was just changed on its manage page. From now on we write to the new address, and the link in the emails we sent here no longer works.</p>
<p>If you did not make this change, please contact the church office at once and quote the reference.</p>`,
  text: `Hi {{name}},

The contact email of your registration for {{eventTitle}} (reference {{reference}}) was just changed on its manage page. From now on we write to the new address, and the link in the emails we sent here no longer works.

If you did not make this change, please contact the church office at once and quote the reference.`,
});

export interface NewManageLinkData {
  name: string;
  eventTitle: string;
  eventStartsAt: Date;
  reference: string;
  manageUrl: string;
}

/** To the new address after an email change: the registration's new manage link. */
export const newManageLinkEmail = defineEmailTemplate<NewManageLinkData>({
  subject: 'Your registration: {{eventTitle}}',
  html: `<p>Hi {{name}},</p>
<p>This address is now the contact for the registration for <strong>{{eventTitle}}</strong> ({{dateTime eventStartsAt}}), reference <strong>{{reference}}</strong>.</p>
<p><a href="{{manageUrl}}">Manage your registration</a></p>
<p>Keep this email: the link is yours alone, and the links sent to the old address no longer work.</p>`,
  text: `Hi {{name}},

This address is now the contact for the registration for {{eventTitle}} ({{dateTime eventStartsAt}}), reference {{reference}}.

Manage your registration: {{manageUrl}}

Keep this email: the link is yours alone, and the links sent to the old address no longer work.`,
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
