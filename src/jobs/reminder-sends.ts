import type { AppContext } from '../context.js';
import { countRemindedInRound, notRemindedInRound, recordDirectEmails, type DirectEmail } from '../db/registration-emails.js';
import { errorMessage } from '../errors.js';
import { eventCalendarFile } from '../mail/calendar.js';
import type { EmailBranding } from '../mail/render.js';
import { MailSendError, type MailAttachment, type Mailer, type MailMessage } from '../mail/types.js';
import { belowCardMinimum } from '../payments/card-minimum.js';
import { cardPaymentPossible, payNowUrl } from '../payments/links.js';
import { manageUrl } from '../payments/manage-link.js';
import { paymentReference } from '../registrations/reference.js';
import { cardSurcharge, type CardFeeRate } from '../registrations/pricing.js';
import { cardPaymentInFlightSql, keptCardPaymentOpenSql } from '../registrations/card-checkouts.js';
import { eachLimited } from './each-limited.js';
import { groupCommit } from './group-commit.js';
import { SendFailures } from './send-failures.js';
import { eventReminderEmail, paymentReminderEmail, type PaymentReminderData } from './templates/reminders.js';

// The sending half of send-reminders: one claimed event's recipients, messages and records.

const PAGE_SIZE = 500;
/**
 * Sends between claim renewals: 30 sends over the SMTP pool's 3 connections,
 * each bounded by the 30 s SMTP timeout, take at most 5 minutes, well inside
 * the stale threshold.
 */
const SEND_CHUNK = 30;
/**
 * Messages handed to the mailer at once: twice the SMTP pool's 3 connections,
 * so each connection finds the next message rendered and built when it
 * finishes one, instead of waiting for it. A send holds its place in the window
 * until its registration_emails row is written, so at most this many sends are
 * ever unrecorded: a run that dies mid-event costs at most these 6 repeats when
 * another run takes the round over (it skips every registration recorded).
 */
const SEND_WINDOW = 6;

export interface DueEvent {
  id: string;
  title: string;
  location: string | null;
  starts_at: Date;
  ends_at: Date | null;
  online_payment: boolean;
  /** The event passes the card fee on: a card payment (pay-now) is charged the total plus the fee. */
  pass_card_fee: boolean;
  /** When the reminder was asked for: moving it asks for a fresh one, and names that round in each send's idempotency key. */
  reminder_at: Date;
  reminder_claimed_at: Date | null;
  /** Raised by every change of the event: its calendar entry's SEQUENCE. */
  calendar_sequence: number;
}

export const DUE_EVENT_COLUMNS = ['id', 'title', 'location', 'starts_at', 'ends_at', 'online_payment', 'pass_card_fee', 'reminder_at', 'reminder_claimed_at', 'calendar_sequence'] as const;

export interface RecipientRow {
  id: string;
  status: 'PENDING' | 'PAID';
  contact_name: string;
  contact_email_enc: string;
  total_minor: number;
  /** A card fee already in the total (none for a bank transfer): pay-now charges the rest, plus today's fee. */
  surcharge_minor: number;
  manage_link_version: number;
  /**
   * A pay-now card payment may still be confirmed, or one was kept with its alert still open:
   * asking for payment now could have it paid twice.
   */
  card_payment_in_flight: boolean;
  /** What is still owing: the total less what the office recorded as part-payments. */
  balance_minor: number;
}

export interface EventResult {
  recipients: number;
  /** Registrations this round had already reached (a run stopped mid-event recorded them), left out. */
  alreadyReminded: number;
  /** Another run took the claim over (ours looked stale), so this run stopped sending. */
  claimLost: boolean;
  /** The run was asked to stop (the server is stopping) with recipients still to send to. */
  stopped: boolean;
  sent: number;
  failed: number;
  paymentReminders: number;
}

/** What every message of one run shares. */
export interface RunMaterials {
  branding: EmailBranding;
  bank?: PaymentReminderData['bank'];
  /** Links are left out when neither AUTH_URL nor APP_URL is set. */
  linksAvailable: boolean;
  /** The Settings card fee rate, which pay-now adds for an event that passes the fee on. */
  cardFee: CardFeeRate;
}

/** What a reminder tells about its event: the office may change any of it while a run is sending. */
type EventDetails = Pick<DueEvent, 'title' | 'location' | 'starts_at' | 'ends_at' | 'online_payment' | 'pass_card_fee' | 'calendar_sequence'>;

/**
 * Renews the claim and reads the event as it is now, in one statement. Undefined when the claim was
 * lost: another run took it over, or the event was deleted or has started meanwhile.
 */
async function renewClaim(ctx: AppContext, eventId: string, claim: { at: Date }): Promise<EventDetails | undefined> {
  const at = ctx.clock.now();
  const [renewed] = await ctx.db('events')
    .where({ id: eventId, reminder_claimed_at: claim.at })
    .whereNull('reminder_sent_at')
    .whereNull('deleted_at')
    .where('starts_at', '>', at)
    .update({ reminder_claimed_at: at }, ['title', 'location', 'starts_at', 'ends_at', 'online_payment', 'pass_card_fee', 'calendar_sequence']);
  if (renewed === undefined) return undefined;
  claim.at = at;
  return renewed as EventDetails;
}

const sameDetails = (a: EventDetails, b: EventDetails): boolean =>
  a.title === b.title &&
  a.location === b.location &&
  a.starts_at.getTime() === b.starts_at.getTime() &&
  (a.ends_at?.getTime() ?? null) === (b.ends_at?.getTime() ?? null) &&
  a.online_payment === b.online_payment &&
  a.pass_card_fee === b.pass_card_fee &&
  a.calendar_sequence === b.calendar_sequence;

/**
 * Sends one claimed event's reminders: a payment reminder to each PENDING registration with an
 * amount owing and no card payment in flight, the plain reminder with its .ics to everyone else.
 */
export async function sendForEvent(
  ctx: AppContext,
  mailer: Mailer,
  event: DueEvent,
  claim: { at: Date },
  materials: RunMaterials,
  onProgress: (counts: { sent: number; failed: number }) => void,
  signal?: AbortSignal,
): Promise<EventResult> {
  const result: EventResult = { recipients: 0, alreadyReminded: 0, claimLost: false, stopped: false, sent: 0, failed: 0, paymentReminders: 0 };
  // Counted before any send of this run is recorded, so it counts only what earlier runs of the round sent.
  result.alreadyReminded = await countRemindedInRound(ctx.db, event.id, event.reminder_at);
  // Re-read at every claim renewal: a chunk sent after the office moved the event carries its new time and place.
  let current = event;
  let calendar = eventCalendarFile(current, ctx.clock.now());
  const failures = new SendFailures();

  // Each send's record, with its round: those finished while one statement is written go together into the next.
  const record = groupCommit<DirectEmail>((emails) => recordDirectEmails(ctx.db, emails));
  let firstPage = true;
  for await (const page of recipientPages(ctx, event.id, event.reminder_at)) {
    const stop = await sendPage(page, firstPage);
    firstPage = false;
    if (stop.cause !== undefined) throw stop.cause;
    if (stop.claimLost) {
      result.claimLost = true;
      ctx.logger.warn({ eventId: event.id }, 'the reminder is no longer ours (another run took it over, or the event was deleted or started); stopping');
      break;
    }
    if (stop.stopped) {
      result.stopped = true;
      ctx.logger.warn({ eventId: event.id, sent: result.sent }, 'asked to stop mid-event; the next run sends the rest of this reminder');
      break;
    }
  }

  await failures.record(ctx, { source: 'job:send-reminders', what: 'reminder', context: { eventId: event.id }, idsAs: 'registrationIds' });
  ctx.logger.info({ eventId: event.id, ...result }, 'event reminders sent');
  return result;

  /**
   * Sends a page through one window of SEND_WINDOW messages. The claim is renewed before every chunk of
   * SEND_CHUNK sends but the first of the event, which keeps it fresh for a large event or a slow mail
   * server and stops the sends once the database is gone (sends that could not be recorded would all be
   * repeated when the claim goes stale). A chunk's renewal starts when its first send is due, while the
   * last sends of the chunk before are still on the wire, so the window never drains at a chunk boundary.
   * Once `signal` is aborted no further send starts; those on the wire finish and are recorded.
   */
  async function sendPage(page: RecipientRow[], firstPage: boolean): Promise<PageStop> {
    const stop: PageStop = { claimLost: false, stopped: false };
    const renewals: Array<Promise<boolean>> = [];
    const renewedFor = (chunk: number): Promise<boolean> => {
      for (let k = renewals.length; k <= chunk; k++) {
        const before = k === 0 ? Promise.resolve(true) : (renewals[k - 1] as Promise<boolean>);
        renewals.push(
          before.then(async (ours) => {
            if (!ours) return false;
            if (k === 0 && firstPage) return true;
            try {
              const details = await renewClaim(ctx, event.id, claim);
              if (details !== undefined) {
                if (!sameDetails(details, current)) {
                  current = { ...current, ...details };
                  calendar = eventCalendarFile(current, ctx.clock.now());
                  ctx.logger.info({ eventId: event.id }, 'the event changed while its reminders went out; the rest carry the change');
                }
                return true;
              }
              stop.claimLost = true;
            } catch (error) {
              stop.cause ??= error;
            }
            return false;
          }),
        );
      }
      return renewals[chunk] as Promise<boolean>;
    };
    const chunksLeft = Array.from({ length: Math.ceil(page.length / SEND_CHUNK) }, (_, k) => Math.min(SEND_CHUNK, page.length - k * SEND_CHUNK));

    await eachLimited(page, SEND_WINDOW, async (row, index) => {
      const chunk = Math.floor(index / SEND_CHUNK);
      try {
        if (stop.cause !== undefined || stoppedBy(stop)) return;
        if (!(await renewedFor(chunk)) || stoppedBy(stop)) return;
        result.recipients++;
        let payment: boolean;
        try {
          payment = await sendOne(row);
        } catch (error) {
          countFailure(row, error);
          return;
        }
        result.sent++;
        if (payment) result.paymentReminders++;
        await recordSent(row, payment, stop);
      } finally {
        if (--(chunksLeft[chunk] as number) === 0) onProgress({ sent: result.sent, failed: result.failed });
      }
    });
    return stop;
  }

  function stoppedBy(stop: PageStop): boolean {
    if (signal?.aborted) stop.stopped = true;
    return stop.stopped;
  }

  /**
   * Records the send for `registrations show` and for a run that takes the round over, which skips it.
   * A record that cannot be written stops the sends as a failed renewal does: every send after it could
   * not be recorded either, and each would be repeated.
   */
  async function recordSent(row: RecipientRow, payment: boolean, stop: PageStop): Promise<void> {
    try {
      await record({ registrationId: row.id, kind: payment ? 'payment-reminder' : 'event-reminder', sentAt: ctx.clock.now(), reminderAt: event.reminder_at });
    } catch (error) {
      ctx.logger.warn({ eventId: event.id, err: errorMessage(error) }, 'could not record which registrations were reminded; stopping');
      stop.cause ??= error;
    }
  }

  async function sendOne(row: RecipientRow): Promise<boolean> {
    const payment = isPaymentReminder(row);
    const message = composeMessage(ctx, current, row, materials, payment ? undefined : calendar);
    try {
      await mailer.send(message);
    } catch (error) {
      if (!(error instanceof MailSendError && error.ambiguous)) throw error;
      ctx.logger.warn({ eventId: event.id, registrationId: row.id, err: error.message }, 'reminder send ambiguous; counted as sent');
    }
    return payment;
  }

  function countFailure(row: RecipientRow, error: unknown): void {
    result.failed++;
    ctx.logger.warn({ eventId: event.id, registrationId: row.id, err: errorMessage(error) }, 'reminder send failed');
    failures.add(error, row.id);
  }
}

interface PageStop {
  claimLost: boolean;
  /** Asked to stop: a recipient of the page was left for the next run. */
  stopped: boolean;
  cause?: unknown;
}

/**
 * Keyset pages by id, so memory stays flat however many registrations an event has. Registrations the
 * round (`round`: the event's reminder_at) already reached are left out: a run that took over from one
 * stopped mid-event sends only to the rest, and a round asked for by moving reminderAt reaches everyone.
 */
export async function* recipientPages(ctx: AppContext, eventId: string, round: Date): AsyncGenerator<RecipientRow[]> {
  let after: string | undefined;
  for (;;) {
    const query = ctx.db('registrations')
      .where({ event_id: eventId })
      .whereNot('status', 'CANCELLED')
      .where(notRemindedInRound(ctx.db, 'registrations.id', round))
      .orderBy('id')
      .limit(PAGE_SIZE)
      .select<RecipientRow[]>(
        'id',
        'status',
        'contact_name',
        'contact_email_enc',
        'total_minor',
        'surcharge_minor',
        'manage_link_version',
        ctx.db.raw(
          `(EXISTS (SELECT 1 FROM checkout_sessions c WHERE c.registration_id = registrations.id
             AND ${cardPaymentInFlightSql('c', ':now')}) OR ${keptCardPaymentOpenSql('registrations.id')}) AS card_payment_in_flight`,
          { now: ctx.clock.now() },
        ),
        ctx.db.raw(
          'total_minor - (SELECT m.office_paid_minor + m.credited_minor FROM registration_money m WHERE m.registration_id = registrations.id)::int AS balance_minor',
        ),
      );
    if (after !== undefined) query.where('id', '>', after);
    const rows = await query;
    if (rows.length === 0) return;
    yield rows;
    if (rows.length < PAGE_SIZE) return;
    after = rows[rows.length - 1]?.id;
  }
}

export function isPaymentReminder(row: RecipientRow): boolean {
  return row.status === 'PENDING' && row.balance_minor > 0 && !row.card_payment_in_flight;
}

function composeMessage(
  ctx: AppContext,
  event: DueEvent,
  row: RecipientRow,
  materials: RunMaterials,
  calendar: MailAttachment | undefined,
): MailMessage {
  const to = ctx.cipher.decrypt(row.contact_email_enc);
  const base = {
    name: row.contact_name,
    event: { title: event.title, startsAt: event.starts_at, endsAt: event.ends_at, location: event.location },
    manageUrl: materials.linksAvailable ? manageUrl(ctx.config, { registrationId: row.id, version: row.manage_link_version }) : undefined,
  };
  // The reminder's round (its reminder_at) is part of the key: a repeat of the same round (a run that died
  // before marking it sent) is dropped by the mail API as a duplicate, but a reminder the office asked for
  // again by moving reminderAt is a new message, which the mail API would otherwise answer with the first.
  const idempotencyKey = `reminder:${event.id}:${event.reminder_at.toISOString()}:${row.id}`;
  if (calendar === undefined) {
    const byCard = materials.linksAvailable && cardPaymentPossible(ctx.config, event);
    // What pay-now will charge: untouched, the total less any fee already in it; once something is paid or
    // credited, the balance the ledger leaves (balancePaymentDue); plus today's fee when the event passes it on.
    const net = row.balance_minor === row.total_minor ? row.total_minor - row.surcharge_minor : row.balance_minor;
    const feeIfByCard = byCard && event.pass_card_fee ? cardSurcharge(net, materials.cardFee) : 0;
    // Below the provider's minimum charge the pay-now page could only refuse: the reminder asks for a bank transfer.
    const payNow = byCard && !belowCardMinimum(ctx.config, net + feeIfByCard);
    const cardFeeMinor = payNow ? feeIfByCard : 0;
    const rendered = paymentReminderEmail(
      {
        ...base,
        amountMinor: row.balance_minor,
        reference: paymentReference(row.id),
        bank: materials.bank,
        payNowUrl: payNow ? payNowUrl(ctx.config, row.id, row.manage_link_version) : undefined,
        cardAmountMinor: net + cardFeeMinor,
        cardFeeMinor,
      },
      materials.branding,
    );
    return { to: [to], ...rendered, idempotencyKey };
  }
  return { to: [to], ...eventReminderEmail(base, materials.branding), attachments: [calendar], idempotencyKey };
}
