import { enqueueMail } from '../../mail/queue.js';
import { loadEmailBranding } from '../../mail/render.js';
import { bumpManageLinkVersion, manageUrl } from '../../payments/manage-link.js';
import type { EventPricing } from '../../registrations/event-pricing.js';
import { recordHistory } from '../../registrations/history.js';
import { paymentReference } from '../../registrations/reference.js';
import type { OfficeContext } from '../registrations/mark-paid.js';
import { changeLockedContact } from '../registrations/update-contact.js';
import { renameAttendees } from './attendee-names.js';
import { lockManagedRegistration, ManageRefusedError, REGISTRANT_ACTOR, refuseUnlessChangeable } from './managed-registration.js';
import { contactEmailChangedEmail, newManageLinkEmail } from './templates.js';

export interface DetailsInput {
  /** Each already checked and trimmed with the public form's rules. */
  name: string;
  email: string;
  /** Empty: no mobile. */
  mobile: string;
  /** One per attendee, in the registration's order: names only, never more or fewer. */
  attendeeNames: string[];
}

export type DetailsOutcome =
  | { kind: 'not_found' }
  | { kind: 'unchanged' }
  /** `newLink`: the email changed, so the link used is dead and a new one went to the new address. */
  | { kind: 'changed'; fields: string[]; newLink: boolean };

export const ATTENDEES_FIXED_MESSAGE =
  'Adding or removing an attendee, or changing a ticket type, is done by the church office: please contact them.';

/**
 * The registrant's own corrections on the manage page, until the event's changesCloseAt: the contact's name,
 * email and mobile (stored as the office's update-contact stores them) and the attendees' names. All in one
 * transaction under the registration's row lock, each in the history as by the registrant from `client`
 * (clientKey). An email change raises the link's version (the link used stops working), tells the old address and
 * sends the new link to the new one.
 */
export async function changeDetailsByRegistrant(ctx: OfficeContext, token: string, input: DetailsInput, client: string): Promise<DetailsOutcome> {
  return ctx.db.transaction(async (trx) => {
    const managed = await lockManagedRegistration(trx, ctx.config.authSecret, token);
    if (!managed) return { kind: 'not_found' } as const;
    const now = ctx.clock.now();
    refuseUnlessChangeable(managed, now);
    const { registration, event } = managed;
    if (input.attendeeNames.length !== registration.attendees.length) throw new ManageRefusedError('attendees_fixed', ATTENDEES_FIXED_MESSAGE);

    const fields: string[] = [];
    const tiers = new Map((event.pricing as EventPricing).tiers.map((tier) => [tier.id, tier.label]));
    const renamed = renameAttendees(registration.attendees, registration.line_items, input.attendeeNames, (tier) => tiers.get(tier));
    if (renamed.renamed > 0) {
      await trx('registrations')
        .where({ id: registration.id })
        .update({ attendees: JSON.stringify(renamed.attendees), line_items: JSON.stringify(renamed.lines), updated_at: now });
      await recordHistory(trx, {
        registrationId: registration.id,
        action: 'attendees_updated',
        changes: { renamed: renamed.renamed, client },
        actor: REGISTRANT_ACTOR,
        now,
      });
      fields.push('attendees');
    }

    const oldEmail = ctx.cipher.decrypt(registration.contact_email_enc);
    const changed = await changeLockedContact(trx, ctx, registration, {
      name: input.name,
      email: input.email,
      mobile: input.mobile,
      actor: REGISTRANT_ACTOR,
      changes: { client },
    });
    fields.push(...Object.keys(changed));
    if (fields.length === 0) return { kind: 'unchanged' } as const;

    if (changed.email) {
      const version = await bumpManageLinkVersion(trx, registration.id);
      const branding = await loadEmailBranding(trx, ctx.config);
      const reference = paymentReference(registration.id);
      const name = input.name;
      await enqueueMail(
        trx,
        ctx.cipher,
        {
          kind: 'contact-email-changed',
          registrationId: registration.id,
          message: {
            to: [oldEmail],
            ...contactEmailChangedEmail({ name, eventTitle: event.title, reference }, branding),
            idempotencyKey: `email-changed-${registration.id}-${version}`,
          },
        },
        now,
      );
      await enqueueMail(
        trx,
        ctx.cipher,
        {
          kind: 'manage-link',
          registrationId: registration.id,
          message: {
            to: [input.email],
            ...newManageLinkEmail(
              { name, eventTitle: event.title, eventStartsAt: event.startsAt, reference, manageUrl: manageUrl(ctx.config, { registrationId: registration.id, version }) },
              branding,
            ),
            idempotencyKey: `manage-link-${registration.id}-${version}`,
          },
        },
        now,
      );
    }
    return { kind: 'changed', fields, newLink: Boolean(changed.email) } as const;
  });
}
