import type { Knex } from 'knex';
import { AppError } from '../../errors.js';
import { paymentReference } from '../../registrations/reference.js';
import { contactEmailColumns, contactMobileColumn, type RegistrationStatus } from '../../registrations/registrations.js';
import { recordHistory } from '../../registrations/history.js';
import { lockRegistration, resolveRegistrationId, type RegistrationRow } from './lookup.js';
import type { OfficeContext } from './mark-paid.js';

export interface UpdateContactInput {
  registration: string;
  /** Already checked with the public form's rules (src/contact-rules.ts). */
  email?: string;
  /** An empty string removes the mobile. */
  mobile?: string;
  note?: string;
  actor: string;
}

export interface ContactChange {
  from: string | null;
  to: string | null;
}

export interface UpdateContactResult {
  registrationId: string;
  reference: string;
  status: RegistrationStatus;
  changed: { name?: ContactChange; email?: ContactChange; mobile?: ContactChange };
}

/**
 * Corrects a registration's contact address, under its row lock, stored as the registration flow
 * stores it (encrypted, the email's lookup hash beside it). Sends nothing: `resend` does, to the
 * new address. A cancelled registration is corrected too, as a record the office may still use.
 */
export async function updateRegistrationContact(ctx: OfficeContext, input: UpdateContactInput): Promise<UpdateContactResult> {
  const id = await resolveRegistrationId(ctx.db, input.registration);
  return ctx.db.transaction(async (trx) => {
    const registration = await lockRegistration(trx, id);
    const reference = paymentReference(id);
    const changed = await changeLockedContact(trx, ctx, registration, input);
    if (!changed.email && !changed.mobile) {
      throw new AppError('contact_unchanged', `registration ${reference} already has this contact; nothing changed`, {
        exitCode: 1,
        suggestion: `see it with \`eventops registrations show ${reference}\``,
      });
    }
    return { registrationId: id, reference, status: registration.status, changed };
  });
}

export interface ContactChangeInput {
  /** The contact's name, corrected by the registrant on the manage page (the office's command does not change it). */
  name?: string;
  email?: string;
  /** An empty string removes the mobile. */
  mobile?: string;
  note?: string;
  actor: string;
  /** Further facts for the history entry (e.g. the registrant's client). */
  changes?: Record<string, unknown>;
}

/**
 * Stores the contact fields that differ from the registration's, as the registration flow stores them (the email
 * and mobile encrypted, the email's lookup hash beside it), and records which fields changed, never the values:
 * the history is not encrypted. The caller holds the registration's row lock. Returns what changed; nothing when
 * nothing differs.
 */
export async function changeLockedContact(
  trx: Knex.Transaction,
  ctx: OfficeContext,
  registration: RegistrationRow,
  input: ContactChangeInput,
): Promise<UpdateContactResult['changed']> {
  const stored = {
    name: registration.contact_name,
    email: ctx.cipher.decrypt(registration.contact_email_enc),
    mobile: registration.contact_mobile_enc ? ctx.cipher.decrypt(registration.contact_mobile_enc) : null,
  };
  const wanted = {
    name: input.name ?? stored.name,
    email: input.email ?? stored.email,
    mobile: input.mobile === undefined ? stored.mobile : input.mobile || null,
  };
  const changed: UpdateContactResult['changed'] = {};
  if (wanted.name !== stored.name) changed.name = { from: stored.name, to: wanted.name };
  if (wanted.email !== stored.email) changed.email = { from: stored.email, to: wanted.email };
  if (wanted.mobile !== stored.mobile) changed.mobile = { from: stored.mobile, to: wanted.mobile };
  if (!changed.name && !changed.email && !changed.mobile) return changed;
  const now = ctx.clock.now();
  await trx('registrations')
    .where({ id: registration.id })
    .update({
      ...(changed.name ? { contact_name: wanted.name } : {}),
      ...(changed.email ? contactEmailColumns(ctx.cipher, wanted.email) : {}),
      ...(changed.mobile ? contactMobileColumn(ctx.cipher, wanted.mobile ?? undefined) : {}),
      updated_at: now,
    });
  await recordHistory(trx, {
    registrationId: registration.id,
    action: 'contact_updated',
    changes: { fields: Object.keys(changed), ...input.changes },
    note: input.note,
    actor: input.actor,
    now,
  });
  return changed;
}
