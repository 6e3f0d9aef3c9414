import type { Knex } from 'knex';
import { countRateLimitHit } from '../db/rate-limits.js';
import { enqueueMail } from '../mail/queue.js';
import { loadEmailBranding } from '../mail/render.js';
import { bumpManageLinkVersion, manageUrl } from '../payments/manage-link.js';
import { eventFromRow, type EventRecord, type EventRow } from '../registrations/event-record.js';
import { recordHistory } from '../registrations/history.js';
import { paymentReference } from '../registrations/reference.js';
import type { RegistrationRow } from '../office/registrations/lookup.js';
import type { OfficeContext } from '../office/registrations/mark-paid.js';
import { changeLockedContact } from '../office/registrations/update-contact.js';
import { emailChangeUrl, readEmailChangeToken, type EmailChangeLinkKind } from './email-change-links.js';
import { ManageRefusedError, REGISTRANT_ACTOR, refuseUnlessChangeable, type ManagedRegistration } from './managed-registration.js';
import { confirmEmailChangeEmail, contactEmailChangedEmail, newManageLinkEmail } from './templates.js';

/**
 * A contact email changed on the manage page moves control of the registration (its links, and the sensitive
 * answers its page shows) to that address, so it takes effect only once the new address proves it reads its mail:
 * the change waits, pending, for the link emailed to it (EMAIL_CONFIRM_HOURS). Confirmed, it is stored as the
 * office's update-contact stores an address, every link of the registration is revoked (the new address is sent
 * its new manage link), and the old address gets an undo link, good for EMAIL_UNDO_DAYS: undoing puts the old
 * address back, revokes every link again and sends the new ones to the old address. While a change can still be
 * undone, no other email change is taken on the manage page (the office can still make one), so a second change
 * cannot move the undo email away from the registration's owner.
 */
export const EMAIL_CONFIRM_HOURS = 48;
export const EMAIL_UNDO_DAYS = 7;
/** Confirmation emails one registration may have sent in an hour: each goes to an address typed on the page. */
export const EMAIL_CHANGE_REQUESTS_PER_HOUR = 3;

const HOUR_MS = 3_600_000;

interface ChangeRow {
  id: string;
  registration_id: string;
  old_email_enc: string;
  new_email_enc: string;
  requested_at: Date;
  confirm_by: Date;
  confirmed_at: Date | null;
  undo_until: Date | null;
  undone_at: Date | null;
  replaced_at: Date | null;
}

/** A change that can still be confirmed, or still be undone. */
const pending = (row: ChangeRow, now: Date) => !row.confirmed_at && !row.replaced_at && !row.undone_at && row.confirm_by > now;
const undoable = (row: ChangeRow, now: Date) => row.confirmed_at !== null && !row.undone_at && row.undo_until !== null && row.undo_until > now;

/**
 * Asks for `newEmail` to become the contact (the manage page's details post, under the registration's lock): the
 * request is stored, any earlier one still pending is replaced, and the new address is emailed its confirmation
 * link. Nothing about the registration changes yet.
 */
export async function requestEmailChange(
  trx: Knex.Transaction,
  ctx: OfficeContext,
  managed: ManagedRegistration,
  input: { newEmail: string; client: string },
): Promise<void> {
  const now = ctx.clock.now();
  const { registration, event } = managed;
  const recent = await trx('contact_email_changes')
    .where({ registration_id: registration.id })
    .whereNotNull('confirmed_at')
    .whereNull('undone_at')
    .where('undo_until', '>', now)
    .first<ChangeRow | undefined>();
  if (recent?.undo_until) {
    throw new ManageRefusedError(
      'email_recently_changed',
      'The email of this registration was changed less than a week ago, and the previous address can still undo that change, so it cannot be changed again here yet. Please contact the church office.',
    );
  }
  const sent = await countRateLimitHit(trx, { bucket: 'email-change-confirmation', key: registration.id, windowMs: HOUR_MS, now });
  if (sent.hits > EMAIL_CHANGE_REQUESTS_PER_HOUR) {
    throw new ManageRefusedError('email_change_limit', 'We have sent several confirmation emails for this registration in the last hour. Please try again later.');
  }
  await trx('contact_email_changes')
    .where({ registration_id: registration.id })
    .whereNull('confirmed_at')
    .whereNull('replaced_at')
    .whereNull('undone_at')
    .update({ replaced_at: now });
  const confirmBy = new Date(now.getTime() + EMAIL_CONFIRM_HOURS * HOUR_MS);
  const [row] = await trx('contact_email_changes')
    .insert({
      registration_id: registration.id,
      old_email_enc: registration.contact_email_enc,
      new_email_enc: ctx.cipher.encrypt(input.newEmail),
      requested_at: now,
      confirm_by: confirmBy,
    })
    .returning<Array<{ id: string }>>('id');
  const changeId = (row as { id: string }).id;
  await recordHistory(trx, {
    registrationId: registration.id,
    action: 'email_change_requested',
    changes: { client: input.client, confirmBy: confirmBy.toISOString() },
    actor: REGISTRANT_ACTOR,
    now,
  });
  const rendered = confirmEmailChangeEmail(
    { eventTitle: event.title, reference: paymentReference(registration.id), confirmUrl: emailChangeUrl(ctx.config, 'confirm', changeId), confirmBy },
    await loadEmailBranding(trx, ctx.config),
  );
  await enqueueMail(
    trx,
    ctx.cipher,
    { kind: 'email-change-confirm', registrationId: registration.id, message: { to: [input.newEmail], ...rendered, idempotencyKey: `email-change-confirm-${changeId}` } },
    now,
  );
}

/** What the confirm and undo pages show before their button is pressed; undefined for a link that opens nothing. */
export interface EmailChangeView {
  eventTitle: string;
  newEmail: string;
  oldEmail: string;
}

export async function findEmailChange(ctx: OfficeContext, kind: EmailChangeLinkKind, token: string): Promise<EmailChangeView | undefined> {
  const id = readEmailChangeToken(ctx.config.authSecret, kind, token);
  if (!id) return undefined;
  const row = await ctx.db('contact_email_changes').where({ id }).first<ChangeRow | undefined>();
  const now = ctx.clock.now();
  if (!row || !(kind === 'confirm' ? pending(row, now) : undoable(row, now))) return undefined;
  const event = await ctx.db('registrations as r').join('events as e', 'e.id', 'r.event_id').where('r.id', row.registration_id).first<{ title: string } | undefined>('e.title');
  if (!event) return undefined;
  return { eventTitle: event.title, newEmail: ctx.cipher.decrypt(row.new_email_enc), oldEmail: ctx.cipher.decrypt(row.old_email_enc) };
}

export type EmailChangeOutcome = { kind: 'gone' } | { kind: 'confirmed'; email: string } | { kind: 'undone'; email: string };

/** The change a link names, with its registration's row lock (then the change's) held to the end of `trx`. */
async function lockChange(trx: Knex.Transaction, ctx: OfficeContext, kind: EmailChangeLinkKind, token: string) {
  const id = readEmailChangeToken(ctx.config.authSecret, kind, token);
  if (!id) return undefined;
  const found = await trx('contact_email_changes').where({ id }).first<{ registration_id: string } | undefined>('registration_id');
  if (!found) return undefined;
  // The registration's lock first, as every change of it takes; then the change, read again under it.
  const registration = await trx('registrations').where({ id: found.registration_id }).forUpdate().first<(RegistrationRow & { manage_link_version: number }) | undefined>();
  const change = await trx('contact_email_changes').where({ id }).forUpdate().first<ChangeRow | undefined>();
  const eventRow = registration ? await trx('events').where({ id: registration.event_id }).first<EventRow | undefined>() : undefined;
  if (!registration || !change || !eventRow) return undefined;
  return { registration, change, event: eventFromRow(eventRow) };
}

/**
 * The new address confirms (its link's button): within EMAIL_CONFIRM_HOURS, the change not replaced, the
 * registration still changeable (as any change on the manage page) and its address still the one the change was
 * asked from. Then the address is stored, every link revoked, the new address sent its manage link and the old one
 * its undo link.
 */
export async function confirmEmailChange(ctx: OfficeContext, token: string, client: string): Promise<EmailChangeOutcome> {
  return ctx.db.transaction(async (trx) => {
    const locked = await lockChange(trx, ctx, 'confirm', token);
    const now = ctx.clock.now();
    if (!locked || !pending(locked.change, now)) return { kind: 'gone' } as const;
    const { registration, change, event } = locked;
    refuseUnlessChangeable({ registration, event }, now);
    const oldEmail = ctx.cipher.decrypt(change.old_email_enc);
    const newEmail = ctx.cipher.decrypt(change.new_email_enc);
    // The office changed the address meanwhile: this request was about another one.
    if (ctx.cipher.decrypt(registration.contact_email_enc) !== oldEmail) return { kind: 'gone' } as const;
    await changeLockedContact(trx, ctx, registration, { email: newEmail, actor: REGISTRANT_ACTOR, changes: { client, confirmedByNewAddress: true } });
    const undoUntil = new Date(now.getTime() + EMAIL_UNDO_DAYS * 24 * HOUR_MS);
    await trx('contact_email_changes').where({ id: change.id }).update({ confirmed_at: now, undo_until: undoUntil });
    const version = await bumpManageLinkVersion(trx, registration.id);
    const branding = await loadEmailBranding(trx, ctx.config);
    const reference = paymentReference(registration.id);
    const name = registration.contact_name;
    await sendManageLink(trx, ctx, { registrationId: registration.id, version, to: newEmail, name, event, reference, branding, now });
    await enqueueMail(
      trx,
      ctx.cipher,
      {
        kind: 'contact-email-changed',
        registrationId: registration.id,
        message: {
          to: [oldEmail],
          ...contactEmailChangedEmail({ name, eventTitle: event.title, reference, newEmail, undoUrl: emailChangeUrl(ctx.config, 'undo', change.id), undoUntil }, branding),
          idempotencyKey: `email-changed-${registration.id}-${version}`,
        },
      },
      now,
    );
    return { kind: 'confirmed', email: newEmail } as const;
  });
}

/**
 * The old address undoes a confirmed change (its link's button), within EMAIL_UNDO_DAYS, while the registration's
 * address is still the one the change set: the old address is stored again, every link revoked (those the new
 * address was sent too) and the old address sent the new manage link. Taken whatever the event's changesCloseAt
 * and the registration's status: it gives the registration back to its owner, it changes nothing else.
 */
export async function undoEmailChange(ctx: OfficeContext, token: string, client: string): Promise<EmailChangeOutcome> {
  return ctx.db.transaction(async (trx) => {
    const locked = await lockChange(trx, ctx, 'undo', token);
    const now = ctx.clock.now();
    if (!locked || !undoable(locked.change, now)) return { kind: 'gone' } as const;
    const { registration, change, event } = locked;
    const oldEmail = ctx.cipher.decrypt(change.old_email_enc);
    if (ctx.cipher.decrypt(registration.contact_email_enc) !== ctx.cipher.decrypt(change.new_email_enc)) return { kind: 'gone' } as const;
    await changeLockedContact(trx, ctx, registration, { email: oldEmail, actor: REGISTRANT_ACTOR, changes: { client, undoneByOldAddress: true } });
    await trx('contact_email_changes').where({ id: change.id }).update({ undone_at: now });
    const version = await bumpManageLinkVersion(trx, registration.id);
    const branding = await loadEmailBranding(trx, ctx.config);
    await sendManageLink(trx, ctx, {
      registrationId: registration.id,
      version,
      to: oldEmail,
      name: registration.contact_name,
      event,
      reference: paymentReference(registration.id),
      branding,
      now,
    });
    return { kind: 'undone', email: oldEmail } as const;
  });
}

async function sendManageLink(
  trx: Knex.Transaction,
  ctx: OfficeContext,
  input: {
    registrationId: string;
    version: number;
    to: string;
    name: string;
    event: EventRecord;
    reference: string;
    branding: Awaited<ReturnType<typeof loadEmailBranding>>;
    now: Date;
  },
): Promise<void> {
  const url = manageUrl(ctx.config, { registrationId: input.registrationId, version: input.version });
  await enqueueMail(
    trx,
    ctx.cipher,
    {
      kind: 'manage-link',
      registrationId: input.registrationId,
      message: {
        to: [input.to],
        ...newManageLinkEmail({ name: input.name, eventTitle: input.event.title, eventStartsAt: input.event.startsAt, reference: input.reference, manageUrl: url }, input.branding),
        idempotencyKey: `manage-link-${input.registrationId}-${input.version}`,
      },
    },
    input.now,
  );
}
