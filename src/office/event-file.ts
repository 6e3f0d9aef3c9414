import { formatInTimeZone, fromZonedTime, getTimezoneOffset } from 'date-fns-tz';
import { z } from 'zod';
import { AppError, EXIT } from '../errors.js';
import { MAX_REGISTRATION_TOTAL_MINOR, type EventDiscount, type EventPricing } from '../registrations/event-pricing.js';
import { DATE_OF_BIRTH_QUESTION_ID, QUESTION_TYPES, type Question } from '../registrations/answers.js';
import { ADULT_AGE, tierMayBeChild } from '../registrations/child.js';
import { balanceTermsKeys, balanceTermsOf, type BalanceTermsInFile } from '../registrations/balance-terms.js';

/**
 * The event file of `eventops events create|update FILE.json` (a public
 * interface: see "Admin interface" in the decisions). Every object is strict,
 * so a misspelt key is rejected by name instead of silently ignored.
 */

/** With the balance terms (deposit, balanceDueAt, minimumPayment, instalments, overdue): registrations/balance-terms.ts. */
export interface EventFile extends BalanceTermsInFile {
  slug: string;
  title: string;
  description?: string | null;
  startsAt: Date;
  /** When the event ends (a camp over a weekend); null or absent: its calendar entry lasts two hours. */
  endsAt?: Date | null;
  location?: string | null;
  capacity: number | null;
  published?: boolean;
  onlinePayment?: boolean;
  passCardFee?: boolean;
  /** The form offers "We would like to talk about help with the cost" (default false). */
  helpWithCost?: boolean;
  reminderAt?: Date | null;
  /** Attendees one registration may name (default 10). */
  maxAttendeesPerRegistration?: number;
  /** Days an unpaid bank-transfer registration holds its seats (create: 7 when absent); null = until the event. */
  unpaidHoldDays?: number | null;
  /** The most unpaid places public registrations from one client address, or to one mailbox, may hold (default 30). */
  maxUnpaidSeatsPerClient?: number;
  /** The share of the capacity (0 to 1) public registrations may hold unpaid before the office is alerted (create: 0.4); null: never. */
  unpaidAlertShare?: number | null;
  /** Until when a family may correct its details and cancel on its manage page (at or before startsAt); null or absent: until the event starts. */
  changesCloseAt?: Date | null;
  /** Off when absent; an offer holds its places offerHours (1–168, default 24). */
  waitingList?: { enabled: boolean; offerHours?: number };
  /** What the form asks, in order (see "Questions" in docs/office.md); absent on update: kept as stored. */
  questions?: Question[];
  /** Days after the event ends that its sensitive answers are purged (0–3650; create: 30 when absent). */
  sensitiveRetentionDays?: number;
  pricing: EventPricing;
}

/** When an event file does not say: how many attendees one registration may name. */
export const DEFAULT_MAX_ATTENDEES_PER_REGISTRATION = 10;
/** When an event file being created does not say: the days an unpaid bank-transfer registration holds its seats. */
export const DEFAULT_UNPAID_HOLD_DAYS = 7;
/** When an event file does not say: the unpaid places one client address may hold (see "Unpaid places per connection"). */
export const DEFAULT_MAX_UNPAID_SEATS_PER_CLIENT = 30;
/** When an event file being created does not say: the share of the capacity held unpaid that alerts the office. */
export const DEFAULT_UNPAID_ALERT_SHARE = 0.4;
/** When an event file being created does not say: the days after the event its sensitive answers are kept. */
export const DEFAULT_SENSITIVE_RETENTION_DAYS = 30;
/** The largest capacity an event file may give (it is stored as a 32-bit integer); null is unlimited. */
export const MAX_CAPACITY = 1_000_000;
/** The most any event may allow in one registration (the form's own hard limit). */
export const MAX_ATTENDEES_LIMIT = 50;

const isoWithOffset = z.iso
  .datetime({ offset: true, error: 'an ISO 8601 time with an offset, e.g. 2027-03-12T18:00:00+11:00' })
  .transform((value) => new Date(value));

// A price above what one registration may cost could never be registered.
const minorUnits = z
  .int({ error: 'an integer amount in minor units' })
  .min(0, { error: 'at least 0' })
  .max(MAX_REGISTRATION_TOTAL_MINOR, { error: `at most ${MAX_REGISTRATION_TOTAL_MINOR}` });

const ageYears = z.int({ error: 'a whole number of years' }).min(0, { error: 'at least 0' }).max(120, { error: 'at most 120' });

/** A church-local calendar date, yyyy-MM-dd, that exists (2027-02-30 does not). */
export const calendarDate = z
  .string({ error: 'a date, e.g. 2027-03-01' })
  .regex(/^\d{4}-\d{2}-\d{2}$/, { error: 'a date written yyyy-mm-dd, e.g. 2027-03-01', abort: true })
  .refine((value) => {
    const date = new Date(`${value}T00:00:00Z`);
    return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
  }, { error: 'a date that exists on the calendar' });

// "until 2027-03-01" is through the end of 1 March in the church's time zone (APP_TIMEZONE).
const priceStepSchema = z.strictObject({
  until: calendarDate.optional(),
  price: minorUnits,
});

/** Steps in increasing date order, each but the last with its `until`, the last without: each problem named by its key. */
function checkSchedule(steps: ReadonlyArray<{ until?: string }>, ctx: z.RefinementCtx): void {
  const issue = (index: number, message: string) => ctx.addIssue({ code: 'custom', path: ['prices', index, 'until'], message });
  steps.forEach((step, index) => {
    const last = index === steps.length - 1;
    if (last && step.until !== undefined) issue(index, 'the last step has no "until": it is the price from the day after the step before it on');
    if (!last && step.until === undefined) issue(index, `a date: only the last step is open-ended (step ${index + 1} of ${steps.length})`);
    const before = steps[index - 1]?.until;
    if (step.until !== undefined && before !== undefined && step.until <= before) issue(index, `after ${before}, the step before it: steps are in increasing date order`);
  });
}

const tierSchema = z
  .strictObject({
    id: z.string().trim().min(1, { error: 'a non-empty tier id' }),
    label: z.string().trim().min(1, { error: 'a non-empty label' }),
    price: minorUnits.optional(),
    // A price that changes by date: [{"until": "2027-03-01", "price": 30000}, {"price": 35000}].
    prices: z.array(priceStepSchema).min(1, { error: 'at least one step, the last without "until"' }).max(20, { error: 'at most 20 steps' }).optional(),
    // Places of this ticket type, inside the event's capacity.
    capacity: z
      .int({ error: 'a whole number of places' })
      .min(0, { error: 'at least 0' })
      .max(MAX_CAPACITY, { error: `at most ${MAX_CAPACITY}` })
      .optional(),
    // Neither shown nor accepted on the public form without a code that reveals it (`eventops codes create --reveals`).
    hidden: z.boolean({ error: 'true (shown only with a code that reveals it) or false' }).optional(),
    // Checked on the attendee's date of birth as of the event's start; the form then asks it.
    minAge: ageYears.optional(),
    maxAge: ageYears.optional(),
    // Every attendee of the tier is a child (a consent is then the contact's as guardian): see registrations/child.ts.
    child: z.boolean({ error: 'true (every attendee of this tier is a child) or false' }).optional(),
  })
  .superRefine((tier, ctx) => {
    if ((tier.price === undefined) === (tier.prices === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [tier.price === undefined ? 'price' : 'prices'],
        message: tier.price === undefined ? 'required: a price, or "prices" for one that changes by date' : 'give either "price" or "prices", not both',
      });
    }
    if (tier.prices) checkSchedule(tier.prices, ctx);
  })
  .refine((tier) => tier.minAge === undefined || tier.maxAge === undefined || tier.minAge <= tier.maxAge, {
    error: 'at least minAge',
    path: ['maxAge'],
  })
  .superRefine((tier, ctx) => {
    const says = (message: string) => ctx.addIssue({ code: 'custom', path: ['child'], message });
    if (tier.child === true && tier.minAge !== undefined && tier.minAge >= ADULT_AGE) {
      says(`a children's tier cannot have a minAge of ${ADULT_AGE} or more`);
    } else if (tier.child === true && tier.maxAge !== undefined && tier.maxAge >= ADULT_AGE) {
      says(`a children's tier cannot have a maxAge of ${ADULT_AGE} or more; leave "child" out and the date of birth decides`);
    } else if (tier.child === false && tier.maxAge !== undefined && tier.maxAge < ADULT_AGE) {
      says(`a maxAge under ${ADULT_AGE} makes every attendee of the tier a child; leave "child" out or set it to true`);
    }
  });

export const QUESTION_ID_PATTERN = /^[A-Za-z][A-Za-z0-9_]{0,39}$/;

const questionSchema = z.strictObject({
  id: z
    .string({ error: 'a question id' })
    .regex(QUESTION_ID_PATTERN, { error: 'a letter, then letters, digits or _, at most 40 in all, e.g. "allergies"' })
    .refine((id) => id !== DATE_OF_BIRTH_QUESTION_ID, {
      error: `"${DATE_OF_BIRTH_QUESTION_ID}" is reserved: the form asks it by itself when a tier has minAge or maxAge`,
    }),
  label: z.string({ error: 'the question as the form shows it' }).trim().min(1, { error: 'a non-empty label' }).max(500, { error: 'at most 500 characters' }),
  type: z.enum(QUESTION_TYPES, { error: `one of ${QUESTION_TYPES.join(', ')}` }),
  appliesTo: z.enum(['attendee', 'registration'], { error: '"attendee" (asked for each attendee) or "registration" (asked once)' }),
  tiers: z.array(z.string()).min(1, { error: 'at least one tier id, or leave tiers out for every tier' }).optional(),
  required: z.boolean().optional(),
  options: z.array(z.string().trim().min(1, { error: 'a non-empty option' }).max(200, { error: 'at most 200 characters' })).optional(),
  showIf: z.strictObject({ question: z.string(), equals: z.string() }).optional(),
  sensitive: z.boolean().optional(),
  showAtCheckin: z.boolean().optional(),
  help: z.string().max(1000, { error: 'at most 1000 characters' }).optional(),
});

const CHOICE_TYPES = new Set(['choice', 'multichoice']);
const SHOW_IF_TYPES = new Set(['yesno', 'choice', 'multichoice']);

/** The rules between questions, and between questions and tiers: each problem named by its key. */
function checkQuestions(questions: readonly Question[], tierIds: ReadonlySet<string>, ctx: z.RefinementCtx): void {
  const issue = (index: number, key: string | undefined, message: string) =>
    ctx.addIssue({ code: 'custom', path: ['questions', index, ...(key ? [key] : [])], message });
  const seen = new Map<string, Question>();
  questions.forEach((q, index) => {
    if (seen.has(q.id)) issue(index, 'id', `duplicate question id "${q.id}"`);
    if (CHOICE_TYPES.has(q.type)) {
      if (!q.options || q.options.length === 0) issue(index, 'options', `a ${q.type} question needs a non-empty list of options`);
      else if (new Set(q.options).size !== q.options.length) issue(index, 'options', 'each option once');
    } else if (q.options !== undefined) {
      issue(index, 'options', `only choice and multichoice questions have options (this one is ${q.type})`);
    }
    if (q.tiers !== undefined) {
      if (q.appliesTo !== 'attendee') issue(index, 'tiers', 'only attendee questions are asked per tier');
      const unknown = q.tiers.filter((tier) => !tierIds.has(tier));
      if (unknown.length > 0) issue(index, 'tiers', `no tier ${unknown.map((t) => `"${t}"`).join(', ')} in pricing.tiers`);
    }
    if (q.showIf) {
      const trigger = seen.get(q.showIf.question);
      if (!trigger) {
        issue(index, 'showIf', `"${q.showIf.question}" is not a question before this one`);
      } else if (!SHOW_IF_TYPES.has(trigger.type)) {
        issue(index, 'showIf', `"${trigger.id}" is a ${trigger.type} question; showIf names a yesno, choice or multichoice one`);
      } else if (q.appliesTo === 'registration' && trigger.appliesTo === 'attendee') {
        issue(index, 'showIf', `"${trigger.id}" is asked per attendee, so it cannot decide a question asked once`);
      } else {
        const valid = trigger.type === 'yesno' ? ['yes', 'no'] : (trigger.options ?? []);
        if (!valid.includes(q.showIf.equals)) {
          issue(index, 'showIf', `equals must be one of ${valid.map((v) => `"${v}"`).join(', ')} (the answers of "${trigger.id}")`);
        }
      }
    }
    if (!seen.has(q.id)) seen.set(q.id, q);
  });
}

const discountSchema = z
  .strictObject({
    // Whole hundredths of a percent, which prices exactly (basis points), as the page shows it.
    percent: z
      .number()
      .min(0, { error: 'a percentage 0–100' })
      .max(100, { error: 'a percentage 0–100' })
      .refine((percent) => Math.abs(percent * 100 - Math.round(percent * 100)) < 1e-6, { error: 'a percentage with at most 2 decimals' })
      .optional(),
    amount: minorUnits.optional(),
  })
  .superRefine((discount, ctx) => {
    if ((discount.percent === undefined) === (discount.amount === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'exactly one of "percent" or "amount"' });
    }
  })
  .transform((discount): EventDiscount =>
    discount.percent !== undefined ? { percent: discount.percent } : { amount: discount.amount ?? 0 },
  );

/** An add-on's id: a letter, then letters, digits, - or _ (no ":" or "=", which `--addon 1:tshirt=M` separates by). */
export const ADDON_ID_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,39}$/;
const MAX_ADDONS = 50;

const addonSchema = z.strictObject({
  id: z.string({ error: 'an add-on id' }).regex(ADDON_ID_PATTERN, { error: 'a letter, then letters, digits, - or _, at most 40 in all, e.g. "bus"' }),
  label: z.string({ error: 'the add-on as the form shows it' }).trim().min(1, { error: 'a non-empty label' }).max(200, { error: 'at most 200 characters' }),
  price: minorUnits,
  per: z.enum(['attendee', 'registration'], { error: '"attendee" (chosen for each attendee) or "registration" (chosen once)' }),
  stock: z.int({ error: 'a whole number: how many may be sold in all' }).min(0, { error: 'at least 0' }).max(MAX_CAPACITY, { error: `at most ${MAX_CAPACITY}` }).optional(),
  required: z.boolean({ error: 'true (must be chosen, or one of its group) or false' }).optional(),
  group: z.string({ error: 'a group name' }).trim().min(1, { error: 'a non-empty group name' }).max(40, { error: 'at most 40 characters' }).optional(),
  tiers: z.array(z.string({ error: 'a tier id' })).min(1, { error: 'at least one tier id, or leave tiers out for every tier' }).optional(),
  maxPerAttendee: z.int({ error: 'a whole number' }).min(1, { error: 'at least 1' }).max(20, { error: 'at most 20' }).optional(),
  options: z
    .array(z.string({ error: 'an option' }).trim().min(1, { error: 'a non-empty option' }).max(60, { error: 'at most 60 characters' }))
    .min(1, { error: 'at least one option, or leave options out' })
    .max(30, { error: 'at most 30 options' })
    .optional(),
});

/** The rules between add-ons, and between add-ons and tiers: each problem named by its key. */
function checkAddons(addons: ReadonlyArray<z.output<typeof addonSchema>>, tierIds: ReadonlySet<string>, ctx: z.RefinementCtx): void {
  const issue = (index: number, key: string, message: string) => ctx.addIssue({ code: 'custom', path: ['addons', index, key], message });
  const ids = new Set<string>();
  const groups = new Map<string, { per: string; required: boolean; id: string }>();
  addons.forEach((addon, index) => {
    if (ids.has(addon.id)) issue(index, 'id', `duplicate add-on id "${addon.id}"`);
    ids.add(addon.id);
    if (addon.tiers !== undefined) {
      if (addon.per !== 'attendee') issue(index, 'tiers', 'only per-attendee add-ons are offered per tier');
      const unknown = addon.tiers.filter((tier) => !tierIds.has(tier));
      if (unknown.length > 0) issue(index, 'tiers', `no tier ${unknown.map((t) => `"${t}"`).join(', ')} in pricing.tiers`);
    }
    if (addon.options && new Set(addon.options).size !== addon.options.length) issue(index, 'options', 'each option once');
    if (addon.group !== undefined) {
      const first = groups.get(addon.group);
      const required = addon.required === true;
      if (!first) groups.set(addon.group, { per: addon.per, required, id: addon.id });
      else if (first.per !== addon.per) issue(index, 'per', `the same as "${first.id}", the first add-on of group "${addon.group}"`);
      else if (first.required !== required) issue(index, 'required', `the same as "${first.id}", the first add-on of group "${addon.group}" (a group is required or not as a whole)`);
    }
  });
}

export const eventPricingSchema = z.strictObject({
  tiers: z
    .array(tierSchema)
    .min(1, { error: 'at least one ticket tier' })
    .superRefine((tiers, ctx) => {
      const seen = new Set<string>();
      tiers.forEach((tier, index) => {
        if (seen.has(tier.id)) ctx.addIssue({ code: 'custom', path: [index, 'id'], message: `duplicate tier id "${tier.id}"` });
        seen.add(tier.id);
      });
      if (tiers.length > 0 && tiers.every((tier) => tier.hidden === true)) {
        ctx.addIssue({ code: 'custom', path: [0, 'hidden'], message: 'at least one tier the public can see (every tier is hidden)' });
      }
    }),
  familyWaiver: z
    .strictObject({ maxChargedTickets: z.int({ error: 'an integer' }).min(1, { error: 'at least 1' }) })
    .optional(),
  discount: discountSchema.optional(),
  // From the Nth attendee of a tier on, within one registration: a lower price, or an amount off each ticket.
  siblingDiscounts: z
    .array(
      z
        .strictObject({
          tier: z.string({ error: 'a tier id' }).trim().min(1, { error: 'a tier id' }),
          from: z.int({ error: 'a whole number: the first attendee of the tier it reaches, e.g. 3 for the third' }).min(2, { error: 'at least 2 (the first attendee pays the full price)' }).max(MAX_ATTENDEES_LIMIT, { error: `at most ${MAX_ATTENDEES_LIMIT}` }),
          price: minorUnits.optional(),
          amountOff: minorUnits.optional(),
        })
        .superRefine((rule, ctx) => {
          if ((rule.price === undefined) === (rule.amountOff === undefined)) ctx.addIssue({ code: 'custom', message: 'exactly one of "price" or "amountOff"' });
        }),
    )
    .max(20, { error: 'at most 20 rules' })
    .optional(),
  // The most a family registration pays for its tickets, after a code and before the event's discount.
  familyMaximum: minorUnits.optional(),
  // Extras with their own price and stock: registrations/addons.ts.
  addons: z.array(addonSchema).max(MAX_ADDONS, { error: `at most ${MAX_ADDONS} add-ons` }).optional(),
}).superRefine((pricing, ctx) => {
  checkAddons(pricing.addons ?? [], new Set(pricing.tiers.map((tier) => tier.id)), ctx);
  const tierIds = new Set(pricing.tiers.map((tier) => tier.id));
  const seen = new Set<string>();
  (pricing.siblingDiscounts ?? []).forEach((rule, index) => {
    if (!tierIds.has(rule.tier)) ctx.addIssue({ code: 'custom', path: ['siblingDiscounts', index, 'tier'], message: `no tier "${rule.tier}" in pricing.tiers` });
    else if (seen.has(rule.tier)) ctx.addIssue({ code: 'custom', path: ['siblingDiscounts', index, 'tier'], message: `one rule per tier ("${rule.tier}" has one before this)` });
    seen.add(rule.tier);
  });
});

export const eventFileSchema = z.strictObject({
  slug: z
    .string()
    .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, { error: 'lowercase letters, digits and single hyphens, e.g. family-camp' }),
  title: z.string().trim().min(1, { error: 'a non-empty title' }),
  description: z.string().nullable().optional(),
  startsAt: isoWithOffset,
  endsAt: isoWithOffset.nullable().optional(),
  location: z.string().nullable().optional(),
  capacity: z
    .int({ error: 'an integer, or null for unlimited' })
    .min(0, { error: 'at least 0' })
    .max(MAX_CAPACITY, { error: `at most ${MAX_CAPACITY}, or null for unlimited` })
    .nullable(),
  published: z.boolean().optional(),
  onlinePayment: z.boolean().optional(),
  passCardFee: z.boolean().optional(),
  helpWithCost: z.boolean({ error: 'true or false' }).optional(),
  reminderAt: isoWithOffset.nullable().optional(),
  maxAttendeesPerRegistration: z
    .int({ error: 'a whole number of attendees' })
    .min(1, { error: 'at least 1' })
    .max(MAX_ATTENDEES_LIMIT, { error: `at most ${MAX_ATTENDEES_LIMIT}` })
    .optional(),
  unpaidHoldDays: z.int({ error: 'a whole number of days, or null' }).min(1, { error: 'at least 1' }).max(365, { error: 'at most 365' }).nullable().optional(),
  maxUnpaidSeatsPerClient: z
    .int({ error: 'a whole number of places' })
    .min(1, { error: 'at least 1' })
    .max(MAX_CAPACITY, { error: `at most ${MAX_CAPACITY}` })
    .optional(),
  unpaidAlertShare: z
    .number({ error: 'a share of the capacity as a number from 0 to 1, e.g. 0.4 for 40%, or null for no alert' })
    .gt(0, { error: 'more than 0 (null for no alert)' })
    .max(1, { error: 'at most 1 (the whole capacity)' })
    .nullable()
    .optional(),
  changesCloseAt: isoWithOffset.nullable().optional(),
  waitingList: z
    .strictObject({
      enabled: z.boolean(),
      offerHours: z.int({ error: 'a whole number of hours' }).min(1, { error: 'at least 1' }).max(168, { error: 'at most 168' }).optional(),
    })
    .optional(),
  questions: z.array(questionSchema).max(100, { error: 'at most 100 questions' }).optional(),
  sensitiveRetentionDays: z.int({ error: 'a whole number of days' }).min(0, { error: 'at least 0' }).max(3650, { error: 'at most 3650' }).optional(),
  pricing: eventPricingSchema,
  ...balanceTermsKeys,
})
  .superRefine((file, ctx) => {
    if (file.questions) checkQuestions(file.questions, new Set(file.pricing.tiers.map((tier) => tier.id)), ctx);
    for (const problem of balanceTermsOf(file, file.startsAt).problems) ctx.addIssue({ code: 'custom', path: [problem.path], message: problem.message });
  })
  // The reminder job sends only for events that have not started: a later reminder would never go out.
  .refine((file) => !file.reminderAt || file.reminderAt < file.startsAt, { error: 'before startsAt', path: ['reminderAt'] })
  .refine((file) => !file.endsAt || file.endsAt > file.startsAt, { error: 'after startsAt', path: ['endsAt'] })
  // Families may not cancel or change anything once the event has started (a checked-in attendee cancelled afterwards).
  .refine((file) => !file.changesCloseAt || file.changesCloseAt <= file.startsAt, {
    error: 'at or before startsAt (families cannot change or cancel a registration once the event has started)',
    path: ['changesCloseAt'],
  });

/**
 * An attendee consent no attendee can give as a child's guardian: each tier it is asked of has neither
 * `"child": true` nor an age limit that lets a child in, so every consent is recorded as the contact's own and the
 * door shows no guardian. Said, not refused (a consent from adults is fine): "Child" as a label decides nothing.
 */
export function guardianWarnings(event: { questions: readonly Question[]; pricing: EventPricing }): string[] {
  return event.questions.flatMap((question, index) => {
    if (question.type !== 'consent' || question.appliesTo !== 'attendee') return [];
    const tiers = event.pricing.tiers.filter((tier) => !question.tiers || question.tiers.includes(tier.id));
    if (tiers.some(tierMayBeChild)) return [];
    return [
      `questions.${index} ("${question.id}"): a consent asked of each attendee, and no tier it is asked of (${tiers.map((t) => t.id).join(', ')}) can be a child, ` +
        `so every consent is recorded as the contact's own, never as a guardian's, and the door shows no guardian; ` +
        `mark a children's tier "child": true (or give it a maxAge under ${ADULT_AGE}, or minAge/maxAge to ask a date of birth)`,
    ];
  });
}

// Keeps the hand-written types above and the schema from drifting apart.
type Assert<T extends true> = T;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export type EventFileMatchesSchema = Assert<Same<z.output<typeof eventFileSchema>, EventFile>>;

export class EventFileError extends AppError {
  constructor(readonly problems: string[]) {
    super('event_invalid', `the event file is invalid:\n${problems.map((p) => `  - ${p}`).join('\n')}`, {
      exitCode: EXIT.usage,
      httpStatus: 400,
      suggestion: 'see "The event file" in docs/office.md for every key and its format',
    });
    this.name = 'EventFileError';
  }
}

/** Validates an already-parsed event file; throws EventFileError listing every problem. */
/**
 * Validates an event file. With the church's time zone, a time written with an offset the zone does
 * not have on that day is refused too: copying `+11:00` from a summer event to one after daylight
 * saving ends in Sydney would start it an hour early, silently.
 */
export function parseEventFile(input: unknown, options: { timeZone?: string } = {}): EventFile {
  const parsed = eventFileSchema.safeParse(input);
  if (!parsed.success) throw new EventFileError(parsed.error.issues.map(describeIssue));
  const mismatched = options.timeZone ? offsetMismatches(input as Record<string, unknown>, options.timeZone) : [];
  if (mismatched.length > 0) throw new EventFileError(mismatched);
  return parsed.data;
}

const TIME_KEYS = ['startsAt', 'endsAt', 'reminderAt', 'changesCloseAt'] as const;

/** Each time whose written offset (Z, UTC, is taken as meant) is not the time zone's at that instant. */
function offsetMismatches(input: Record<string, unknown>, timeZone: string): string[] {
  return TIME_KEYS.flatMap((key) => {
    const value = input[key];
    const match = typeof value === 'string' ? /^(.*)([+-])(\d{2}):?(\d{2})$/.exec(value) : null;
    if (!match) return [];
    const [, wallClock = '', sign, hours, minutes] = match;
    const written = (sign === '-' ? -1 : 1) * (Number(hours) * 60 + Number(minutes));
    const instant = new Date(value as string);
    const actual = getTimezoneOffset(timeZone, instant) / 60_000;
    if (written === actual) return [];
    const meant = formatInTimeZone(fromZonedTime(wallClock, timeZone), timeZone, "yyyy-MM-dd'T'HH:mm:ssXXX");
    return [
      `${key}: ${String(value)} is ${formatInTimeZone(instant, timeZone, 'HH:mm')} in ${timeZone}, whose offset then is ` +
        `${formatInTimeZone(instant, timeZone, 'XXX')}, not ${sign}${hours}:${minutes}; for ${wallClock.slice(11, 16)} there write ${meant}`,
    ];
  });
}

/**
 * Each time written in UTC (`Z`) where the church's zone is not at UTC then. It is taken as written
 * (UTC is never ambiguous), but `19:00:00Z` is usually meant as 7 pm local: said beside the
 * local time it became, with the offset to write for the wall clock as written. For an event file
 * that already passed parseEventFile.
 */
export function utcTimeWarnings(input: unknown, timeZone: string): string[] {
  if (typeof input !== 'object' || input === null) return [];
  return TIME_KEYS.flatMap((key) => {
    const value = (input as Record<string, unknown>)[key];
    if (typeof value !== 'string' || !/[zZ]$/.test(value)) return [];
    const instant = new Date(value);
    if (getTimezoneOffset(timeZone, instant) === 0) return [];
    const wallClock = value.slice(0, -1);
    const meant = formatInTimeZone(fromZonedTime(wallClock, timeZone), timeZone, "yyyy-MM-dd'T'HH:mm:ssXXX");
    return [
      `${key}: ${value} is written in UTC (Z), which is ${formatInTimeZone(instant, timeZone, "yyyy-MM-dd HH:mm")} in ${timeZone}; ` +
        `if ${wallClock.slice(11, 16)} there was meant, write ${meant} and run \`eventops events update\``,
    ];
  });
}

/** The utcTimeWarnings of an event file's text (which parseEventFileText accepted). */
export function utcTimeWarningsInText(text: string, timeZone: string): string[] {
  try {
    return utcTimeWarnings(JSON.parse(text.replace(/^\uFEFF/, '')), timeZone);
  } catch {
    return [];
  }
}

/** Parses the text of an event file (JSON) and validates it. A byte-order mark (Windows Notepad's UTF-8) is ignored. */
export function parseEventFileText(text: string, options: { timeZone?: string } = {}): EventFile {
  let json: unknown;
  try {
    json = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new EventFileError([`not valid JSON (${error instanceof Error ? error.message : String(error)})`]);
  }
  return parseEventFile(json, options);
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.length > 0 ? issue.path.map(String).join('.') : '(top level)';
  if (issue.code === 'unrecognized_keys') {
    const names = issue.keys.map((key) => (issue.path.length > 0 ? `${where}.${key}` : key));
    return `unknown key${names.length === 1 ? '' : 's'} ${names.map((n) => `"${n}"`).join(', ')}`;
  }
  if (issue.code === 'invalid_type' && issue.message.endsWith('received undefined')) return `${where}: required`;
  return `${where}: ${issue.message}`;
}
