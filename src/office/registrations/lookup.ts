import type { Knex } from 'knex';
import type { Db } from '../../db/connect.js';
import { AppError, UsageError } from '../../errors.js';
import { paymentReference } from '../../registrations/reference.js';
import type { PaymentMethod, RegistrationStatus } from '../../registrations/registrations.js';

/** A registration row as the office commands read it. */
export interface RegistrationRow {
  id: string;
  event_id: string;
  status: RegistrationStatus;
  contact_name: string;
  contact_email_enc: string;
  contact_mobile_enc: string | null;
  attendees: Array<{ name: string; tier: string }>;
  attendee_count: number;
  family: boolean;
  payment_method: PaymentMethod;
  line_items: Array<{ label: string; amount: number; kind?: string }>;
  total_minor: number;
  surcharge_minor: number;
  payment_intent_id: string | null;
  paid_at: Date | null;
  cancelled_at: Date | null;
  cancel_reason: string | null;
  hold_reminder_sent_at: Date | null;
  /** The church-local day whose prices it pays (yyyy-MM-dd); null before price schedules. */
  priced_on: string | null;
  /** The code it used (discount_codes.id), and what the code took off. */
  code_id: string | null;
  code_discount_minor: number;
  /** Help with the cost asked for on the form, and when the office decided it (registrations/help-requests.ts). */
  help_requested_at?: Date | null;
  help_decided_at?: Date | null;
  help_decided_by?: string | null;
  created_at: Date;
  updated_at: Date;
}

const MAX_LISTED = 20;

/** Hex characters of the reference printed on the bank details and lists: the fewest that name a registration. */
const REFERENCE_LENGTH = 8;

const FIND_IT = 'find it with `eventops registrations list --search TEXT`';

export class RegistrationNotFoundError extends AppError {
  constructor(given: string) {
    const email = given.includes('@');
    super('registration_not_found', email ? `"${given}" is an email address, not a registration's id or reference` : `no registration has the id or reference "${given}"`, {
      exitCode: 1,
      suggestion: email
        ? `find its reference with \`eventops registrations list --search ${given.trim()}\`, then run the command with the reference`
        : FIND_IT,
    });
    this.name = 'RegistrationNotFoundError';
  }
}

/** A name shorter than a reference: "2" once cancelled whichever registration's id happened to start with 2. */
export class RegistrationNameTooShortError extends UsageError {
  constructor(given: string) {
    super(
      `"${given.trim()}" is too short to name a registration: give its ${REFERENCE_LENGTH}-character reference as printed (e.g. 3F2A9C1B)`,
      `${FIND_IT}, then run the command with its reference`,
    );
    this.name = 'RegistrationNameTooShortError';
  }
}

/**
 * The id of the one registration named by `given`: its reference (the 8-character code on the
 * bank details), its id, or a prefix of the id at least as long as the reference; case, spaces
 * and dashes ignored. Anything shorter is refused before the database is asked. Two
 * registrations sharing a reference are listed, to be named by their id.
 */
export async function resolveRegistrationId(db: Db | Knex.Transaction, given: string): Promise<string> {
  // As read off a bank statement or a phone call: "3f2a 9c1b", "3F2A-9C1B".
  const key = given.replace(/[\s-]/g, '').toLowerCase();
  if (!/^[0-9a-f]{1,32}$/.test(key)) throw new RegistrationNotFoundError(given);
  if (key.length < REFERENCE_LENGTH) throw new RegistrationNameTooShortError(given);
  const rows = await db('registrations as r')
    .join('events as e', 'e.id', 'r.event_id')
    .whereRaw(`replace(r.id::text, '-', '') LIKE ?`, [`${key}%`])
    .orderBy('r.created_at')
    .limit(MAX_LISTED + 1)
    .select<Array<{ id: string; contact_name: string; status: string; slug: string }>>('r.id', 'r.contact_name', 'r.status', 'e.slug');
  if (rows.length === 0) throw new RegistrationNotFoundError(given);
  if (rows.length === 1) return (rows[0] as { id: string }).id;
  const listed = rows
    .slice(0, MAX_LISTED)
    .map((row) => `  ${paymentReference(row.id)}  ${row.id}  ${row.contact_name}  ${row.status}  ${row.slug}`);
  throw new AppError(
    'registration_ambiguous',
    `"${given}" matches ${rows.length > MAX_LISTED ? `more than ${MAX_LISTED}` : rows.length} registrations:\n${listed.join('\n')}`,
    { exitCode: 1, suggestion: 'give the full id of the one meant, as listed' },
  );
}

/** The registration row, locked (FOR UPDATE) for the rest of the transaction: what serialises the office commands, pay-now and the webhook. */
export async function lockRegistration(trx: Knex.Transaction, id: string): Promise<RegistrationRow> {
  const row = await trx('registrations').where({ id }).forUpdate().first<RegistrationRow | undefined>();
  if (!row) throw new RegistrationNotFoundError(id);
  return row;
}
