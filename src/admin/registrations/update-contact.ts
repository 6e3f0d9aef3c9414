import { AppError } from '../../errors.js';
import { paymentReference } from '../../registrations/reference.js';
import { contactEmailColumns, contactMobileColumn, type RegistrationStatus } from '../../registrations/registrations.js';
import { recordHistory } from '../../registrations/history.js';
import { lockRegistration, resolveRegistrationId } from './lookup.js';
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
  changed: { email?: ContactChange; mobile?: ContactChange };
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
    const stored = {
      email: ctx.cipher.decrypt(registration.contact_email_enc),
      mobile: registration.contact_mobile_enc ? ctx.cipher.decrypt(registration.contact_mobile_enc) : null,
    };
    const wanted = {
      email: input.email ?? stored.email,
      mobile: input.mobile === undefined ? stored.mobile : input.mobile || null,
    };
    const changed: UpdateContactResult['changed'] = {};
    if (wanted.email !== stored.email) changed.email = { from: stored.email, to: wanted.email };
    if (wanted.mobile !== stored.mobile) changed.mobile = { from: stored.mobile, to: wanted.mobile };
    if (!changed.email && !changed.mobile) {
      throw new AppError('contact_unchanged', `registration ${reference} already has this contact; nothing changed`, {
        exitCode: 1,
        suggestion: `see it with \`eventops registrations show ${reference}\``,
      });
    }
    const now = ctx.clock.now();
    await trx('registrations')
      .where({ id })
      .update({
        ...(changed.email ? contactEmailColumns(ctx.cipher, wanted.email) : {}),
        ...(changed.mobile ? contactMobileColumn(ctx.cipher, wanted.mobile ?? undefined) : {}),
        updated_at: now,
      });
    // The history is not encrypted: it names the fields, never the addresses.
    await recordHistory(trx, {
      registrationId: id,
      action: 'contact_updated',
      changes: { fields: Object.keys(changed) },
      note: input.note,
      actor: input.actor,
      now,
    });
    return { registrationId: id, reference, status: registration.status, changed };
  });
}
