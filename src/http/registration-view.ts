import type { AppConfig } from '../config/types.js';
import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import { assertCardMinimum, cardAmountTooSmall, cardMinimumOf, leastCardNetMinor } from '../payments/card-minimum.js';
import { cardPaymentStateOf, type CardPaymentState } from '../payments/card-payment-state.js';
import { heldUntil } from '../payments/hold-release.js';
import { cardPaymentPossible, registrationToken } from '../payments/links.js';
import { paymentReference } from '../registrations/reference.js';
import { NOT_PAYABLE_MESSAGES, payNowLines, unpaidHoldEnded } from '../payments/pay-now.js';
import { cardSurcharge, FAMILY_WAIVER_SUFFIX, TICKET_NAME_SEPARATOR, type PricedLine } from '../registrations/pricing.js';
import type { PaymentMethod } from '../registrations/registrations.js';
import { getBankDetails, getCardFeeRate } from '../settings.js';
import type { PayNowPageData } from './templates/pay-now-page.js';
import type { LineView, RegistrationPageData } from './templates/registration-page.js';
import { pageFormat } from './templates/format.js';
import { eventPath } from './event-view.js';
import { heldConfirmationToken } from './held-confirmation.js';
import { managePath } from '../payments/manage-link.js';
import { answerGroupsOf, type AnswerGroup } from '../payments/answer-lines.js';
import { eventFromRow, type EventRow } from '../registrations/event-record.js';
import type { RegistrationAnswers } from '../registrations/answers.js';
import { balancePaymentDue, balanceStateOf, paysInParts } from '../payments/balance-checkout.js';
import { PART_PAYMENT_LINE_LABEL, partPaymentLines } from '../payments/deposit-checkout.js';
import { balanceSection, eventRecordOf } from './balance-view.js';

/** A registration with the event fields its public pages need. */
export interface PublicRegistration {
  id: string;
  /** registrations.manage_link_version: what its registration-page and pay-now tokens sign with the id. */
  linkVersion: number;
  status: 'PENDING' | 'PAID' | 'CANCELLED';
  paymentMethod: PaymentMethod;
  contactName: string;
  /** The attendees' names, to set them apart in the line labels that carry them (lineViews). */
  attendeeNames: string[];
  lineItems: PricedLine[];
  totalMinor: number;
  surchargeMinor: number;
  cancelReason: string | null;
  /** What the office has received outside the card provider, plus help with the cost credited (registration_money), minor units. */
  officePaidMinor: number;
  /** Its pay-now card payments: one may still be in flight, or the latest was confirmed unpaid. */
  cardPayment: CardPaymentState;
  event: {
    id: string;
    slug: string;
    title: string;
    startsAt: Date;
    endsAt: Date | null;
    location: string | null;
    published: boolean;
    deletedAt: Date | null;
    onlinePayment: boolean;
    passCardFee: boolean;
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface JoinedRow {
  id: string;
  manage_link_version: number;
  status: PublicRegistration['status'];
  payment_method: PublicRegistration['paymentMethod'];
  contact_name: string;
  attendees: Array<{ name?: unknown }> | null;
  line_items: PricedLine[];
  total_minor: number;
  surcharge_minor: number;
  cancel_reason: string | null;
  office_paid_minor: number;
  event_id: string;
  slug: string;
  title: string;
  starts_at: Date;
  ends_at: Date | null;
  location: string | null;
  published: boolean;
  deleted_at: Date | null;
  online_payment: boolean;
  pass_card_fee: boolean;
}

/** `now` decides whether a pay-now session is still live (see cardPaymentStateOf). */
export async function loadPublicRegistration(db: Db, id: string, now: Date): Promise<PublicRegistration | undefined> {
  if (!UUID.test(id)) return undefined;
  const row = await db('registrations as r')
    .join('events as e', 'e.id', 'r.event_id')
    .where('r.id', id)
    .first<JoinedRow | undefined>(
      'r.id',
      'r.manage_link_version',
      'r.status',
      'r.payment_method',
      'r.contact_name',
      'r.attendees',
      'r.line_items',
      'r.total_minor',
      'r.surcharge_minor',
      'r.cancel_reason',
      db.raw('(SELECT m.office_paid_minor + m.credited_minor FROM registration_money m WHERE m.registration_id = r.id) AS office_paid_minor'),
      'e.id as event_id',
      'e.slug',
      'e.title',
      'e.starts_at',
      'e.ends_at',
      'e.location',
      'e.published',
      'e.deleted_at',
      'e.online_payment',
      'e.pass_card_fee',
    );
  if (!row) return undefined;
  return {
    id: row.id,
    linkVersion: row.manage_link_version,
    status: row.status,
    paymentMethod: row.payment_method,
    contactName: row.contact_name,
    attendeeNames: (row.attendees ?? []).flatMap((attendee) => (typeof attendee?.name === 'string' ? [attendee.name] : [])),
    lineItems: row.line_items,
    totalMinor: row.total_minor,
    surchargeMinor: row.surcharge_minor,
    cancelReason: row.cancel_reason,
    officePaidMinor: row.office_paid_minor,
    cardPayment: row.status === 'PENDING' ? await cardPaymentStateOf(db, row.id, now) : 'none',
    event: {
      id: row.event_id,
      slug: row.slug,
      title: row.title,
      startsAt: row.starts_at,
      endsAt: row.ends_at,
      location: row.location,
      published: row.published,
      deletedAt: row.deleted_at,
      onlinePayment: row.online_payment,
      passCardFee: row.pass_card_fee,
    },
  };
}

/**
 * Lines as the pages show them: a ticket line's attendee name ("Adult — Ruth", "Child — Kim (family waiver)")
 * apart from the words around it, so the template can isolate it (<bdi>): a right-to-left name otherwise takes
 * the digits and punctuation beside it into its own direction. Names are matched from the registration's
 * attendees (the longest first), never guessed from the label.
 */
export function lineViews(lines: readonly Pick<PricedLine, 'label' | 'amount'>[], names: readonly string[], money: (minor: number) => string): LineView[] {
  const longestFirst = [...new Set(names)].filter(Boolean).sort((a, b) => b.length - a.length);
  return lines.map((line) => ({ label: line.label, amount: money(line.amount), named: namedPart(line.label, longestFirst) }));
}

function namedPart(label: string, names: readonly string[]): LineView['named'] {
  for (const name of names) {
    for (const after of ['', FAMILY_WAIVER_SUFFIX]) {
      const tail = `${TICKET_NAME_SEPARATOR}${name}${after}`;
      if (label.length > tail.length && label.endsWith(tail)) {
        return { before: label.slice(0, -tail.length) + TICKET_NAME_SEPARATOR, name, after };
      }
    }
  }
  return undefined;
}

/**
 * The registration page, its token signing the registration's current link version. `confirmationHeldBack` adds
 * `&confirmation=<signed mark>` (held-confirmation.ts), on the address the form's post redirects to, so that page,
 * and only it, says no email was sent and shows everything the email would have said, the manage link and the
 * plain answers included.
 */
export function registrationPath(
  authSecret: string,
  registrationId: string,
  linkVersion: number,
  options: { confirmationHeldBack?: boolean } = {},
): string {
  const held = options.confirmationHeldBack ? `&${CONFIRMATION_HELD_QUERY}=${heldConfirmationToken(authSecret, registrationId, linkVersion)}` : '';
  return `/registrations/${registrationId}?token=${registrationToken(authSecret, registrationId, linkVersion)}${held}`;
}

export const CONFIRMATION_HELD_QUERY = 'confirmation';

export function payNowPath(authSecret: string, registrationId: string, linkVersion: number): string {
  return `/registrations/${registrationId}/pay?token=${registrationToken(authSecret, registrationId, linkVersion)}`;
}

/** Why pay-now is not possible for this registration, in words for the registrant; undefined when it is. */
export function payNowBlocker(
  config: Pick<AppConfig, 'payments'>,
  registration: PublicRegistration,
  options: { inFlightDecidedUnderLock?: boolean } = {},
): string | undefined {
  if (registration.status === 'PAID') return 'This registration is already paid; there is nothing more to pay.';
  if (registration.status === 'CANCELLED') return 'This registration was cancelled, so there is nothing to pay.';
  if (registration.totalMinor === 0) return 'This registration is free; there is nothing to pay.';
  if (registration.event.deletedAt) return EVENT_CANCELLED_NOTE;
  if (registration.cardPayment === 'in_flight' && !options.inFlightDecidedUnderLock) return CARD_PAYMENT_PROCESSING_NOTE;
  if (!cardPaymentPossible(config, { online_payment: registration.event.onlinePayment })) {
    return 'Card payments are not available for this event. Please pay by bank transfer using the details on your registration page.';
  }
  return undefined;
}

/**
 * payNowBlocker, then the provider's minimum: a balance whose card total (today's fee included) is
 * below it cannot be paid by card, so the pages offer no pay-now button and the pay page says why.
 */
export async function payNowRefusal(
  ctx: Pick<AppContext, 'config' | 'db' | 'clock'>,
  registration: PublicRegistration,
  options: { inFlightDecidedUnderLock?: boolean } = {},
): Promise<string | undefined> {
  const blocker = payNowBlocker(ctx.config, registration, options);
  if (blocker) return blocker;
  // Past the end of its unpaid hold nothing new is opened; a session opened before then is decided on by pay-now itself.
  const sessionOpen = registration.cardPayment === 'resumable' || registration.cardPayment === 'in_flight';
  if (!sessionOpen && (await unpaidHoldEnded(ctx, ctx.db, registration.id, ctx.clock.now()))) return NOT_PAYABLE_MESSAGES.hold_ended;
  const minimum = cardMinimumOf(ctx.config);
  if (minimum === undefined) return undefined;
  // Paying in parts, the most one card payment may charge is the balance left: below the minimum even that cannot
  // be paid by card. A smaller part is judged when it is asked for (payNowPageData, pay-now), on what it charges.
  const state = await balanceStateOf(ctx.db, registration.id, { balanceTerms: null });
  const inParts = paysInParts(state);
  const net = inParts ? state.money.balanceMinor : registration.totalMinor - registration.surchargeMinor;
  // The fee only adds to the amount: at or above the minimum without it, no need to read the rate.
  if (net <= 0 || net >= minimum) return undefined;
  const total = net + (registration.event.passCardFee ? cardSurcharge(net, await getCardFeeRate(ctx.db)) : 0);
  return total < minimum ? cardAmountTooSmall(ctx.config, inParts ? 'pay-now-part' : 'pay-now', total, minimum).message : undefined;
}

/** What the pages say while a card payment may still be confirmed: never "nothing was charged", never "pay now". */
export const CARD_PAYMENT_PROCESSING_NOTE =
  'We are waiting for the card payment provider to confirm your payment. We will email you as soon as your card payment is confirmed; if you were charged you do not need to pay again.';

/** A pay-now session left unfinished (the registrant came back from the provider's page): it can be finished. */
const CARD_PAYMENT_UNFINISHED_NOTE =
  'Your card payment was started but not finished, and your places are still held. Use "Pay now by card" to finish it. If you did finish it, you do not need to pay again: we will email you as soon as it is confirmed.';

/**
 * Said while something is owed: this page is the one place sure to show the reference and status again (its
 * confirmation email may have been held back by the hourly per-address limit, so no email is promised).
 */
export const KEEP_PAGE_NOTE = "Keep this page's address (bookmark it): it is where you find your payment reference and status again.";

/** Said at the top of the page when the form's confirmation email was held back by an hourly limit. */
export const CONFIRMATION_HELD_NOTE =
  'We did not email you a confirmation for this registration: we send only a few an hour to one mailbox, and from one network. Everything the email would have said is on this page.';

/** Said instead of KEEP_PAGE_NOTE, when nothing is owed, by a page whose confirmation email was held back. */
export const KEEP_DETAILS_NOTE = "Keep this page's address (bookmark it): it is where you find this registration's details again.";

const EVENT_CANCELLED_NOTE = 'This event has been cancelled, so payment is closed. The church will contact you.';

const STATUS_TEXT: Record<PublicRegistration['status'], { label: string; note: string }> = {
  PAID: { label: 'Paid', note: 'You are registered. See you there!' },
  PENDING: { label: 'Awaiting payment', note: 'Your places are held. Your registration is confirmed once we receive your payment.' },
  CANCELLED: { label: 'Cancelled', note: 'This registration was cancelled and its places released.' },
};

/** The status as the registrant should read it, with the card payment's true state. */
function statusText(registration: PublicRegistration): { label: string; note: string } {
  if (registration.status === 'CANCELLED' && (registration.cancelReason === 'refund' || registration.cancelReason === 'dispute')) {
    const what = registration.cancelReason === 'refund' ? 'was refunded' : 'was disputed with your bank';
    return { label: 'Cancelled', note: `Your card payment ${what}, so this registration was cancelled and its places released.` };
  }
  if (registration.status !== 'CANCELLED' && registration.event.deletedAt) {
    return { label: registration.status === 'PAID' ? 'Paid' : 'Event cancelled', note: EVENT_CANCELLED_NOTE };
  }
  if (registration.status === 'PENDING' && registration.cardPayment === 'in_flight') {
    return { label: 'Payment processing', note: CARD_PAYMENT_PROCESSING_NOTE };
  }
  if (registration.status === 'PENDING' && registration.cardPayment === 'resumable') {
    return { label: 'Awaiting payment', note: CARD_PAYMENT_UNFINISHED_NOTE };
  }
  if (registration.status === 'PENDING' && registration.cardPayment === 'confirmed_unpaid') {
    return { label: 'Awaiting payment', note: 'Your last card payment was not completed, and nothing was charged. Your places are still held until you pay.' };
  }
  return STATUS_TEXT[registration.status];
}

export async function registrationPageData(
  ctx: AppContext,
  registration: PublicRegistration,
  options: { confirmationHeldBack?: boolean } = {},
): Promise<RegistrationPageData & { title: string }> {
  const format = pageFormat(ctx.config.regional);
  const lines = lineViews(registration.lineItems, registration.attendeeNames, format.money);
  const status = statusText(registration);
  // While a card payment may still be confirmed or finished, bank details would invite a second payment;
  // for a cancelled event nothing is owed any more.
  const owing =
    registration.status === 'PENDING' &&
    registration.totalMinor > 0 &&
    registration.cardPayment !== 'in_flight' &&
    registration.cardPayment !== 'resumable' &&
    !registration.event.deletedAt;
  let bank: RegistrationPageData['bank'];
  if (owing && registration.paymentMethod === 'bank') {
    const details = await getBankDetails(ctx.db);
    bank = {
      ...details,
      configured: details !== undefined,
      reference: paymentReference(registration.id),
      amount: format.money(registration.totalMinor - registration.officePaidMinor),
    };
  }
  const payNowHref = (await payNowRefusal(ctx, registration)) ? undefined : payNowPath(ctx.config.authSecret, registration.id, registration.linkVersion);
  const leastByCard = payNowHref ? leastCardNetMinor(ctx.config, registration.event.passCardFee ? await getCardFeeRate(ctx.db) : undefined) : undefined;
  const balance = await balanceSection(ctx.db, ctx.config.regional, {
    registrationId: registration.id,
    event: await eventRecordOf(ctx.db, registration.event.id),
    pending: registration.status === 'PENDING',
    ...(payNowHref
      ? { payForm: { action: `/registrations/${registration.id}/pay`, token: registrationToken(ctx.config.authSecret, registration.id, registration.linkVersion), leastByCard } }
      : {}),
  });
  // Paying in parts, by card or by bank, the bank details stay on the page for the balance.
  if (owing && balance && !bank) {
    const details = await getBankDetails(ctx.db);
    bank = { ...details, configured: details !== undefined, reference: paymentReference(registration.id), amount: balance.balance };
  } else if (bank && balance) bank.amount = balance.balance;
  const live = registration.event.published && !registration.event.deletedAt;
  // Awaiting payment (never paid, or a card attempt that charged nothing): until when, on an event that releases
  // unpaid places, as the sweep will.
  const awaiting = status === STATUS_TEXT.PENDING || (registration.status === 'PENDING' && registration.cardPayment === 'confirmed_unpaid');
  const releasedAt = awaiting ? await heldUntil(ctx.db, registration.id, ctx.config.regional.timeZone) : undefined;
  const until = releasedAt ? `Your places are held until ${format.dateTime(releasedAt)}` : undefined;
  const statusNote = !until
    ? status.note
    : status === STATUS_TEXT.PENDING
      ? `${until}. Your registration is confirmed once we receive your payment; if it has not reached us by then, the places are released for others.`
      : `Your last card payment was not completed, and nothing was charged. ${until}; if your payment has not reached us by then, the places are released for others.`;
  return {
    title: 'Your registration',
    eventTitle: registration.event.title,
    eventHref: live ? eventPath(registration.event.slug) : undefined,
    when: format.dateTimeSpan(registration.event.startsAt, registration.event.endsAt),
    statusLabel: registration.totalMinor === 0 && registration.status === 'PAID' ? 'Confirmed (free)' : status.label,
    statusNote,
    location: registration.event.location ?? undefined,
    confirmationHeldNote: options.confirmationHeldBack ? CONFIRMATION_HELD_NOTE : undefined,
    keepPageNote:
      registration.status === 'PENDING' && !registration.event.deletedAt ? KEEP_PAGE_NOTE : options.confirmationHeldBack ? KEEP_DETAILS_NOTE : undefined,
    // The email names the reference; when it was held back the page does, whatever else it shows.
    heldBackReference: options.confirmationHeldBack ? paymentReference(registration.id) : undefined,
    // And its manage link and plain answers: this page is the family's only copy of them.
    ...(options.confirmationHeldBack ? await heldBackExtras(ctx, registration) : {}),
    contactName: registration.contactName,
    lines,
    total: format.money(registration.totalMinor),
    bank,
    // Paying in parts, the balance section's form (with its amount) stands for the pay-now button.
    payNowHref: balance ? undefined : payNowHref,
    balance,
    ...(balance?.depositPaid && registration.status === 'PENDING' && status === STATUS_TEXT.PENDING
      ? { statusLabel: 'Deposit paid', statusNote: 'Your places are kept. Please pay the balance by the dates below.' }
      : {}),
  };
}

/** What only the confirmation email carries besides: the manage link, and the non-sensitive answers as it lists them. */
async function heldBackExtras(ctx: AppContext, registration: PublicRegistration): Promise<Pick<RegistrationPageData, 'manageHref' | 'answerGroups'>> {
  const manageHref = managePath(ctx.config.authSecret, { registrationId: registration.id, version: registration.linkVersion });
  const eventRow = await ctx.db('events').where({ id: registration.event.id }).first<EventRow | undefined>();
  const row = await ctx.db('registrations').where({ id: registration.id }).first<{ answers: RegistrationAnswers | null } | undefined>('answers');
  const answerGroups: AnswerGroup[] =
    eventRow && row?.answers ? answerGroupsOf(eventFromRow(eventRow), row.answers, registration.attendeeNames, ctx.config.regional) : [];
  return { manageHref, answerGroups: answerGroups.length > 0 ? answerGroups : undefined };
}

/** The pay-now page: exactly the lines pay-now will charge (payNowLines), fee included when the event passes it on. */
export async function payNowPageData(
  ctx: AppContext,
  registration: PublicRegistration,
  token: string,
  amountMinor?: number,
): Promise<PayNowPageData & { title: string }> {
  const format = pageFormat(ctx.config.regional);
  // Paying in parts: the part asked for (a reminder's link names it) or the balance, judged as pay-now will judge it.
  const event = await eventRecordOf(ctx.db, registration.event.id);
  const part = await balancePaymentDue(ctx.db, { registrationId: registration.id, event, amountMinor, now: ctx.clock.now(), money: format.money });
  const net = part?.netMinor ?? registration.totalMinor - registration.surchargeMinor;
  const surcharge = registration.event.passCardFee ? cardSurcharge(net, await getCardFeeRate(ctx.db)) : 0;
  if (part) {
    // The part and its own card fee are what the checkout would charge: below the provider's minimum, bank transfer.
    assertCardMinimum(ctx.config, 'pay-now-part', net + surcharge);
    return {
      title: 'Pay by card',
      eventTitle: registration.event.title,
      when: format.dateTimeSpan(registration.event.startsAt, registration.event.endsAt),
      lines: lineViews(partPaymentLines(PART_PAYMENT_LINE_LABEL, net, surcharge), [], format.money),
      total: format.money(net + surcharge),
      action: `/registrations/${registration.id}/pay`,
      token,
      amountMinor: String(net),
      registrationHref: registrationPath(ctx.config.authSecret, registration.id, registration.linkVersion),
    };
  }
  return {
    title: 'Pay by card',
    eventTitle: registration.event.title,
    when: format.dateTimeSpan(registration.event.startsAt, registration.event.endsAt),
    lines: lineViews(payNowLines(registration.lineItems, net, surcharge), registration.attendeeNames, format.money),
    total: format.money(net + surcharge),
    action: `/registrations/${registration.id}/pay`,
    token,
    registrationHref: registrationPath(ctx.config.authSecret, registration.id, registration.linkVersion),
  };
}
