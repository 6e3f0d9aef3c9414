import crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { AppContext } from '../context.js';
import { enqueueMail } from '../mail/queue.js';
import { loadEmailBranding } from '../mail/render.js';
import { belowCardMinimum } from '../payments/card-minimum.js';
import { cardPaymentPossible, payNowUrl } from '../payments/links.js';
import { manageUrl } from '../payments/manage-link.js';
import type { EventRecord } from '../registrations/event-record.js';
import type { RegistrationMoney } from '../registrations/ledger.js';
import { cardSurcharge } from '../registrations/pricing.js';
import { paymentReference } from '../registrations/reference.js';
import { getBankDetails, getCardFeeRate } from '../settings.js';
import type { ManagedRegistration } from './managed-registration.js';
import { extrasAddedEmail } from './templates.js';

/**
 * Queues, in the caller's transaction, the email that tells the registration's contact which extras were added,
 * the new total and, while something is owed, how to pay it: the bank details and reference, and the pay page
 * when a card can pay the balance (the same rules as the payment reminder: the event takes cards, a public URL,
 * and the balance with its own card fee at least the provider's minimum).
 */
export async function queueExtrasAddedEmail(
  trx: Knex.Transaction,
  ctx: Pick<AppContext, 'config' | 'cipher'>,
  input: {
    registration: ManagedRegistration['registration'];
    event: EventRecord;
    added: ReadonlyArray<{ label: string; amount: number }>;
    totalMinor: number;
    money: Pick<RegistrationMoney, 'paidMinor' | 'creditedMinor' | 'balanceMinor'>;
    now: Date;
  },
): Promise<void> {
  const { registration, event, money } = input;
  const owing = money.balanceMinor > 0;
  const linked = Boolean(ctx.config.authUrl ?? ctx.config.appUrl);
  const version = registration.manage_link_version;
  const cardFee = owing && event.passCardFee ? cardSurcharge(money.balanceMinor, await getCardFeeRate(trx)) : 0;
  const byCard = owing && linked && cardPaymentPossible(ctx.config, { online_payment: event.onlinePayment }) && !belowCardMinimum(ctx.config, money.balanceMinor + cardFee);
  const rendered = extrasAddedEmail(
    {
      name: registration.contact_name,
      eventTitle: event.title,
      eventStartsAt: event.startsAt,
      reference: paymentReference(registration.id),
      added: input.added.map(({ label, amount }) => ({ label, amount })),
      totalMinor: input.totalMinor,
      paidMinor: money.paidMinor,
      creditedMinor: money.creditedMinor,
      balanceMinor: money.balanceMinor,
      bank: owing ? await getBankDetails(trx) : undefined,
      payNowUrl: byCard ? payNowUrl(ctx.config, registration.id, version) : undefined,
      manageUrl: linked ? manageUrl(ctx.config, { registrationId: registration.id, version }) : undefined,
    },
    await loadEmailBranding(trx, ctx.config),
  );
  await enqueueMail(
    trx,
    ctx.cipher,
    {
      kind: 'extras-added',
      registrationId: registration.id,
      message: { to: [ctx.cipher.decrypt(registration.contact_email_enc)], ...rendered, idempotencyKey: `extras-added-${crypto.randomUUID()}` },
    },
    input.now,
  );
}
