import { z } from 'zod';
import { MAX_ATTENDEES_LIMIT } from '../office/event-file.js';
import { priceRegistration, UNKNOWN_TIER_MESSAGE } from '../registrations/pricing.js';
import { tierPrices, visibleTiers, type EventPricing } from '../registrations/event-pricing.js';
import { localDay } from '../local-time.js';
import type { RegistrationSubmission } from '../signup/register.js';
import { contactEmail, contactMobile } from '../contact-rules.js';
import { CONTROL_CHARACTERS_MESSAGE, hasControlCharacters, personName, publicString } from './field-rules.js';
import type { FieldProblem } from './templates/event-page.js';
import type { EventRecord } from '../registrations/event-record.js';
import { answerFieldsFromJson, readAnswers, type AnswerFields, type AnsweringAttendee } from '../registrations/questions.js';
import { typedAnswerFields } from './question-view.js';
import { addonFieldNames, addonFieldsOfForm, addonFieldsOfJson } from './addon-fields.js';
import { typedAddonFields } from './addon-view.js';

/**
 * The registration form of decisions.md "Admin interface", as posted by the
 * page (form-encoded, repeated attendee_name / attendee_tier fields, empty
 * rows ignored) or as JSON (`attendees: [{name, tier}]`). Amounts are never
 * read: the server prices the choices.
 */

export const MAX_ATTENDEES = MAX_ATTENDEES_LIMIT;
/** Rows beyond this are refused before looking at them. */
const MAX_SUBMITTED_ROWS = 200;
/** Field the Turnstile widget adds to the form. */
export const CAPTCHA_FORM_FIELD = 'cf-turnstile-response';

export interface SubmittedValues {
  name: string;
  email: string;
  mobile: string;
  family: boolean;
  payment: string;
  /** The pay plan chosen on an event with a deposit ('' for none). */
  payPlan?: string;
  attendees: Array<{ name: string; tier: string }>;
  /** The code typed ('' for none). */
  code?: string;
  /** "We would like to talk about help with the cost" ticked. */
  help?: boolean;
  /** The add-on fields as typed, by name (addon-view.ts gives them back on a refused form). */
  addonFields?: Record<string, string[]>;
}

export type ParsedRegistration =
  | { ok: true; submission: RegistrationSubmission; captchaToken?: string; values: SubmittedValues }
  | { ok: false; problems: FieldProblem[]; values: SubmittedValues };

const PAYMENT_MESSAGE = 'choose card or bank transfer';
/** Longer than any code (40): what is typed past it is not read. */
const MAX_CODE_LENGTH = 100;

/**
 * Nothing the form can choose costs anything: every ticket type is free, or the discount takes everything
 * off. The page then offers no payment choice.
 */
export function nothingToPay(pricing: EventPricing): boolean {
  const discount = pricing.discount;
  // No discount reaches an add-on: one with a price is something to pay.
  if ((pricing.addons ?? []).some((addon) => addon.price > 0)) return false;
  return pricing.tiers.every((tier) => tierPrices(tier).every((price) => price === 0)) || (discount !== undefined && 'percent' in discount && discount.percent >= 100);
}

/**
 * Whether a post must say how it pays: not when there is nothing to pay, for the event or for these choices
 * (free tickets on an event that also has priced ones). Choices that cannot be priced need it, as before.
 */
function paymentNeeded(pricing: EventPricing, attendees: RegistrationSubmission['attendees'], family: boolean | undefined, day: string | undefined, addons?: RegistrationSubmission['addons']): boolean {
  if (nothingToPay(pricing)) return false;
  if (attendees.length === 0 || family === undefined) return true;
  try {
    return !priceRegistration(pricing, { attendees, family, addons }, { day }).free;
  } catch {
    return true;
  }
}

const contactSchema = z.object({
  name: personName('enter your name'),
  email: contactEmail('enter your email address'),
  mobile: contactMobile('enter a phone number or leave it empty')
    .optional()
    .transform((v) => (v ? v : undefined)),
  // Left out, it is refused below unless there is nothing to pay (paymentNeeded).
  payment: z.enum(['card', 'bank'], { error: PAYMENT_MESSAGE }).optional(),
  // On an event with a deposit: the whole amount, the deposit, or the deposit and instalments (absent: the whole amount).
  payPlan: z.enum(['full', 'deposit', 'instalments'], { error: 'choose the whole amount, the deposit, or instalments' }).optional(),
  captchaToken: publicString('the bot check answer is not valid').max(4096).optional(),
});

const attendeeName = personName('enter a name');

const LABELS: Record<string, string> = {
  name: 'Your name',
  email: 'Email',
  mobile: 'Mobile',
  payment: 'Payment',
  family: 'Household',
  attendees: 'Attendees',
  captchaToken: 'Bot check',
};

function problem(field: string, message: string): FieldProblem {
  const row = /^attendees\[(\d+)\](?:\.(name|tier))?$/.exec(field);
  const part = row?.[2] ? ` ${row[2] === 'name' ? 'name' : 'ticket'}` : '';
  const label = row ? `Attendee ${Number(row[1]) + 1}${part}` : (LABELS[field] ?? field);
  return { field, message: `${label}: ${message}` };
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const list = (value: unknown): unknown[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

interface RawRegistration {
  contact: Record<string, unknown>;
  /** The "Have a code?" field. */
  code: unknown;
  family: unknown;
  /** "We would like to talk about help with the cost": the form's help_with_cost, a JSON post's helpWithCost. */
  help: unknown;
  /** Rows in submitted order; a null row is not an object at all. */
  rows: Array<{ name: unknown; tier: unknown } | null>;
  /** Empty form rows are skipped; JSON rows all count. */
  skipEmptyRows: boolean;
  rowsProblem?: string;
}

function fromForm(body: Record<string, unknown>): RawRegistration {
  const names = list(body.attendee_name);
  const tiers = list(body.attendee_tier);
  const raw: RawRegistration = {
    contact: {
      name: body.name,
      email: body.email,
      mobile: body.mobile,
      payment: body.payment === '' ? undefined : body.payment,
      payPlan: body.pay_plan === '' ? undefined : body.pay_plan,
      captchaToken: body[CAPTCHA_FORM_FIELD],
    },
    family: body.family,
    help: body.help_with_cost,
    code: body.code,
    rows: [],
    skipEmptyRows: true,
  };
  if (names.length > MAX_SUBMITTED_ROWS) raw.rowsProblem = `at most ${MAX_ATTENDEES} attendees per registration`;
  else if (names.length !== tiers.length) raw.rowsProblem = 'each attendee needs a name and a ticket';
  else raw.rows = names.map((name, index) => ({ name, tier: tiers[index] }));
  return raw;
}

function fromJson(body: Record<string, unknown>): RawRegistration {
  const raw: RawRegistration = {
    contact: {
      name: body.name,
      email: body.email,
      mobile: body.mobile ?? undefined,
      payment: body.payment ?? undefined,
      payPlan: body.payPlan ?? undefined,
      captchaToken: body.captchaToken ?? body[CAPTCHA_FORM_FIELD],
    },
    family: body.family,
    help: body.helpWithCost,
    code: body.code,
    rows: [],
    skipEmptyRows: false,
  };
  if (!Array.isArray(body.attendees)) raw.rowsProblem = 'a list of attendees, each with a name and a ticket';
  else if (body.attendees.length > MAX_SUBMITTED_ROWS) raw.rowsProblem = `at most ${MAX_ATTENDEES} attendees per registration`;
  else raw.rows = body.attendees.map((row: unknown) => (isRecord(row) ? { name: row.name, tier: row.tier } : null));
  return raw;
}

function parseFamily(value: unknown, format: 'form' | 'json'): boolean | undefined {
  if (value === undefined || value === null || value === '') return false;
  if (value === 'on') return true;
  if (format === 'json' && typeof value === 'boolean') return value;
  return undefined;
}

/** The form's own fields, sent again from the error page; the bot check's answer is single-use, so not it. */
const RESENT_FIELDS = ['name', 'email', 'mobile', 'family', 'payment', 'attendee_name', 'attendee_tier', 'code', 'help_with_cost'];

/** What a form post typed, for the error page's "Send again" (only strings: a form body has nothing else), answers included. */
export function resendableFields(body: unknown): Array<{ name: string; value: string }> {
  if (!isRecord(body)) return [];
  const answerNames = Object.keys(typedAnswerFields(body));
  return [...RESENT_FIELDS, ...answerNames, ...addonFieldNames(body)].flatMap((name) =>
    list(body[name])
      .slice(0, MAX_SUBMITTED_ROWS)
      .filter((value): value is string => typeof value === 'string')
      .map((value) => ({ name, value })),
  );
}

/** The event whose questions a post answers, and the moment and time zone its answers are read in. */
export interface AskingContext {
  event: Pick<EventRecord, 'questions' | 'pricing' | 'startsAt'>;
  now: Date;
  timeZone: string;
}

/** A post's question fields: the form's `q.*` fields, or a JSON post's `answers` and `attendees[i].answers`. */
function answerFieldsOf(record: Record<string, unknown>, format: 'form' | 'json'): { fields: AnswerFields; problems: FieldProblem[] } {
  if (format === 'form') return { fields: typedAnswerFields(record), problems: [] };
  const rows = Array.isArray(record.attendees) ? record.attendees.slice(0, MAX_SUBMITTED_ROWS) : [];
  return answerFieldsFromJson(record.answers, rows.map((row: unknown) => (isRecord(row) ? row.answers : undefined)));
}

/**
 * `maxAttendees` is the event's maxAttendeesPerRegistration (default: the form's hard limit). With `asking`, the
 * answers to the event's questions are read too (registrations/questions.ts), each attendee from its row.
 */
export function parseRegistrationBody(
  body: unknown,
  format: 'form' | 'json',
  pricing: EventPricing,
  maxAttendees: number = MAX_ATTENDEES,
  asking?: AskingContext,
): ParsedRegistration {
  const record = isRecord(body) ? body : {};
  const raw = format === 'form' ? fromForm(record) : fromJson(record);
  const values: SubmittedValues = {
    name: text(raw.contact.name),
    email: text(raw.contact.email),
    mobile: text(raw.contact.mobile),
    family: raw.family === 'on' || raw.family === true,
    payment: text(raw.contact.payment),
    payPlan: text(raw.contact.payPlan),
    attendees: raw.rows.map((row) => ({ name: text(row?.name), tier: text(row?.tier) })),
    code: text(raw.code).slice(0, MAX_CODE_LENGTH),
    help: raw.help === 'on' || raw.help === true,
    addonFields: format === 'form' ? typedAddonFields(record) : {},
  };
  const problems: FieldProblem[] = [];
  // Judged on the server under the event's lock, with one answer for every code it will not take.
  const code = values.code?.trim() ? values.code.trim() : undefined;

  const contact = contactSchema.safeParse(raw.contact);
  if (!contact.success) {
    const seen = new Set<string>();
    for (const issue of contact.error.issues) {
      const field = String(issue.path[0] ?? 'form');
      if (seen.has(field)) continue;
      seen.add(field);
      problems.push(problem(field, issue.message));
    }
  }
  // A missing payment is judged once the attendees are read; it is listed where the schema has it, before the bot check.
  const paymentAt = problems.filter((p) => p.field !== 'captchaToken').length;

  const family = parseFamily(raw.family, format);
  if (family === undefined) problems.push(problem('family', format === 'json' ? 'true or false' : 'tick the box or leave it empty'));

  // A hidden tier is answered as one the event does not have, unless a code comes with it (which must reveal it).
  const tiers = new Set((code ? pricing.tiers : visibleTiers(pricing.tiers)).map((tier) => tier.id));
  const attendees: RegistrationSubmission['attendees'] = [];
  const answering: AnsweringAttendee[] = [];
  if (raw.rowsProblem) problems.push(problem('attendees', raw.rowsProblem));
  const extras = format === 'form' ? addonFieldsOfForm(record) : addonFieldsOfJson(record);
  if (extras.problem) problems.push({ field: 'addons', message: `Extras: ${extras.problem}` });
  raw.rows.forEach((row, index) => {
    if (row === null) {
      problems.push(problem(`attendees[${index}]`, 'each attendee needs a name and a ticket'));
      return;
    }
    if (raw.skipEmptyRows && typeof row.name === 'string' && row.name.trim() === '') return;
    const name = attendeeName.safeParse(row.name);
    if (!name.success) problems.push(problem(`attendees[${index}].name`, name.error.issues[0]?.message ?? 'enter a name'));
    const tier = typeof row.tier === 'string' && tiers.has(row.tier) ? row.tier : undefined;
    if (!tier) {
      const controlled = typeof row.tier === 'string' && hasControlCharacters(row.tier);
      problems.push(problem(`attendees[${index}].tier`, controlled ? CONTROL_CHARACTERS_MESSAGE : UNKNOWN_TIER_MESSAGE));
    }
    if (name.success && tier) {
      const addons = extras.rows.get(index);
      attendees.push({ name: name.data, tier, ...(addons && addons.length > 0 ? { addons } : {}) });
      answering.push({ name: name.data, tier, row: index });
    }
  });
  // An extra is never bought without a ticket: one chosen on a row that names nobody is refused, not dropped.
  const named = new Set(answering.map((attendee) => attendee.row));
  const orphan = [...extras.rows.keys()].find((row) => !named.has(row) && !problems.some((p) => p.field.startsWith(`attendees[${row}]`)));
  if (orphan !== undefined) problems.push({ field: `attendees[${orphan}].addons`, message: `Attendee ${orphan + 1} extras: an extra needs an attendee with a name and a ticket` });
  if (!raw.rowsProblem && attendees.length === 0 && !problems.some((p) => p.field.startsWith('attendees['))) {
    problems.push(problem('attendees', 'add at least one attendee'));
  }
  const cap = Math.min(maxAttendees, MAX_ATTENDEES);
  if (attendees.length > cap) problems.push(problem('attendees', `at most ${cap} attendees per registration`));
  const day = asking ? localDay(asking.now, asking.timeZone) : undefined;
  if (raw.contact.payment === undefined && paymentNeeded(pricing, attendees, family, day, extras.registration)) problems.splice(paymentAt, 0, problem('payment', PAYMENT_MESSAGE));

  let answers: RegistrationSubmission['answers'];
  if (asking) {
    const typed = answerFieldsOf(record, format);
    const read = readAnswers(asking.event, answering, typed.fields, {
      contactName: contact.success ? contact.data.name : values.name.trim(),
      now: asking.now,
      timeZone: asking.timeZone,
    });
    problems.push(...typed.problems, ...read.problems);
    answers = read.answers;
  }

  if (problems.length > 0 || !contact.success || family === undefined) return { ok: false, problems, values };
  return {
    ok: true,
    values,
    captchaToken: contact.data.captchaToken,
    submission: {
      contact: { name: contact.data.name, email: contact.data.email, mobile: contact.data.mobile },
      attendees,
      family,
      payment: contact.data.payment,
      ...(contact.data.payPlan ? { choice: contact.data.payPlan } : {}),
      ...(answers ? { answers } : {}),
      ...(code ? { code } : {}),
      ...(values.help ? { helpRequested: true } : {}),
      ...(extras.registration.length > 0 ? { addons: extras.registration } : {}),
    },
  };
}
