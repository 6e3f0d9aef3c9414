import type { EventRecord } from '../registrations/event-record.js';
import { addonFormViews } from './addon-view.js';
import { addonStockLeftNow } from './addon-stock-view.js';
import type { AppContext } from '../context.js';
import { cardMinimumOf, ticketsBelowCardMinimum } from '../payments/card-minimum.js';
import { cardPaymentPossible } from '../payments/links.js';
import { openForRegistration, priceDayOf } from '../signup/register.js';
import { publicPricing, visibleTiers } from '../registrations/event-pricing.js';
import { tierView } from './tier-view.js';
import { judgeCodeFor } from './code-view.js';
import { eventHasLiveCodes } from '../registrations/codes.js';
import type { PublicClient } from '../client-key.js';
import { publicSeatCount, type PublicSeatCount } from '../registrations/registrations.js';
import type { WaitlistContact } from '../registrations/waitlist/entries.js';
import { getCardFeeRate } from '../settings.js';
import { DATE_OF_BIRTH_QUESTION_ID } from '../registrations/answers.js';
import { PricingError } from '../registrations/pricing.js';
import { ageLimitedTiers, eventFirstDay } from '../registrations/questions.js';
import { browserAssetPath, REGISTRATION_FORM_SCRIPT } from './browser-assets.js';
import type { AgeLimitsConfig, LiveTotalConfig } from './live-total-config.js';
import { attendeeLimitNote, seatsLine, waitlistIntro } from './places-words.js';
import { describeTotal, priceBasket, totalHeading } from './total-words.js';
import { nothingToPay, type SubmittedValues } from './registration-form.js';
import type { EventPageData, FieldProblem } from './templates/event-page.js';
import { pageFormat } from './templates/format.js';
import { depositConfig, payPlanOptions } from './pay-plan-view.js';
import { calendarDay } from './balance-view.js';
import { askedQuestions, formQuestionViews, questionFieldHref, type AnswerFields } from './question-view.js';

/**
 * Attendee rows the page's script keeps at first: it takes away the blank rows past them (a phone then sees
 * a short form), and its "Add another person" button brings rows back. Without script every row the
 * registration may name is there.
 */
export const ATTENDEE_ROWS = 1;

export interface EventViewOptions {
  values?: SubmittedValues;
  /** The question fields as a refused post typed them. */
  answerFields?: AnswerFields;
  errors?: FieldProblem[];
  formError?: string;
  notice?: string;
  /** A waiting-list offer being claimed: its places are reserved, its contact fills the form. */
  offer?: OfferView;
  /** The join-the-waiting-list form given back: what was typed and what was wrong. */
  waitlist?: { values?: Partial<WaitlistValues>; error?: string };
  /** The registration asked for more places than are left: the waiting list is offered, filled in from the form. */
  overCapacity?: boolean;
  /** A code typed in "Have a code?" (the page's link), when the form given back carries none. */
  code?: string;
  /**
   * The connection a code is judged for: its refused codes count against its guesses (code-guesses.ts), and past
   * the limit no code is judged. Without one (a JSON post's own answer, a test), the code is not judged.
   */
  codeClient?: PublicClient;
  /** What the page's own read (readPublicEvent) already has: the seat count, the card fee rate, live codes. */
  preloaded?: PreloadedPageReads;
}

export interface PreloadedPageReads {
  count: PublicSeatCount;
  cardFeeRate: { percent: number; fixed: number };
  liveCodes: boolean;
}

export interface OfferView {
  token: string;
  places: number;
  expiresAt: Date;
  contact: WaitlistContact;
}

export interface WaitlistValues {
  name: string;
  email: string;
  mobile: string;
  places: string;
  /** The ticket type waited for; '' for any. */
  tier?: string;
}

export function eventPath(slug: string): string {
  return `/events/${encodeURIComponent(slug)}`;
}

/** Everything the public event page shows, formatted for the church's locale, currency and time zone. */
export async function eventPageData(
  ctx: AppContext,
  event: EventRecord,
  options: EventViewOptions = {},
): Promise<EventPageData & { title: string }> {
  const format = pageFormat(ctx.config.regional);
  const price = (minor: number) => (minor === 0 ? 'Free' : format.money(minor));
  const { pricing } = event;
  const offer = options.offer;
  const { preloaded } = options;
  const count = preloaded?.count ?? (await publicSeatCount(ctx.db, event, ctx.clock.now()));
  // Claiming an offer: the places it holds are this registration's, whatever the public count says.
  const seats = offer ? offer.places : count.seatsLeft;
  const closed = !openForRegistration(event, ctx.clock.now());
  // Nothing to pay: no payment choice at all, and the server takes a post without one.
  const free = nothingToPay(publicPricing(pricing));
  const card = !free && cardPaymentPossible(ctx.config, { online_payment: event.onlinePayment });
  const values = options.values ?? (offer ? offerValues(offer, pricing) : undefined);
  // A code applied: its hidden tier is offered, and the live total prices with it (judged again when posted). One the
  // registration refused is not judged again: its message is the form's.
  const typedCode = (values?.code ?? options.code ?? '').trim();
  const codeProblem = options.errors?.find((problem) => problem.field === 'code');
  const applied = typedCode && !codeProblem && options.codeClient ? await judgeCodeFor(ctx, event, typedCode, options.codeClient) : undefined;
  const revealed = applied?.terms?.reveals ? [applied.terms.reveals] : [];

  const rate = card && event.passCardFee ? (preloaded?.cardFeeRate ?? (await getCardFeeRate(ctx.db))) : undefined;
  // Said in the card choice's own hint: on a phone a separate note is one more paragraph to scroll past.
  const cardFeeHint = rate ? ` Adds a card processing fee (about ${format.percent(rate.percent)} + ${format.money(rate.fixed)}).` : '';
  // Said beside the card choice only when a ticket bought alone would be refused for it.
  const minimum = cardMinimumOf(ctx.config);
  const cardMinimumHint =
    minimum !== undefined && ticketsBelowCardMinimum(ctx.config, event, rate).length > 0
      ? ` Card payment needs at least ${format.money(minimum)} in total; for less, please choose bank transfer.`
      : '';

  const waiver = pricing.familyWaiver;
  const familyNote = waiver
    ? `You pay for the ${waiver.maxChargedTickets === 1 ? 'most expensive ticket' : `${waiver.maxChargedTickets} most expensive tickets`}; the rest of the household comes free.`
    : undefined;
  let discountNote: string | undefined;
  // No discount reaches an add-on: with add-ons the note says what it is off.
  const offWhat = (pricing.addons ?? []).length > 0 ? 'its tickets' : 'the total';
  if (pricing.discount && 'percent' in pricing.discount) discountNote = `Every registration gets ${format.percent(pricing.discount.percent)} off ${offWhat}.`;
  if (pricing.discount && 'amount' in pricing.discount) discountNote = `Every registration gets ${format.money(pricing.discount.amount)} off ${offWhat}.`;
  // The automatic discounts, said with the event's own: the sibling rules and the family maximum.
  const automatic = automaticDiscountNotes(pricing, format.money);
  if (automatic.length > 0) discountNote = [...automatic, ...(discountNote ? [discountNote] : [])].join(' ');

  const errors = options.errors ?? [];
  const errorOf = (field: string) => errors.find((problem) => problem.field === field)?.message;
  const attendeesError = errorOf('attendees');
  const submittedRows = values?.attendees ?? [];
  // Fewer places than a family may need: the page offers the waiting list (when the event has one) to a family
  // that names more people than that; the form itself shows when a place is left.
  const joinable = event.waitingList.enabled && !closed && !offer && count.seatsLeft !== null && count.seatsLeft < event.maxAttendeesPerRegistration;
  const placesLimit = seats !== null && seats < event.maxAttendeesPerRegistration;
  // Without a waiting list a registration can name no more people than there are places left: no more rows are
  // offered. With one the family may name more, and is offered the waiting list for them (the script as rows are
  // added, the server on the post). The server counts the places under the event's lock either way.
  const rowLimit = placesLimit && !joinable ? seats : event.maxAttendeesPerRegistration;
  // A refused form gives back every row that has a name, even past the limit (nothing typed is lost);
  // its blank rows are offered again only up to the limit.
  const namedRows = submittedRows.findLastIndex((row) => row.name.trim() !== '') + 1;
  const rowCount = Math.max(rowLimit, namedRows);
  const questions = formQuestionViews(event, askedQuestions(event), { rowCount, answerFields: options.answerFields, errors });
  // Today's prices (a schedule's step in force), and the tiers the public sees: hidden ones only through a code.
  // A ticket type with places of its own shows as full once the public can take none of them (an offer's claim aside).
  const tierViews = visibleTiers(pricing.tiers, revealed).map((tier) =>
    tierView(tier, priceDayOf(ctx, ctx.clock.now()), { price, locale: ctx.config.regional.locale, full: !offer && count.tierLeft.get(tier.id) === 0 }),
  );
  const addonViews = addonFormViews(pricing, rowCount, values?.addonFields ?? {}, errorOf, format.money, await addonStockLeftNow(ctx, event));
  const attendeeRows = Array.from({ length: rowCount }, (_, index) => {
    const row = submittedRows[index];
    const chosen = tierViews.some((tier) => tier.id === row?.tier) ? row?.tier : tierViews[0]?.id;
    const nameError = errorOf(`attendees[${index}].name`) ?? errorOf(`attendees[${index}]`);
    const tierError = errorOf(`attendees[${index}].tier`);
    const nameDescribedBy = [index === 0 && attendeesError ? 'attendees-error' : '', nameError ? `attendee-name-${index + 1}-error` : '']
      .filter(Boolean)
      .join(' ');
    return {
      number: index + 1,
      name: row?.name ?? '',
      nameError,
      nameDescribedBy: nameDescribedBy || undefined,
      tierError,
      options: tierViews.map((tier) => ({ id: tier.id, label: `${tier.label} (${tier.priceNow}${tier.full ? ', full' : ''})`, selected: tier.id === chosen })),
      questions: questions.rows[index] ?? [],
      addons: addonViews.rows[index],
    };
  });

  const payment = values?.payment === 'card' && card ? 'card' : values?.payment === 'bank' || !card ? 'bank' : 'card';
  const paymentOptions = free ? [] : paymentChoices(card, payment, `${cardFeeHint}${cardMinimumHint}`, rate !== undefined);

  const fields: EventPageData['fields'] = {
    name: { error: errorOf('name') },
    email: { error: errorOf('email') },
    mobile: { error: errorOf('mobile') },
    attendees: { error: attendeesError },
    family: { error: errorOf('family') },
    payment: { error: errorOf('payment') },
  };
  // The first field in page order with a problem takes the focus (autofocus: no script needed), so a
  // screen reader reads its label and its message at once.
  const firstProblem = [
    fields.name.error && 'name',
    fields.email.error && 'email',
    fields.mobile.error && 'mobile',
    ...attendeeRows.flatMap((row) => [
      (row.nameError || (row.number === 1 && attendeesError)) && `attendee-name-${row.number}`,
      row.tierError && `attendee-tier-${row.number}`,
    ]),
    fields.family.error && waiver && 'family',
    fields.payment.error && `payment-${paymentOptions[0]?.value}`,
  ].find((id): id is string => Boolean(id));

  // A ticket type with places of its own that is full: its families may wait for it while other places are on sale.
  const fullTiers = tierViews.filter((tier) => tier.full);
  const waitlistJoinable = joinable || (event.waitingList.enabled && !closed && !offer && fullTiers.length > 0);
  const waitlist = waitlistJoinable ? waitlistView(event, count, options, values, fullTiers) : undefined;
  const limitNote = offer ? undefined : attendeeLimitNote({ cap: event.maxAttendeesPerRegistration, placesLeft: seats ?? undefined, waitlist: joinable });

  return {
    title: pageTitle(event.title, errors.length > 0, options.formError !== undefined),
    waitlist,
    offer: offer ? { token: offer.token, note: offerNote(offer, format.dateTime) } : undefined,
    eventTitle: event.title,
    when: format.dateTimeSpan(event.startsAt, event.endsAt),
    location: event.location ?? undefined,
    description: event.description ?? undefined,
    tiers: tierViews,
    // Once registration has closed, the places left are no one's business: "50 places left" beside "closed" misleads.
    seatsLine: closed || seats === null || event.capacity === null || offer ? undefined : seatsLine(seats, event.capacity),
    limitNote,
    soldOut: seats === 0,
    registrationClosed: closed,
    familyNote,
    discountNote,
    nothingToPay: free,
    notice: options.notice,
    formError: options.formError,
    errors: errors.length > 0 ? errors.map((problem) => ({ ...problem, href: fieldHref(problem.field, paymentOptions[0]?.value) })) : undefined,
    fields: {
      name: { ...fields.name, focus: firstProblem === 'name' },
      email: { ...fields.email, focus: firstProblem === 'email' },
      mobile: { ...fields.mobile, focus: firstProblem === 'mobile' },
      attendees: fields.attendees,
      family: { ...fields.family, focus: firstProblem === 'family' },
      payment: fields.payment,
    },
    action: `${eventPath(event.slug)}/register`,
    values: {
      name: values?.name ?? '',
      email: values?.email ?? '',
      mobile: values?.mobile ?? '',
      family: values?.family ?? false,
      help: values?.help ?? false,
    },
    helpWithCost: event.helpWithCost,
    familyWaiver: Boolean(waiver),
    household: Boolean(waiver) || pricing.familyMaximum !== undefined,
    registrationQuestions: questions.registration,
    registrationAddons: addonViews.registration,
    registrationAddonsError: addonViews.registrationError,
    paymentOptions: paymentOptions.map((option) => ({ ...option, focus: firstProblem === `payment-${option.value}` })),
    payPlanOptions: free ? undefined : payPlanOptions(event.balanceTerms, values?.payPlan, calendarDay(ctx.config.regional.locale), format.money),
    attendeeRows: attendeeRows.map((row) => ({
      ...row,
      nameFocus: firstProblem === `attendee-name-${row.number}`,
      tierFocus: firstProblem === `attendee-tier-${row.number}`,
    })),
    maxAttendees: rowLimit,
    initialRows: Math.min(ATTENDEE_ROWS, rowLimit),
    placesLeft: joinable && seats !== null && seats > 0 ? seats : undefined,
    offerTotal: offer ? offerTotal(ctx, offer, pricing, rate, payment) : undefined,
    ageLimits: ageLimitsConfig(ctx, event),
    captchaSiteKey: ctx.config.captcha?.siteKey,
    captchaScript: Boolean(ctx.config.captcha) && !closed && (seats !== 0 || waitlist !== undefined),
    livePricing: JSON.stringify({
      ...liveTotalConfig(ctx, publicPricing(pricing, revealed), rate),
      ...(applied?.terms ? { code: applied.terms } : {}),
      ...(event.balanceTerms ? { deposit: depositConfig(event.balanceTerms) } : {}),
    }),
    codeForm:
      typedCode || (preloaded?.liveCodes ?? (await eventHasLiveCodes(ctx.db, event.id, priceDayOf(ctx, ctx.clock.now()))))
        ? {
            action: eventPath(event.slug),
            value: typedCode,
            applied: applied?.terms ? typedCode : undefined,
            note: applied?.note,
            error: codeProblem?.message ?? applied?.error,
          }
        : undefined,
    formScript: browserAssetPath(REGISTRATION_FORM_SCRIPT),
  };
}

/** "The 3rd Child and later: $50.00 each." and "A family pays at most $500.00 for its tickets." */
function automaticDiscountNotes(pricing: EventRecord['pricing'], money: (minor: number) => string): string[] {
  const ordinal = (n: number) => `${n}${n % 10 === 1 && n % 100 !== 11 ? 'st' : n % 10 === 2 && n % 100 !== 12 ? 'nd' : n % 10 === 3 && n % 100 !== 13 ? 'rd' : 'th'}`;
  const notes = (pricing.siblingDiscounts ?? []).flatMap((rule) => {
    const tier = pricing.tiers.find((candidate) => candidate.id === rule.tier && !candidate.hidden);
    if (!tier) return [];
    const what = rule.price !== undefined ? `${rule.price === 0 ? 'free' : `${money(rule.price)} each`}` : `${money(rule.amountOff ?? 0)} off each`;
    return [`In one registration, the ${ordinal(rule.from)} ${tier.label} ticket and later: ${what}.`];
  });
  if (pricing.familyMaximum !== undefined) notes.push(`A family pays at most ${money(pricing.familyMaximum)} for its tickets.`);
  return notes;
}

/** What the page's script prices the form with: the card fee only when a card payment would add it. */
function liveTotalConfig(ctx: AppContext, pricing: EventRecord['pricing'], cardFee: LiveTotalConfig['cardFee']): LiveTotalConfig {
  // The day the server prices a registration made now: the script prices the same step, whatever the device's clock says.
  const day = priceDayOf(ctx, ctx.clock.now());
  return { pricing, cardFee, day, locale: ctx.config.regional.locale, currency: ctx.config.regional.currency };
}

/** A claim link's form: the contact as the family gave it on joining, who is most often the first attendee too. */
function offerValues(offer: OfferView, pricing: EventRecord['pricing']): SubmittedValues {
  const contact = offer.contact;
  const attendees = [{ name: contact.name, tier: pricing.tiers[0]?.id ?? '' }];
  return { name: contact.name, email: contact.email, mobile: contact.mobile ?? '', family: false, payment: '', attendees };
}

/**
 * The total for the places an offer holds, each at the form's first ticket type and the payment the form has
 * chosen, as the total box says it: shown at once, without script too (the script then prices the rows as named).
 */
function offerTotal(
  ctx: AppContext,
  offer: OfferView,
  pricing: EventRecord['pricing'],
  cardFee: LiveTotalConfig['cardFee'],
  payment: 'card' | 'bank',
): EventPageData['offerTotal'] {
  const config = liveTotalConfig(ctx, pricing, cardFee);
  const tier = pricing.tiers[0]?.id;
  if (!tier) return undefined;
  const basket = { attendees: Array.from({ length: offer.places }, () => ({ name: '', tier })), family: false, payment };
  try {
    const priced = priceBasket(config, basket);
    if (!priced) return undefined;
    const { amount, details } = describeTotal(config, basket, priced);
    return { heading: totalHeading(priced.attendeeCount), amount, minor: priced.total, detail: details.join(' ') || undefined };
  } catch (error) {
    if (error instanceof PricingError) return undefined;
    throw error;
  }
}

/** What the page's script checks a date of birth with, as the server will (registrations/age-limit.ts). */
function ageLimitsConfig(ctx: AppContext, event: EventRecord): string | undefined {
  const limited = ageLimitedTiers(event);
  const question = askedQuestions(event).find((q) => q.id === DATE_OF_BIRTH_QUESTION_ID);
  if (limited.length === 0 || !question) return undefined;
  const config: AgeLimitsConfig = {
    firstDay: eventFirstDay(event, ctx.config.regional.timeZone),
    label: question.label,
    tiers: Object.fromEntries(limited.map((tier) => [tier.id, { label: tier.label, minAge: tier.minAge, maxAge: tier.maxAge }])),
  };
  return JSON.stringify(config);
}

function offerNote(offer: OfferView, dateTime: (date: Date) => string): string {
  const places = offer.places === 1 ? '1 place is' : `${offer.places} places are`;
  return `${places} held for you from the waiting list until ${dateTime(offer.expiresAt)}. Register below to take ${offer.places === 1 ? 'it' : 'them'}.`;
}

/**
 * The join-the-waiting-list form: shown when every place is taken, when it comes back refused, or when a
 * registration asked for more places than are left (then filled in from it). Otherwise it is on the page but
 * hidden, for the script to show once the family names more people than there are places left.
 */
function waitlistView(
  event: EventRecord,
  count: { seatsLeft: number | null; waiting: number },
  options: EventViewOptions,
  values: SubmittedValues | undefined,
  fullTiers: ReadonlyArray<{ id: string; label: string }>,
): NonNullable<EventPageData['waitlist']> {
  const seats = count.seatsLeft;
  // Fewer places left than one registration may name; otherwise the list is open because a ticket type is full.
  const placesShort = seats !== null && seats < event.maxAttendeesPerRegistration;
  const given = options.waitlist;
  const named = values?.attendees.filter((row) => row.name.trim() !== '').length ?? 0;
  const fromForm = options.overCapacity && values ? { name: values.name, email: values.email, mobile: values.mobile, places: named > 0 ? String(named) : '' } : undefined;
  const typed = given?.values ?? fromForm;
  const fullNames = fullTiers.map((tier) => tier.label).join(', ');
  // The ticket type a family waits for: any, or one of the full ones.
  const chosenTier = given?.values?.tier ?? '';
  const tiers = fullTiers.length > 0 ? [{ id: '', label: 'Any ticket', selected: chosenTier === '' }, ...fullTiers.map((tier) => ({ id: tier.id, label: tier.label, selected: tier.id === chosenTier }))] : undefined;
  return {
    action: `${eventPath(event.slug)}/waitlist`,
    intro: placesShort
      ? waitlistIntro(seats, count.waiting)
      : `Every ${fullNames} place is taken. Join the waiting list for one: when places free up we offer them in order, by email.`,
    maxPlaces: event.maxAttendeesPerRegistration,
    // Shown at once when nothing or no place of a full type can be had; else when asked for (given back, or too many named).
    shown: seats === 0 || !placesShort || given !== undefined || fromForm !== undefined,
    offered: fromForm !== undefined && (seats === null || seats > 0),
    error: given?.error,
    values: { name: typed?.name ?? '', email: typed?.email ?? '', mobile: typed?.mobile ?? '', places: typed?.places ?? '' },
    ...(tiers ? { tiers } : {}),
  };
}

/** The form given back names what went wrong first, so a screen reader or a tab list tells it from the event page. */
function pageTitle(eventTitle: string, fieldProblems: boolean, refused: boolean): string {
  if (fieldProblems) return `Please check the form · ${eventTitle}`;
  return refused ? `Not registered · ${eventTitle}` : eventTitle;
}

function paymentChoices(card: boolean, chosen: 'card' | 'bank', cardHints: string, cardHasFee: boolean): EventPageData['paymentOptions'] {
  const bankHint = `Our bank details are shown as soon as you register.${cardHasFee ? ' No fee.' : ''}`;
  const bank = { value: 'bank', label: 'Bank transfer', hint: bankHint, checked: chosen === 'bank' } as const;
  if (!card) return [bank];
  const hint = `Pay now on a secure page.${cardHints}`;
  return [{ value: 'card', label: 'Card', hint, checked: chosen === 'card' }, bank];
}

/** The control a problem's summary line links to; none for a problem with no field of its own (the bot check). */
function fieldHref(field: string, firstPayment: string | undefined): string | undefined {
  if (field.startsWith('q.')) return questionFieldHref(field);
  const row = /^attendees\[(\d+)\](?:\.(name|tier))?$/.exec(field);
  if (row) return `#attendee-${row[2] === 'tier' ? 'tier' : 'name'}-${Number(row[1]) + 1}`;
  if (field === 'attendees') return '#attendee-name-1';
  if (field === 'payment') return firstPayment ? `#payment-${firstPayment}` : undefined;
  return ['name', 'email', 'mobile', 'family'].includes(field) ? `#${field}` : undefined;
}
