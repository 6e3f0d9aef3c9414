import type { Knex } from 'knex';
import type { ScheduleStep } from '../registrations/balance-terms.js';
import { scheduleOf, type Schedule } from '../registrations/deposits.js';
import type { EventRecord } from '../registrations/event-record.js';
import type { AppContext } from '../context.js';
import { overHourlyEmailCaps } from '../registrations/email-caps.js';
import { enqueueMail, type QueuedMailInput } from '../mail/queue.js';
import { emailBrandingFrom } from '../mail/render.js';
import { churchIdentityFrom, CHURCH_IDENTITY_KEYS } from '../mail/identity.js';
import { BANK_KEYS, bankDetailsFrom, CARD_FEE_KEYS, cardFeeRateFrom, parseSettings, type SettingKey } from '../settings.js';
import { belowCardMinimum, cardMinimumOf } from '../payments/card-minimum.js';
import { heldUntil, HELD_UNTIL_IF_MADE_AT_SQL } from '../payments/hold-release.js';
import { cardPaymentPossible, payNowUrl } from '../payments/links.js';
import { currentLinkVersion, FIRST_MANAGE_LINK_VERSION, manageUrl as manageUrlOf } from '../payments/manage-link.js';
import { paymentReference } from '../registrations/reference.js';
import { cardSurcharge, type PricedRegistration } from '../registrations/pricing.js';
import type { RegistrationContact } from '../registrations/registrations.js';
import { registrationConfirmationEmail } from './templates/confirmation.js';
import { answerGroupsOf, plainAnswerGroups, type AnswerGroup } from '../payments/answer-lines.js';
import type { RegistrationAnswers } from '../registrations/answers.js';

/**
 * Confirmation emails go to whatever address is typed into the public form, so
 * they are capped per mailbox and per client an hour (registrations/email-caps.ts,
 * a budget the waiting list's join emails share); registrations beyond either cap
 * are made but not emailed: their page shows it all.
 */
export { CONFIRMATIONS_PER_ADDRESS_PER_HOUR } from '../registrations/email-caps.js';

/**
 * Queues the confirmation of a free or bank-transfer registration in the
 * caller's transaction (card payments get their receipt from the webhook):
 * free → "confirmed", bank → bank details, reference and the pay-now link.
 * Returns the queued mail's id, or null when the mailbox or the client has had
 * its confirmations for the hour.
 */
export async function queueRegistrationConfirmation(
  trx: Knex.Transaction,
  ctx: Pick<AppContext, 'config' | 'cipher' | 'logger'>,
  input: {
    registrationId: string;
    contact: RegistrationContact;
    event: EventRecord;
    priced: PricedRegistration;
    /** Set when the office sends the confirmation again, so the mail API does not drop it as a repeat. */
    idempotencySuffix?: string;
    /** An existing registration's payments so far; a new one has none. */
    payments?: { paidMinor: number; creditedMinor?: number; cardPaymentInFlight: boolean };
    /** Sent by the office, which is not limited: the hourly limits are for addresses typed into the public form. */
    byOffice?: boolean;
    /** The public form's client (clientKey of its address), counted against its hourly cap. */
    client?: string;
  },
  now: Date,
): Promise<number | null> {
  if (!input.byOffice && (await overHourlyEmailCaps(trx, ctx, { mailbox: input.contact.email, client: input.client }, now))) {
    ctx.logger.warn({ registrationId: input.registrationId }, 'confirmation email not sent: its mailbox or client had its confirmations for the hour');
    return null;
  }
  const linkVersion = await currentLinkVersion(trx, input.registrationId);
  const answerGroups = await plainAnswerGroups(trx, input.registrationId, input.event, ctx.config.regional);
  const mail = await renderConfirmation(trx, ctx, input, { linkVersion, answerGroups, heldUntil: (db) => heldUntil(db, input.registrationId, ctx.config.regional.timeZone), schedule: (db) => scheduleOf(db, input.registrationId), now });
  return enqueueMail(trx, ctx.cipher, mail, now);
}

/** What the confirmation of an existing registration reads of it, and of a new one is known before it is written. */
interface ConfirmationFacts {
  linkVersion: number;
  answerGroups: AnswerGroup[];
  /**
   * When its places are released unless paid (only when something is owed and the event has a limit): an existing
   * registration's read from its row; a new one's, to be made at `madeAt`, read with the rest; none when help was asked.
   */
  heldUntil: ((db: Knex) => Promise<Date | undefined>) | { madeAt: Date } | 'never';
  /** Its deposit and due dates, when it pays in parts (read only when something is owed). */
  schedule: (db: Knex) => Promise<Schedule | undefined>;
  now: Date;
}

type ConfirmationInput = Parameters<typeof queueRegistrationConfirmation>[2];

/** The confirmation of a registration, rendered: what queueRegistrationConfirmation queues. */
async function renderConfirmation(
  trx: Knex,
  ctx: Pick<AppContext, 'config' | 'cipher'>,
  input: ConfirmationInput,
  facts: ConfirmationFacts,
): Promise<QueuedMailInput> {
  const emailHash = ctx.cipher.lookupHash('email', input.contact.email);
  const hasPublicUrl = Boolean(ctx.config.authUrl ?? ctx.config.appUrl);
  const { paidMinor, cardPaymentInFlight } = input.payments ?? { paidMinor: 0, cardPaymentInFlight: false };
  const creditedMinor = input.payments?.creditedMinor ?? 0;
  const owing = !input.priced.free && !cardPaymentInFlight;
  const holdAsked = owing && input.event.unpaidHoldDays !== null ? facts.heldUntil : 'never';
  const read = await readForConfirmation(trx, {
    eventId: input.event.id,
    emailHash,
    registrationId: input.registrationId,
    madeAt: typeof holdAsked === 'object' ? holdAsked.madeAt : undefined,
    timeZone: ctx.config.regional.timeZone,
  });
  const branding = emailBrandingFrom(churchIdentityFrom(read.settings, ctx.config), ctx.config);
  const bank = owing ? bankDetailsFrom(read.settings) : undefined;
  const releasedAt = typeof holdAsked === 'function' ? await holdAsked(trx) : read.releaseAt;
  const balanceMinor = input.priced.total - paidMinor - creditedMinor;
  // Once something is paid or credited, pay-now charges the balance left (balancePaymentDue), judged on that, and
  // only until the event starts (then at the door).
  const partSettled = paidMinor > 0 || creditedMinor > 0;
  const offerCard =
    owing &&
    balanceMinor > 0 &&
    !(partSettled && facts.now.getTime() >= input.event.startsAt.getTime()) &&
    hasPublicUrl &&
    cardPaymentPossible(ctx.config, { online_payment: input.event.onlinePayment }) &&
    !cardTotalBelowMinimum(ctx, input.event, partSettled ? { net: balanceMinor } : input.priced, cardFeeRateFrom(read.settings));
  const others = read.others;
  const { linkVersion, answerGroups } = facts;
  const manageUrl = hasPublicUrl ? manageUrlOf(ctx.config, { registrationId: input.registrationId, version: linkVersion }) : undefined;
  const schedule = owing ? await facts.schedule(trx) : undefined;
  const rendered = registrationConfirmationEmail(
    {
      name: input.contact.name,
      eventTitle: input.event.title,
      eventStartsAt: input.event.startsAt,
      eventEndsAt: input.event.endsAt,
      location: input.event.location,
      lines: input.priced.lines.map(({ label, amount }) => ({ label, amount })),
      totalMinor: input.priced.total,
      balanceMinor,
      paidMinor,
      creditedMinor,
      showBalance: paidMinor > 0 || creditedMinor > 0,
      cardPaymentInFlight,
      heldUntil: releasedAt,
      severalPlaces: input.priced.attendeeCount > 1,
      free: input.priced.free,
      reference: paymentReference(input.registrationId),
      bank,
      manageUrl,
      // No card link for an amount below the card provider's minimum: pay-now would refuse it. Paying in parts with
      // nothing settled yet, the card link pays the deposit (what the schedule asks first); once something is, the
      // link names no amount and the pay page asks for the balance left.
      payNowUrl: offerCard
        ? `${payNowUrl(ctx.config, input.registrationId, linkVersion)}${!partSettled && schedule?.steps[0] ? `&amount=${schedule.steps[0].settledTargetMinor}` : ''}`
        : undefined,
      otherRegistrations: others.map((other) => ({ reference: paymentReference(other.id), paid: other.status === 'PAID' })),
      answerGroups,
      ...(schedule ? { schedule: scheduleLines(schedule.steps) } : {}),
    },
    branding,
  );
  return {
    kind: 'registration-confirmation',
    registrationId: input.registrationId,
    message: { to: [input.contact.email], ...rendered, idempotencyKey: `confirmation-${input.registrationId}${input.idempotencySuffix ?? ''}` },
  };
}

/**
 * The confirmation of a registration about to be written (its id chosen, its answers as given), rendered before
 * the event's lock so that under the lock only the seats are counted and the writes made; not counted against the
 * hourly caps (the caller counts them, see overHourlyEmailCaps).
 */
export async function renderNewRegistrationConfirmation(
  trx: Knex,
  ctx: Pick<AppContext, 'config' | 'cipher'>,
  input: Omit<ConfirmationInput, 'payments' | 'byOffice' | 'idempotencySuffix'> & {
    attendeeNames: readonly string[];
    answers?: RegistrationAnswers;
    /** Held without the unpaid-hold release (help with the cost asked): no release date. */
    helpRequested: boolean;
    /** The deposit and due dates it will be written with, when it pays in parts. */
    schedule?: Schedule;
  },
  now: Date,
): Promise<QueuedMailInput> {
  const answerGroups =
    input.answers && input.event.questions.length > 0 ? answerGroupsOf(input.event, input.answers, input.attendeeNames, ctx.config.regional) : [];
  return renderConfirmation(trx, ctx, input, {
    linkVersion: FIRST_MANAGE_LINK_VERSION,
    answerGroups,
    heldUntil: input.helpRequested || input.priced.total <= 0 ? 'never' : { madeAt: now },
    schedule: () => Promise.resolve(input.schedule),
    now,
  });
}

const CONFIRMATION_SETTING_KEYS: SettingKey[] = [...CHURCH_IDENTITY_KEYS, ...BANK_KEYS, ...CARD_FEE_KEYS];

interface ConfirmationReads {
  /**
   * The event's other live registrations made with this contact address, oldest first. Told only to that
   * address, in its own confirmation: the form cannot say it without telling anyone who typed the address.
   */
  others: Array<{ id: string; status: string }>;
  /** The church's identity, its bank details and the card fee rate. */
  settings: ReturnType<typeof parseSettings<(typeof CONFIRMATION_SETTING_KEYS)[number]>>;
  /** When a registration made at `madeAt` would have its places released (asked only with `madeAt`). */
  releaseAt: Date | undefined;
}

/**
 * What a confirmation reads besides the registration, in one statement: a public registration renders its
 * confirmation before the event's lock, and each round trip there is one more wait for a family on the form.
 */
async function readForConfirmation(
  db: Knex,
  query: { eventId: string; emailHash: string; registrationId: string; madeAt: Date | undefined; timeZone: string },
): Promise<ConfirmationReads> {
  const { rows } = await db.raw<{ rows: Array<{ others: ConfirmationReads['others']; settings: Record<string, unknown> | null; release_at: Date | string | null }> }>(
    `SELECT (SELECT COALESCE(json_agg(json_build_object('id', r.id, 'status', r.status) ORDER BY r.created_at, r.id), '[]'::json)
               FROM registrations r
              WHERE r.event_id = :eventId AND r.contact_email_hash = :emailHash AND r.id <> :registrationId AND r.status <> 'CANCELLED') AS others,
            (SELECT json_object_agg(s.key, s.value) FROM app_settings s WHERE s.key IN (SELECT jsonb_array_elements_text(:keys::jsonb))) AS settings,
            ${query.madeAt ? HELD_UNTIL_IF_MADE_AT_SQL : 'NULL::timestamptz'} AS release_at`,
    {
      eventId: query.eventId,
      emailHash: query.emailHash,
      registrationId: query.registrationId,
      keys: JSON.stringify(CONFIRMATION_SETTING_KEYS),
      ...(query.madeAt ? { madeAt: query.madeAt, tz: query.timeZone } : {}),
    },
  );
  const row = rows[0];
  return {
    others: row?.others ?? [],
    settings: parseSettings(row?.settings ?? {}),
    releaseAt: row?.release_at == null ? undefined : new Date(row.release_at),
  };
}

/** Whether pay-now's card total (today's fee included when the event passes it on) is below the provider's minimum. */
function cardTotalBelowMinimum(
  ctx: Pick<AppContext, 'config'>,
  event: Pick<EventRecord, 'passCardFee'>,
  priced: Pick<PricedRegistration, 'net'>,
  feeRate: { percent: number; fixed: number },
): boolean {
  const minimum = cardMinimumOf(ctx.config);
  if (minimum === undefined || priced.net >= minimum) return false;
  const surcharge = event.passCardFee ? cardSurcharge(priced.net, feeRate) : 0;
  return belowCardMinimum(ctx.config, priced.net + surcharge);
}

/** Each payment of a schedule (its targets are cumulative): the deposit, then what each later date adds. */
function scheduleLines(steps: ScheduleStep[]): Array<{ amountMinor: number; dueOn: string; deposit: boolean }> {
  return steps.map((step, index) => ({ amountMinor: step.settledTargetMinor - (steps[index - 1]?.settledTargetMinor ?? 0), dueOn: step.dueOn, deposit: step.seq === 0 }));
}
