import type { AppContext } from '../../context.js';
import type { UnknownKeyVersionError } from '../../crypto/field-cipher.js';
import { raiseOperationsAlert } from '../alerts.js';
import type { WebhookAction } from './map.js';

/**
 * A payment whose staged registration is under a key this server lacks (a key rotation that
 * reached some servers and not others, or a key removed too early) is answered 500, so the
 * provider delivers it again and it is recorded once the key is back. Meanwhile the member has
 * paid and has no receipt, so the administrators are told at once, not by next week's error
 * digest: one open alert per missing key, in a transaction of its own (the delivery's rolled back).
 */
export async function alertUnreadablePayment(
  ctx: UnreadableContext,
  error: UnknownKeyVersionError,
  delivery: { eventId: string; action: WebhookAction },
): Promise<boolean> {
  const ids = delivery.action.kind === 'complete' ? delivery.action : undefined;
  return alertUnreadable(ctx, error, {
    providerEventId: delivery.eventId,
    providerSessionId: ids?.providerSessionId,
    paymentIntentId: ids?.paymentIntentId ?? undefined,
  });
}

type UnreadableContext = Pick<AppContext, 'db' | 'config' | 'clock' | 'cipher' | 'logger'>;

/** The payment that could not be recorded: the provider's event (or reconcile's synthetic one) and its ids. */
export interface UnreadablePayment {
  providerEventId: string;
  providerSessionId?: string;
  paymentIntentId?: string;
}

/** The same alert for a payment reconcile found paid at the provider and could not record; true when raised now. */
export async function alertUnreadable(ctx: UnreadableContext, error: UnknownKeyVersionError, payment: UnreadablePayment): Promise<boolean> {
  const { version } = error;
  const variable = `ENCRYPTION_KEY_${version.toUpperCase()}`;
  return ctx.db.transaction(async (trx) => {
    await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [`eventops:payment-unreadable:${version}`]);
    const open = await trx('operations_alerts')
      .where({ kind: 'payment_unreadable' })
      .whereNull('resolved_at')
      .whereRaw(`details->>'keyVersion' = ?`, [version])
      .first('id');
    if (open) return false;
    await raiseOperationsAlert(trx, ctx, {
      kind: 'payment_unreadable',
      reason:
        `card payments cannot be recorded: their registrations are encrypted with key ${version}, which this server does not have. ` +
        `Restart every server with ${variable} set; the provider delivers each payment again for up to 3 days, reconcile finds it after that, and it is recorded then, with its receipt`,
      providerSessionId: payment.providerSessionId,
      paymentIntentId: payment.paymentIntentId,
      details: { keyVersion: version, providerEventId: payment.providerEventId },
    });
    return true;
  });
}
