import type { Knex } from 'knex';
import { recordHistory } from '../registrations/history.js';
import type { AppContext } from '../context.js';
import { RELEASE_AT, daysAfter } from '../payments/hold-release.js';
import { cardPaymentPossible, payNowUrl } from '../payments/links.js';
import { manageUrl } from '../payments/manage-link.js';
import { paymentReference } from '../registrations/reference.js';
import { cardPaymentInFlightSql, keptCardPaymentOpenSql } from '../registrations/card-checkouts.js';
import { counted } from '../plural.js';
import { helpOpenSql } from '../registrations/help-requests.js';

/**
 * Seat holds that end: an event with `unpaidHoldDays` N lets an unpaid
 * bank-transfer registration hold its seats for N days. One day before (halfway
 * through a one-day hold), the registrant is reminded; at N days, sweep-checkouts cancels it (freeing the
 * seats) and tells them. Days are calendar days in APP_TIMEZONE, so a hold made
 * at 10:00 ends at 10:00 local time even across a daylight-saving change.
 *
 * A registration is left alone while a card payment for it may be in flight (a
 * pay-now checkout OPEN, or EXPIRED with its payload kept for a late completion,
 * other than a claim abandoned before its session was recorded, which nobody can
 * pay: cardPaymentInFlightSql), once the office has recorded part of
 * its payment, after its event has started or been deleted, and while a card
 * payment for it was kept without settling it (UNFULFILLED, its alert still
 * open): "no payment has reached us" would be false, and the office is deciding.
 */

const HOLD_ACTOR = 'sweep-checkouts';

/**
 * The notices bring the mail templates (handlebars, the settings, the mail queue):
 * loaded only by a run that has a hold to release or remind, not by every hourly sweep.
 */
const loadNotices = () => import('../signup/notices.js');
/** Only for reminders about to be sent: the sweep's cold start does not load pricing. */
const loadCardMinimum = async () => {
  const [{ belowCardMinimum }, { cardSurcharge }, { getCardFeeRate }] = await Promise.all([
    import('../payments/card-minimum.js'),
    import('../registrations/pricing.js'),
    import('../settings.js'),
  ]);
  return { belowCardMinimum, cardSurcharge, getCardFeeRate };
};

export interface UnpaidHoldCounts {
  holdsReleased: number;
  holdReminders: number;
}

interface HeldRow {
  id: string;
  contact_name: string;
  contact_email_enc: string;
  attendee_count: number;
  total_minor: number;
  surcharge_minor: number;
  manage_link_version: number;
  online_payment: boolean;
  pass_card_fee: boolean;
  title: string;
  starts_at: Date;
  release_at: Date;
}

/**
 * One day before the end; for a one-day hold, halfway through it: the registrant has only just
 * been sent the bank details, and "we have not received your payment" minutes later is noise.
 */
const REMIND_AT = `GREATEST(${daysAfter('r.created_at', 'e.unpaid_hold_days - 1')}, ${daysAfter('r.help_decided_at', 'e.unpaid_hold_days - 1')}, e.unpaid_hold_since, r.created_at + interval '12 hours', r.help_decided_at + interval '12 hours')`;

/** Unpaid bank-transfer holds on live events with a hold limit, that nothing else is settling. */
const HELD = `r.event_id = e.id
  AND r.status = 'PENDING' AND r.payment_method = 'bank' AND r.total_minor > 0
  AND e.unpaid_hold_days IS NOT NULL AND e.deleted_at IS NULL AND e.starts_at > :now
  AND NOT EXISTS (SELECT 1 FROM registration_money m WHERE m.registration_id = r.id AND (m.office_paid_minor > 0 OR m.credited_minor > 0))
  AND NOT EXISTS (SELECT 1 FROM checkout_sessions c WHERE c.registration_id = r.id AND ${cardPaymentInFlightSql('c', ':now')})
  AND NOT ${keptCardPaymentOpenSql('r.id')}
  AND NOT ${helpOpenSql('r')}`;

const RETURNED = `r.id, r.contact_name, r.contact_email_enc, r.attendee_count, r.total_minor, r.surcharge_minor, r.manage_link_version, e.online_payment, e.pass_card_fee, e.title, e.starts_at, ${RELEASE_AT} AS release_at`;

type HoldContext = Pick<AppContext, 'db' | 'config' | 'cipher' | 'logger'>;

/** What a run would do, for --dry-run: reads only. */
export async function previewUnpaidHolds(ctx: HoldContext, now: Date): Promise<string[]> {
  const bindings = { tz: ctx.config.regional.timeZone, now };
  const { rows } = await ctx.db.raw<{ rows: Array<HeldRow & { due: 'release' | 'remind' }> }>(
    `SELECT ${RETURNED}, CASE WHEN ${RELEASE_AT} <= :now THEN 'release' ELSE 'remind' END AS due
       FROM registrations r, events e
      WHERE ${HELD} AND (${RELEASE_AT} <= :now OR (r.hold_reminder_sent_at IS NULL AND ${REMIND_AT} <= :now))
      ORDER BY r.created_at`,
    bindings,
  );
  const { localMinute } = await import('../local-time.js');
  const local = (date: Date) => `${localMinute(date, ctx.config.regional.timeZone)} ${ctx.config.regional.timeZone}`;
  return rows.map((row) =>
    row.due === 'release'
      ? `release the unpaid hold of ${paymentReference(row.id)} (${counted(row.attendee_count, 'seat', 'seats')}, "${row.title}") and notify ${row.contact_name}`
      : `remind ${row.contact_name} that the hold of ${paymentReference(row.id)} ends ${local(row.release_at)}`,
  );
}

/**
 * Locks the registrations that `due` selects, skipping any another command holds
 * (mark-paid, cancel, pay-now, the webhook): the next sweep looks at them again,
 * once that command has settled them. The caller then writes in a statement of
 * its own, whose fresh snapshot sees what a command that finished while this one
 * waited committed: a pay-now checkout opened meanwhile changes no registration
 * column, so a single statement's recheck of the locked row would miss it.
 */
async function lockHeld(trx: Knex.Transaction, due: string, bindings: Record<string, unknown>): Promise<string[]> {
  const { rows } = await trx.raw<{ rows: Array<{ id: string }> }>(
    `SELECT r.id FROM registrations r, events e WHERE ${HELD} AND ${due} FOR UPDATE OF r SKIP LOCKED`,
    bindings,
  );
  return rows.map((row) => row.id);
}

/**
 * Cancels every hold past its end, then queues each notice and history row in
 * the same transaction.
 */
export async function releaseUnpaidHolds(ctx: HoldContext, now: Date): Promise<number> {
  return ctx.db.transaction(async (trx) => {
    const bindings = { tz: ctx.config.regional.timeZone, now };
    const due = `${RELEASE_AT} <= :now`;
    const ids = await lockHeld(trx, due, bindings);
    if (ids.length === 0) return 0;
    const { rows } = await trx.raw<{ rows: HeldRow[] }>(
      `UPDATE registrations r
          SET status = 'CANCELLED', cancelled_at = :now, cancel_reason = 'unpaid_hold', updated_at = :now
         FROM events e
        WHERE r.id = ANY(:ids) AND ${HELD} AND ${due}
      RETURNING ${RETURNED}`,
      { ...bindings, ids },
    );
    if (rows.length === 0) return 0;
    const { queueCancellationNotice } = await loadNotices();
    for (const row of rows) {
      await queueCancellationNotice(trx, ctx, recipient(ctx, row), { holdReleased: true, paid: false }, now);
      await recordHistory(trx, {
        registrationId: row.id,
        action: 'hold_released',
        changes: { status: { from: 'PENDING', to: 'CANCELLED' }, seatsFreed: row.attendee_count },
        actor: HOLD_ACTOR,
        now,
      });
    }
    ctx.logger.info({ released: rows.length }, 'unpaid holds released');
    return rows.length;
  });
}

/** Marks and queues "your hold ends tomorrow" for every hold within a day of its end, once each. */
export async function remindUnpaidHolds(ctx: HoldContext, now: Date): Promise<number> {
  return ctx.db.transaction(async (trx) => {
    const bindings = { tz: ctx.config.regional.timeZone, now };
    const due = `r.hold_reminder_sent_at IS NULL AND ${REMIND_AT} <= :now AND ${RELEASE_AT} > :now`;
    const ids = await lockHeld(trx, due, bindings);
    if (ids.length === 0) return 0;
    const { rows } = await trx.raw<{ rows: HeldRow[] }>(
      `UPDATE registrations r
          SET hold_reminder_sent_at = :now
         FROM events e
        WHERE r.id = ANY(:ids) AND ${HELD} AND ${due}
      RETURNING ${RETURNED}`,
      { ...bindings, ids },
    );
    if (rows.length === 0) return 0;
    const { queueHoldEndingReminder } = await loadNotices();
    const links = Boolean(ctx.config.authUrl ?? ctx.config.appUrl);
    const { belowCardMinimum, cardSurcharge, getCardFeeRate } = await loadCardMinimum();
    const cardFee = rows.some((row) => row.pass_card_fee) ? await getCardFeeRate(trx) : undefined;
    // Below the provider's minimum charge the pay-now page could only refuse: the notice asks for a bank transfer.
    const payNowChargeable = (row: HeldRow) => {
      const net = row.total_minor - row.surcharge_minor;
      return !belowCardMinimum(ctx.config, net + (row.pass_card_fee && cardFee ? cardSurcharge(net, cardFee) : 0));
    };
    for (const row of rows) {
      await queueHoldEndingReminder(
        trx,
        ctx,
        recipient(ctx, row),
        {
          balanceMinor: row.total_minor,
          releaseAt: row.release_at,
          payNowUrl: links && cardPaymentPossible(ctx.config, row) && payNowChargeable(row) ? payNowUrl(ctx.config, row.id, row.manage_link_version) : undefined,
          manageUrl: links ? manageUrl(ctx.config, { registrationId: row.id, version: row.manage_link_version }) : undefined,
        },
        now,
      );
      await recordHistory(trx, { registrationId: row.id, action: 'hold_reminder', changes: { releaseAt: row.release_at.toISOString() }, actor: HOLD_ACTOR, now });
    }
    return rows.length;
  });
}

export async function settleUnpaidHolds(ctx: HoldContext, now: Date): Promise<UnpaidHoldCounts> {
  // Release first, so a hold whose reminder was never sent (the job did not run that day) is only released.
  const holdsReleased = await releaseUnpaidHolds(ctx, now);
  const holdReminders = await remindUnpaidHolds(ctx, now);
  return { holdsReleased, holdReminders };
}

function recipient(ctx: HoldContext, row: HeldRow) {
  return {
    registrationId: row.id,
    name: row.contact_name,
    email: ctx.cipher.decrypt(row.contact_email_enc),
    event: { title: row.title, startsAt: row.starts_at },
  };
}

