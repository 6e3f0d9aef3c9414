import type { EventPricing } from '../registrations/event-pricing.js';
import { recordHistory } from '../registrations/history.js';
import type { OfficeContext } from '../office/registrations/mark-paid.js';
import { changeLockedContact } from '../office/registrations/update-contact.js';
import { renameAttendees } from './attendee-names.js';
import { requestEmailChange } from './email-change.js';
import { lockManagedRegistration, ManageRefusedError, REGISTRANT_ACTOR, refuseUnlessChangeable } from './managed-registration.js';

export interface DetailsInput {
  /** Each already checked and trimmed with the public form's rules. */
  name: string;
  email: string;
  /** Empty: no mobile. */
  mobile: string;
  /** One per attendee, in the registration's order: names only, never more or fewer. */
  attendeeNames: string[];
  /** What the page showed in these fields when it was opened; absent from a post that did not carry it. */
  shown?: ShownDetails;
}

export interface ShownDetails {
  name: string;
  email: string;
  mobile: string;
  attendeeNames: string[];
}

/**
 * The details a post asks for: a field left as its page showed it keeps what is stored now, so a change made since
 * the page was opened (the office's, another tab's) is not put back by a save of some other field. A field the
 * family did edit is taken as typed. Without what was shown, every field is taken as posted.
 */
export function editedDetails(input: DetailsInput, stored: Omit<ShownDetails, 'attendeeNames'> & { attendeeNames: readonly string[] }): Omit<DetailsInput, 'shown'> {
  const { shown } = input;
  if (!shown) return input;
  const pick = (posted: string, was: string, now: string) => (posted === was ? now : posted);
  const sameAttendees = shown.attendeeNames.length === input.attendeeNames.length && stored.attendeeNames.length === input.attendeeNames.length;
  return {
    name: pick(input.name, shown.name, stored.name),
    email: pick(input.email, shown.email, stored.email),
    mobile: pick(input.mobile, shown.mobile, stored.mobile),
    attendeeNames: sameAttendees ? input.attendeeNames.map((name, index) => pick(name, shown.attendeeNames[index] as string, stored.attendeeNames[index] as string)) : input.attendeeNames,
  };
}

export type DetailsOutcome =
  | { kind: 'not_found' }
  | { kind: 'unchanged' }
  /** `emailPending`: a new email was asked for; it waits for the link emailed to it (email-change.ts). */
  | { kind: 'changed'; fields: string[]; emailPending: boolean };

export const ATTENDEES_FIXED_MESSAGE =
  'Adding or removing an attendee, or changing a ticket type, is done by the church office: please contact them.';

/**
 * The registrant's own corrections on the manage page, until the event's changesCloseAt: the contact's name and
 * mobile (stored as the office's update-contact stores them) and the attendees' names, at once; a new email only once
 * the new address confirms it (requestEmailChange). All in one transaction under the registration's row lock, each
 * in the history as by the registrant from `client` (clientKey); a refused email change refuses the whole post.
 */
export async function changeDetailsByRegistrant(ctx: OfficeContext, token: string, posted: DetailsInput, client: string): Promise<DetailsOutcome> {
  return ctx.db.transaction(async (trx) => {
    const managed = await lockManagedRegistration(trx, ctx.config.authSecret, token);
    if (!managed) return { kind: 'not_found' } as const;
    const now = ctx.clock.now();
    refuseUnlessChangeable(managed, now);
    const { registration, event } = managed;
    const storedEmail = ctx.cipher.decrypt(registration.contact_email_enc);
    const input = editedDetails(posted, {
      name: registration.contact_name,
      email: storedEmail,
      mobile: registration.contact_mobile_enc ? ctx.cipher.decrypt(registration.contact_mobile_enc) : '',
      attendeeNames: registration.attendees.map((attendee) => attendee.name),
    });
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

    // The email is left out here: it changes only once its new address confirms it.
    const changed = await changeLockedContact(trx, ctx, registration, {
      name: input.name,
      mobile: input.mobile,
      actor: REGISTRANT_ACTOR,
      changes: { client },
    });
    fields.push(...Object.keys(changed));
    const emailPending = input.email !== storedEmail;
    if (emailPending) await requestEmailChange(trx, ctx, managed, { newEmail: input.email, client });
    if (fields.length === 0 && !emailPending) return { kind: 'unchanged' } as const;
    return { kind: 'changed', fields, emailPending } as const;
  });
}
