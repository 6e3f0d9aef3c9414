import type { Knex } from 'knex';
import type { EventRecord } from '../admin/events.js';
import type { AppContext } from '../context.js';
import { enqueueMail } from '../mail/queue.js';
import { loadEmailBranding } from '../mail/render.js';
import { getBankDetails } from '../settings.js';
import { cardPaymentPossible, payNowUrl, paymentReference, registrationUrl } from './links.js';
import type { PricedRegistration } from './pricing.js';
import type { RegistrationContact } from './registrations.js';
import { registrationConfirmationEmail } from './templates/confirmation.js';

/**
 * Queues the confirmation of a free or bank-transfer registration in the
 * caller's transaction (card payments get their receipt from the webhook):
 * free → "confirmed", bank → bank details, reference and the pay-now link.
 */
export async function queueRegistrationConfirmation(
  trx: Knex.Transaction,
  ctx: Pick<AppContext, 'config' | 'cipher'>,
  input: {
    registrationId: string;
    contact: RegistrationContact;
    event: EventRecord;
    priced: PricedRegistration;
    /** Set when the office sends the confirmation again, so the mail API does not drop it as a repeat. */
    idempotencySuffix?: string;
  },
  now: Date,
): Promise<number> {
  const hasPublicUrl = Boolean(ctx.config.authUrl ?? ctx.config.appUrl);
  const owing = !input.priced.free;
  const [branding, bank] = await Promise.all([loadEmailBranding(trx, ctx.config), owing ? getBankDetails(trx) : undefined]);
  const rendered = registrationConfirmationEmail(
    {
      name: input.contact.name,
      eventTitle: input.event.title,
      eventStartsAt: input.event.startsAt,
      location: input.event.location,
      lines: input.priced.lines.map(({ label, amount }) => ({ label, amount })),
      totalMinor: input.priced.total,
      free: input.priced.free,
      reference: paymentReference(input.registrationId),
      bank,
      registrationUrl: hasPublicUrl ? registrationUrl(ctx.config, input.registrationId) : undefined,
      payNowUrl:
        owing && hasPublicUrl && cardPaymentPossible(ctx.config, { online_payment: input.event.onlinePayment })
          ? payNowUrl(ctx.config, input.registrationId)
          : undefined,
    },
    branding,
  );
  return enqueueMail(
    trx,
    ctx.cipher,
    {
      kind: 'registration-confirmation',
      registrationId: input.registrationId,
      message: { to: [input.contact.email], ...rendered, idempotencyKey: `confirmation-${input.registrationId}${input.idempotencySuffix ?? ''}` },
    },
    now,
  );
}
