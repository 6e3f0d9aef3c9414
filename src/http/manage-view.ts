import type { AppContext } from '../context.js';
import { changesCloseAt, changesOpen, type ManagedRegistration } from '../family/managed-registration.js';
import { cancelOption } from '../family/cancel.js';
import { EMAIL_CONFIRM_HOURS } from '../family/email-change.js';
import type { ShownDetails } from '../family/change-details.js';
import { managePath } from '../payments/manage-link.js';
import { heldUntil } from '../payments/hold-release.js';
import { listOfficePayments, registrationMoney } from '../registrations/ledger.js';
import { listCredits, standingHelp } from '../registrations/credits.js';
import { paymentReference } from '../registrations/reference.js';
import { lineViews, loadPublicRegistration, payNowPath, payNowRefusal, type PublicRegistration } from './registration-view.js';
import type { ManagePageData } from './templates/manage-page.js';
import type { BankInstructionsView } from './templates/registration-page.js';
import { getBankDetails } from '../settings.js';
import { pageFormat } from './templates/format.js';
import { decryptSensitiveAnswers, emptyAnswers, mergeAnswers, type RegistrationAnswers } from '../registrations/answers.js';
import { answerFieldsOf, answersFormView, answersView, answerText, calendarDate } from './manage-answers-view.js';
import { askedQuestions, type AnswerFields } from './question-view.js';
import { registrationToken } from '../payments/links.js';
import { balanceSection } from './balance-view.js';
import { extrasFormView } from './add-extras-view.js';

const METHOD_WORDS: Record<string, string> = { bank: 'Bank transfer', cash: 'Cash', other: 'Payment', card: 'Card payment' };

/** Notices the page shows after a change, by the `done` query value; anything else shows none. */
export const MANAGE_NOTICES: Record<string, string> = {
  details: 'Your changes are saved.',
  'email-pending':
    `We have emailed a link to the new address: the email changes only once it is confirmed from there (within ${EMAIL_CONFIRM_HOURS} hours). Until then we keep writing to the current address, and this page keeps working. Any other changes are saved.`,
  unchanged: 'Nothing was changed: the details were already as you entered them.',
  answers: 'Your answers are saved.',
  'answers-unchanged': 'Nothing was changed: your answers were already as you entered them.',
  asked: 'We have passed your request on to the church office. They will reply to you by email.',
  'already-asked': 'You have already asked the office to cancel this registration; they will reply to you by email.',
  cancelled: 'Your registration is cancelled and its places released. We have emailed you to confirm it.',
  extras: 'Your extras are added. What they cost is added to what you owe, below.',
  'extras-free': 'Your extras are added.',
};

/** The extras form given back after a refused post: what was chosen and what was wrong. */
export interface ExtrasFormInput {
  typed: Record<string, string[]>;
  errors: Array<{ field: string; message: string }>;
}

/** The answers form given back after a refused correction: what was typed and what was wrong. */
export interface AnswersFormInput {
  fields: AnswerFields;
  errors: Array<{ field: string; message: string }>;
}

/** A registration's answers, plain and sensitive together (the sensitive ones decrypted). */
export function storedAnswers(ctx: Pick<AppContext, 'cipher'>, registration: ManagedRegistration['registration']): RegistrationAnswers {
  const row = registration as typeof registration & { answers?: RegistrationAnswers | null; sensitive_answers_enc?: string | null };
  const plain = row.answers ?? emptyAnswers();
  return mergeAnswers({ registration: plain.registration ?? {}, attendees: plain.attendees ?? [] }, decryptSensitiveAnswers(ctx.cipher, row.sensitive_answers_enc ?? null));
}

export interface DetailsView {
  values: NonNullable<ManagePageData['details']>['values'];
  /** What the page first showed, carried by both forms (was_*); absent: what is stored now. */
  was?: ShownDetails;
  errors: Array<{ field: string; message: string }>;
}

/** The fields of the contact form; the attendee names (`attendee_name`) are the other form's. */
const CONTACT_FIELDS = new Set(['name', 'email', 'mobile']);

/** The manage page: the event, attendees, amount, payments and what is owing, the hold deadline, and what the registrant may do. */
export async function managePageData(
  ctx: AppContext,
  managed: ManagedRegistration,
  options: { notice?: string; formError?: string; details?: DetailsView; answers?: AnswersFormInput; extras?: ExtrasFormInput } = {},
): Promise<ManagePageData & { title: string }> {
  const { registration, event } = managed;
  const now = ctx.clock.now();
  const format = pageFormat(ctx.config.regional);
  const token = managePath(ctx.config.authSecret, { registrationId: registration.id, version: registration.manage_link_version });
  const tiers = new Map(event.pricing.tiers.map((tier) => [tier.id, tier.label]));
  const attendees = registration.attendees.map((attendee) => ({ name: attendee.name, tier: tiers.get(attendee.tier) ?? attendee.tier }));

  const officePayments = await listOfficePayments(ctx.db, registration.id);
  const help = standingHelp(await listCredits(ctx.db, registration.id));
  const ledger = await registrationMoney(ctx.db, registration.id);
  // Settled without a payment row and not by help alone: the card payment of the whole total (older shape). Once card
  // payments are rows (paying in parts, or extras added after paying), each row is listed instead.
  const cardRows = officePayments.some((p) => (p.method as string) === 'card');
  const byCard =
    !cardRows &&
    registration.paid_at !== null &&
    (registration.payment_method === 'card' || (officePayments.length === 0 && ledger.creditedMinor === 0)) &&
    registration.total_minor > 0;
  const payments = [
    ...(byCard ? [{ how: METHOD_WORDS[registration.payment_method] ?? 'Payment', amount: format.money(registration.total_minor), when: format.dateTime(registration.paid_at as Date) }] : []),
    ...officePayments.map((p) => ({ how: METHOD_WORDS[p.method] ?? 'Payment', amount: format.money(p.amountMinor), when: format.dateTime(p.recordedAt) })),
  ];
  const refundedMinor = ledger.refundedMinor;
  const paidMinor = ledger.paidMinor;
  const owingMinor = ledger.balanceMinor;

  const live = registration.status !== 'CANCELLED';
  const free = registration.total_minor === 0 && payments.length === 0;
  const open = live && changesOpen(event, now);
  const publicView = live ? await loadPublicRegistration(ctx.db, registration.id, now) : undefined;
  const payable = publicView && registration.status === 'PENDING' && !(await payNowRefusal(ctx, publicView));
  const releasedAt = registration.status === 'PENDING' ? await heldUntil(ctx.db, registration.id, ctx.config.regional.timeZone) : undefined;
  const option = open ? cancelOption(registration, paidMinor, publicView?.cardPayment === 'in_flight') : undefined;
  // Paying in parts (a schedule, a payment already made, help, or extras added after paying): the registration page's
  // balance section, its pay form posting to pay-now, which stands for the pay-now button.
  const balance = live
    ? await balanceSection(ctx.db, ctx.config.regional, {
        registrationId: registration.id,
        event,
        pending: registration.status === 'PENDING',
        ...(payable ? { payForm: { action: `/registrations/${registration.id}/pay`, token: registrationToken(ctx.config.authSecret, registration.id, registration.manage_link_version) } } : {}),
      })
    : undefined;
  const extrasInput = options.extras ?? { typed: {}, errors: [] };
  const extras = live
    ? await extrasFormView(ctx, managed, {
        action: `${token}/extras`,
        typed: extrasInput.typed,
        errors: extrasInput.errors,
        money: format.money,
      })
    : undefined;

  const contact = {
    name: registration.contact_name,
    email: ctx.cipher.decrypt(registration.contact_email_enc),
    mobile: registration.contact_mobile_enc ? ctx.cipher.decrypt(registration.contact_mobile_enc) : '',
  };
  const storedDetails = {
    values: { ...contact, attendees: attendees.map((attendee, index) => ({ ...attendee, number: index + 1 })) },
    was: { ...contact, attendeeNames: attendees.map((attendee) => attendee.name) },
    errors: [],
  };
  const details = { ...storedDetails, ...options.details, was: options.details?.was ?? storedDetails.was };
  // A refused post opens the form it came from again, with what was typed and what was wrong.
  const contactErrors = details.errors.filter((error) => CONTACT_FIELDS.has(error.field));
  const attendeeErrors = details.errors.filter((error) => !CONTACT_FIELDS.has(error.field));
  const questions = askedQuestions(event);
  const stored = questions.length > 0 ? storedAnswers(ctx, registration) : emptyAnswers();
  const shownAnswers = answersView(questions, registration.attendees, stored, (value) => answerText(value, format, calendarDate(ctx.config.regional.locale)));
  const answerInput = options.answers ?? { fields: answerFieldsOf(stored), errors: [] };
  const answersForm = answersFormView(questions, registration.attendees, answerInput.fields, answerInput.errors, (tier) => tiers.get(tier) ?? tier);
  const asksAnything = answersForm.registration.length > 0 || answersForm.attendees.some((a) => a.questions.length > 0);
  return {
    title: 'Manage your registration',
    eventTitle: event.title,
    when: format.dateTimeSpan(event.startsAt, event.endsAt),
    location: event.location ?? undefined,
    reference: paymentReference(registration.id),
    statusLabel: statusLabel(registration),
    notice: options.notice,
    formError: options.formError,
    attendees,
    lines: lineViews(registration.line_items, attendees.map((a) => a.name), format.money),
    total: format.money(registration.total_minor),
    free,
    payments,
    paid: format.money(Math.max(0, paidMinor)),
    help: help.map((h) => ({ fund: h.fund, amount: format.money(h.amountMinor) })),
    refunded: refundedMinor > 0 ? format.money(refundedMinor) : undefined,
    owing: owingMinor > 0 ? format.money(owingMinor) : undefined,
    heldUntil: releasedAt ? format.dateTime(releasedAt) : undefined,
    bank: publicView && owingMinor > 0 ? await bankInstructions(ctx, publicView, owingMinor, format.money) : undefined,
    payNowHref: payable && !balance ? payNowPath(ctx.config.authSecret, registration.id, registration.manage_link_version) : undefined,
    balance,
    extras,
    contact,
    details: open
      ? { action: `${token}/details`, closesAt: format.dateTime(changesCloseAt(event)), contactErrors, attendeeErrors, ...details }
      : undefined,
    answers: asksAnything ? shownAnswers : undefined,
    answersForm: asksAnything && open ? { action: `${token}/answers`, errors: answerInput.errors, open: answerInput.errors.length > 0, ...answersForm } : undefined,
    changesClosedNote: live && !open ? 'Changes on this page have closed for this event. To change anything, please contact the church office.' : undefined,
    cancelHref: option === 'self' ? `${token}/cancel` : undefined,
    askOfficeAction: option === 'ask_office' ? `${token}/ask-cancel` : undefined,
  };
}

/**
 * The bank details and reference, while a bank-transfer registration owes money: as its registration page and
 * confirmation give them, not while a card payment may still be confirmed or finished (they would invite paying
 * twice), nor for an event that was cancelled.
 */
async function bankInstructions(
  ctx: AppContext,
  registration: PublicRegistration,
  owingMinor: number,
  money: (minor: number) => string,
): Promise<BankInstructionsView | undefined> {
  const cardOpen = registration.cardPayment === 'in_flight' || registration.cardPayment === 'resumable';
  if (registration.paymentMethod !== 'bank' || cardOpen || registration.event.deletedAt) return undefined;
  const details = await getBankDetails(ctx.db);
  return { ...details, configured: details !== undefined, reference: paymentReference(registration.id), amount: money(owingMinor) };
}

function statusLabel(registration: ManagedRegistration['registration']): string {
  if (registration.status === 'CANCELLED') return 'Cancelled';
  if (registration.status === 'PAID') return registration.total_minor === 0 ? 'Confirmed (free)' : 'Paid';
  return 'Awaiting payment';
}
