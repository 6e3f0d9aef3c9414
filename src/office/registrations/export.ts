import crypto from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'csv-stringify/sync';
import type { AppContext } from '../../context.js';
import { AppError, NotFoundError } from '../../errors.js';
import { paymentReference } from '../../registrations/reference.js';
import type { RegistrationStatus } from '../../registrations/registrations.js';
import { currencyDigits } from './money.js';
import { CREDITED_MINOR_SQL, PAID_MINOR_SQL } from '../../registrations/ledger.js';
import type { AnswerValue, Question, RegistrationAnswers } from '../../registrations/answers.js';
import { answerCell, answerCells, answerColumnsFor, asksDateOfBirth, readStoredAnswers, recordSensitiveExport, type AnswerColumn } from './export-answers.js';
import { CHECKIN_EXPORT_COLUMNS, CHECKIN_FLAG_COLUMN, checkinExportFields, type CheckinExportFields } from '../../registrations/checkin/export-columns.js';
import { addonExportCells } from './export-addons.js';
import type { EventAddon } from '../../registrations/event-pricing.js';

/**
 * One row per attendee: for name tags, the kitchen and the roll. The money is the registration's, so it
 * is on the registration's first attendee row only (null, an empty CSV cell, on its others): summing a
 * column counts each registration once. `reference` is on every row, to group a registration's rows.
 * Amounts are in APP_CURRENCY as plain decimals ("240.00").
 */
export interface AttendeeExportRow extends CheckinExportFields {
  attendeeName: string;
  ticket: string;
  reference: string;
  contactName: string;
  email: string;
  mobile: string;
  status: RegistrationStatus;
  /** What the registration has paid, as `list` and `show` count it (PAID_MINOR_SQL). */
  amountPaid: string | null;
  /** The registration's price. */
  total: string | null;
  /** What is still owing: total − paid − help credited while PENDING; 0 once PAID, and 0 for a cancelled one (nobody owes for it). */
  balanceOwing: string | null;
  /** Answers by column header `q.<question id>` (null: not answered); sensitive ones only with includeSensitive. */
  answers: Record<string, AnswerValue | null>;
  /** The code the registration used (as written), on its first attendee's row; '' without one. Absent when no exported registration used a code. */
  code?: string | null;
  /** What the code took off, like the money (first row only). */
  codeDiscount?: string | null;
  /** The add-ons chosen, by column header `addon.<id>` (export-addons.ts); absent when the event has none. */
  addons?: Record<string, string>;
}

/** Said after the money columns, and only when some registration of the export used a code. */
export const CODE_EXPORT_COLUMNS: Array<{ key: 'code' | 'codeDiscount'; header: string }> = [
  { key: 'code', header: 'code' },
  { key: 'codeDiscount', header: 'code_discount' },
];

export const EXPORT_COLUMNS: Array<{ key: Exclude<keyof AttendeeExportRow, 'answers' | 'checkinFlag'>; header: string }> = [
  { key: 'attendeeName', header: 'attendee_name' },
  { key: 'ticket', header: 'ticket' },
  { key: 'reference', header: 'registration_reference' },
  { key: 'contactName', header: 'contact_name' },
  { key: 'email', header: 'email' },
  { key: 'mobile', header: 'mobile' },
  { key: 'status', header: 'status' },
  { key: 'amountPaid', header: 'amount_paid' },
  // Added after amount_paid, so the columns a spreadsheet already refers to keep their places.
  { key: 'total', header: 'total' },
  { key: 'balanceOwing', header: 'balance_owing' },
  ...CHECKIN_EXPORT_COLUMNS,
];

interface ExportSourceRow {
  id: string;
  status: RegistrationStatus;
  contact_name: string;
  contact_email_enc: string;
  contact_mobile_enc: string | null;
  attendees: Array<{ name: string; tier: string }>;
  total_minor: number;
  paid_minor: string | number;
  credited_minor: string | number;
  answers: RegistrationAnswers | null;
  sensitive_answers_enc: string | null;
  code: string | null;
  code_discount_minor: number;
}

/** Integer minor units as a plain decimal with the currency's digits (24000 → "240.00"; JPY 240 → "240"), without floating point. */
export function plainAmount(minor: number, digits: number): string {
  const sign = minor < 0 ? '-' : '';
  const units = Math.abs(minor);
  if (digits === 0) return `${sign}${units}`;
  const scale = 10 ** digits;
  return `${sign}${Math.floor(units / scale)}.${String(units % scale).padStart(digits, '0')}`;
}

/** What a registration owes, minor units: the total less what it paid and was credited while PENDING, nothing once PAID or CANCELLED. */
export function balanceOwingMinor(row: { status: RegistrationStatus; totalMinor: number; paidMinor: number; creditedMinor?: number }): number {
  return row.status === 'PENDING' ? row.totalMinor - row.paidMinor - (row.creditedMinor ?? 0) : 0;
}

export interface ExportOptions {
  includeCancelled?: boolean;
  /** Adds the sensitive questions' columns (date of birth included): only through exportWithSensitiveAnswers, which records it. */
  includeSensitive?: boolean;
}

/**
 * The attendees of the event's registrations that are coming (PENDING and PAID, as the places
 * left count them), in registration order; with `includeCancelled`, cancelled ones too, marked so.
 */
export async function exportAttendees(
  ctx: Pick<AppContext, 'db' | 'cipher' | 'config'>,
  eventSlug: string,
  options: { includeCancelled?: boolean } = {},
): Promise<AttendeeExportRow[]> {
  return withoutIds((await exportEvent(ctx, eventSlug, options)).rows);
}

/** The rows as they leave: the registration's id is the export's own bookkeeping (its reference is on every row). */
export const withoutIds = (rows: Array<AttendeeExportRow & { registrationId: string }>): AttendeeExportRow[] => rows.map(({ registrationId: _id, ...row }) => row);

/**
 * With the sensitive answers: read in a transaction that writes, before anything leaves, one history entry
 * per exported registration (who, when, why: recordSensitiveExport).
 */
export async function exportWithSensitiveAnswers(
  ctx: Pick<AppContext, 'db' | 'cipher' | 'config' | 'clock'>,
  eventSlug: string,
  options: { includeCancelled?: boolean; reason: string; actor: string; to: string },
): Promise<{ rows: AttendeeExportRow[]; answerColumns: AnswerColumn[]; registrations: number }> {
  return ctx.db.transaction(async (trx) => {
    const exported = await exportEvent({ ...ctx, db: trx }, eventSlug, { includeCancelled: options.includeCancelled, includeSensitive: true });
    const rowsByRegistration = new Map<string, number>();
    for (const row of exported.rows) rowsByRegistration.set(row.registrationId, (rowsByRegistration.get(row.registrationId) ?? 0) + 1);
    await recordSensitiveExport(trx, { rowsByRegistration, columns: exported.answerColumns, reason: options.reason, actor: options.actor, to: options.to, now: ctx.clock.now() });
    return { rows: withoutIds(exported.rows), answerColumns: exported.answerColumns, registrations: rowsByRegistration.size };
  });
}

/** The rows and their answer columns (one per question asked, non-sensitive ones unless includeSensitive). */
export async function exportEvent(
  ctx: Pick<AppContext, 'db' | 'cipher' | 'config'>,
  eventSlug: string,
  options: ExportOptions = {},
): Promise<{ rows: Array<AttendeeExportRow & { registrationId: string }>; answerColumns: AnswerColumn[] }> {
  const event = await ctx.db('events')
    .where({ slug: eventSlug })
    .first<{ id: string; pricing: { tiers: Array<{ id: string; label: string; minAge?: number; maxAge?: number }>; addons?: EventAddon[] }; questions: Question[] | null } | undefined>('id', 'pricing', 'questions');
  if (!event) throw new NotFoundError(`event "${eventSlug}"`, 'run `eventops events list --all` to see the slugs');
  const labels = new Map(event.pricing.tiers.map((tier) => [tier.id, tier.label]));
  const digits = currencyDigits(ctx.config.regional.currency);
  const rows = await ctx.db('registrations as r')
    .where('r.event_id', event.id)
    .modify((q) => {
      // Name tags, the kitchen and the roll are for who is coming: a cancelled row (an unpaid hold released, too) would be printed.
      if (!options.includeCancelled) q.whereNot('r.status', 'CANCELLED');
    })
    .leftJoin('discount_codes as d', 'd.id', 'r.code_id')
    .orderBy([{ column: 'r.created_at' }, { column: 'r.id' }])
    .select<ExportSourceRow[]>(
      'd.code',
      'r.code_discount_minor',
      'r.id',
      'r.status',
      'r.contact_name',
      'r.contact_email_enc',
      'r.contact_mobile_enc',
      'r.attendees',
      'r.total_minor',
      'r.answers',
      'r.sensitive_answers_enc',
      ctx.db.raw(`${PAID_MINOR_SQL} AS paid_minor`),
      ctx.db.raw(`${CREDITED_MINOR_SQL} AS credited_minor`),
    );
  const includeSensitive = Boolean(options.includeSensitive);
  const stored = rows.map((row) => readStoredAnswers(ctx.cipher, row, includeSensitive));
  const answerColumns = answerColumnsFor(event.questions ?? [], { includeSensitive, dateOfBirthAsked: asksDateOfBirth(event.pricing.tiers, stored) });
  const checkin = await checkinExportFields(ctx.db, event.id, ctx.config.regional.timeZone);
  const withCodes = rows.some((row) => row.code !== null);
  const addonColumns = await addonExportCells(ctx.db, event.id, event.pricing.addons ?? []);
  const exported = rows.flatMap((row, rowIndex) => {
    const email = ctx.cipher.decrypt(row.contact_email_enc);
    const mobile = row.contact_mobile_enc ? ctx.cipher.decrypt(row.contact_mobile_enc) : '';
    const totalMinor = Number(row.total_minor);
    const paidMinor = Number(row.paid_minor);
    const money = {
      amountPaid: plainAmount(paidMinor, digits),
      total: plainAmount(totalMinor, digits),
      balanceOwing: plainAmount(balanceOwingMinor({ status: row.status, totalMinor, paidMinor, creditedMinor: Number(row.credited_minor) }), digits),
    };
    // Once per registration: on every attendee's row, a family of four who paid 270 summed to 1,080.
    const noMoney = { amountPaid: null, total: null, balanceOwing: null };
    const code = withCodes ? { code: row.code ?? '', codeDiscount: plainAmount(Number(row.code_discount_minor ?? 0), digits) } : {};
    const noCode = withCodes ? { code: null, codeDiscount: null } : {};
    return row.attendees.map((attendee, index) => ({
      attendeeName: attendee.name,
      ticket: labels.get(attendee.tier) ?? attendee.tier,
      reference: paymentReference(row.id),
      contactName: row.contact_name,
      email,
      mobile,
      status: row.status,
      ...(index === 0 ? money : noMoney),
      ...(index === 0 ? code : noCode),
      answers: answerCells(answerColumns, stored[rowIndex] as (typeof stored)[number], index),
      registrationId: row.id,
      ...checkin(row.id, index),
      ...(addonColumns ? { addons: addonColumns.cells(row.id, index) } : {}),
    }));
  });
  return { rows: exported, answerColumns };
}

/**
 * CSV with a header row; a registration's money columns are empty on all but its first attendee's row. A cell starting with =, +, -, @ (or a tab or carriage
 * return) is prefixed with an apostrophe, so a spreadsheet shows it as text
 * instead of running it as a formula. It starts with a UTF-8 byte-order mark:
 * without one, Excel opens the file in the legacy code page ("José" as "JosÃ©").
 */
export function attendeesCsv(rows: AttendeeExportRow[], answerHeaders: readonly string[] = Object.keys(rows[0]?.answers ?? {}), minute: (date: Date) => string = isoMinute): string {
  // The code columns only for an event where some registration used a code: every other export keeps its columns.
  const codeColumns = rows.some((row) => row.code !== undefined) ? CODE_EXPORT_COLUMNS : [];
  // One column per add-on, only for an event with add-ons.
  const addonHeaders = Object.keys(rows[0]?.addons ?? {});
  return stringify(
    rows.map((row) => [
      ...EXPORT_COLUMNS.map((column) => row[column.key] as string | null),
      ...codeColumns.map((column) => row[column.key] ?? null),
      ...answerHeaders.map((header) => answerCell(row.answers[header] ?? null, minute)),
      ...addonHeaders.map((header) => row.addons?.[header] ?? ''),
      row[CHECKIN_FLAG_COLUMN.key],
    ]),
    {
      header: true,
      columns: [...EXPORT_COLUMNS.map((column) => column.header), ...codeColumns.map((column) => column.header), ...answerHeaders, ...addonHeaders, CHECKIN_FLAG_COLUMN.header],
      escape_formulas: true,
      bom: true,
    },
  );
}

/** A consent's time without a time zone to hand: UTC, to the minute. */
const isoMinute = (date: Date) => `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

const WRITE_NEW_ONLY = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW;

/** The system's error for a file operation as the office reads it; anything else is passed on as it is. */
function fileError(error: unknown, file: string, directory: string): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  const retry = 'give --out a file in a directory you can write to';
  if (code === 'ENOENT') return new AppError('export_no_directory', `no such directory: ${directory}`, { suggestion: `create it first (mkdir -p ${directory}) or ${retry}`, cause: error });
  if (code === 'ENOTDIR') return new AppError('export_no_directory', `no such directory: ${directory} (part of it is a file)`, { suggestion: retry, cause: error });
  if (code === 'EISDIR' || code === 'ENOTEMPTY') return new AppError('export_target_is_directory', `${file} is a directory`, { suggestion: 'give --out a file name in it', cause: error });
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return new AppError('export_not_writable', `cannot write ${file}: ${code === 'EROFS' ? 'read-only file system' : 'permission denied'}`, { suggestion: retry, cause: error });
  return error;
}

/**
 * Writes a file only its owner can read (0600), owned by whoever runs the export: a new file is
 * created next to the target (O_CREAT|O_EXCL|O_NOFOLLOW, so nothing already there is opened or
 * followed), written, and renamed over the target. An existing file, whoever owns it, is replaced
 * rather than written into, so its old owner cannot read the contact details; a symlink at the
 * target is replaced too, never followed.
 */
export async function writePrivateFile(file: string, contents: string): Promise<void> {
  const target = path.resolve(file);
  const directory = path.dirname(target);
  const temporary = path.join(directory, `.${path.basename(target)}.${crypto.randomBytes(6).toString('hex')}.tmp`);
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(temporary, WRITE_NEW_ONLY, 0o600);
  } catch (error) {
    throw fileError(error, file, directory);
  }
  try {
    // The umask may have narrowed the mode; the office expects exactly 0600.
    await handle.chmod(0o600);
    await handle.writeFile(contents, 'utf8');
    await handle.sync();
    await handle.close();
    await fs.rename(temporary, target);
  } catch (error) {
    await handle.close().catch(() => undefined);
    await fs.rm(temporary, { force: true });
    throw fileError(error, file, directory);
  }
}
