import { parse } from 'csv-parse/sync';
import { z } from 'zod';
import { mailAddress } from '../../contact-rules.js';
import { normaliseEmail, normaliseMobile } from '../../crypto/field-cipher.js';
import { PEOPLE_CSV_COLUMNS, type PeopleCsvColumn } from './columns.js';

export { PEOPLE_CSV_COLUMNS, type PeopleCsvColumn } from './columns.js';

/** One problem in one data row: row N is the Nth data row, line L the line of the file. */
export interface RowError {
  row: number;
  line: number;
  field: PeopleCsvColumn | 'row';
  problem: string;
}

export function formatRowError(error: RowError): string {
  return `row ${error.row} (line ${error.line}): ${error.field}: ${error.problem}`;
}

export interface PersonRow {
  row: number;
  line: number;
  firstName: string;
  lastName: string;
  email: string;
  /** Normalised email, the key for matching people across imports. */
  emailKey: string;
  mobile: string | null;
  birthDate: string | null;
  weddingDate: string | null;
  spouseEmailKey: string | null;
  ministryRoles: string[];
  clearance: { kind: string; number: string | null; expiresOn: string | null } | null;
}

function isPhoneNumber(value: string): boolean {
  const digits = normaliseMobile(value).replace('+', '').length;
  return /^\+?[\d\s().-]+$/.test(value) && digits >= 8 && digits <= 15;
}

const optionalText = z.string().transform((v) => (v === '' ? null : v));
const optionalDate = z.union([z.literal('').transform(() => null), z.iso.date({ error: 'expected a real date as YYYY-MM-DD' })]);

/** `today` (YYYY-MM-DD in the church's zone) refuses birth dates in the future. */
function rowSchema(today: string) {
  return z
    .object({
      first_name: z.string().min(1, { error: 'required' }),
      last_name: z.string().min(1, { error: 'required' }),
      // Re-import matches people by the email lookup hash, so a person without an email could not be matched again.
      email: z
        .string()
        .min(1, { error: 'required (re-import matches people by email)' })
        .pipe(mailAddress('not a valid email address')),
      mobile: optionalText.refine((v) => v === null || isPhoneNumber(v), { error: 'expected a phone number of 8 to 15 digits' }),
      // Only a real date can be in the future: "25/11/1990" gets the format message alone.
      birth_date: optionalDate.refine((v) => v === null || v <= today, {
        error: `is in the future (today is ${today})`,
        when: (payload) => payload.issues.length === 0,
      }),
      wedding_date: optionalDate,
      spouse_email: z.union([z.literal('').transform(() => null), mailAddress('not a valid email address')]),
      ministry_role: z.string(),
      clearance_kind: optionalText,
      clearance_number: optionalText,
      clearance_expires: optionalDate,
    })
    .superRefine((row, ctx) => {
      if (row.spouse_email !== null && normaliseEmail(row.spouse_email) === normaliseEmail(row.email)) {
        ctx.addIssue({ code: 'custom', path: ['spouse_email'], message: 'is the person’s own email' });
      }
      if (row.wedding_date !== null && row.birth_date !== null && row.wedding_date < row.birth_date) {
        ctx.addIssue({ code: 'custom', path: ['wedding_date'], message: `is before the birth date (${row.birth_date})` });
      }
      if (row.clearance_kind === null && (row.clearance_number !== null || row.clearance_expires !== null)) {
        ctx.addIssue({ code: 'custom', path: ['clearance_kind'], message: 'required when a clearance number or expiry is given' });
      }
    });
}

export interface ParsedPeopleCsv {
  rows: PersonRow[];
  errors: RowError[];
  /** A problem with the file as a whole (header, quoting); no rows are returned with it. */
  fileError?: string;
}

interface CsvRecord {
  record: string[];
  info: { lines: number };
}

function readRecords(csvText: string): CsvRecord[] | string {
  try {
    // csv-parse's sync types do not model `info: true`, which wraps each record as { record, info }.
    return parse(csvText, {
      bom: true,
      trim: true,
      skip_empty_lines: true,
      // A blank spreadsheet row is exported as ",,,,,,,,,,": no person, not a row with every field missing.
      skip_records_with_empty_values: true,
      relax_column_count: true,
      info: true,
    }) as unknown as CsvRecord[];
  } catch (error) {
    return `the file is not valid CSV: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** Spreadsheets pad rows with empty cells (a trailing comma, a column once used): empty cells past `keep` are not data. */
function withoutTrailingEmpty(record: string[], keep: number): string[] {
  let end = record.length;
  while (end > keep && record[end - 1] === '') end -= 1;
  return record.slice(0, end);
}

function checkHeader(header: string[]): string | undefined {
  const names = header.map((h) => h.toLowerCase());
  const expected = PEOPLE_CSV_COLUMNS.join(',');
  if (names.join(',') === expected) return undefined;
  const missing = PEOPLE_CSV_COLUMNS.filter((c) => !names.includes(c));
  const unknown = names.filter((n) => !(PEOPLE_CSV_COLUMNS as readonly string[]).includes(n)).map((n) => n || '(a column without a name)');
  const parts = [
    missing.length ? `missing ${missing.join(', ')}` : '',
    unknown.length ? `unknown ${unknown.join(', ')}` : '',
    !missing.length && !unknown.length ? 'columns out of order or repeated' : '',
  ].filter(Boolean);
  return `the header row must be exactly "${expected}" (${parts.join('; ')})`;
}

/**
 * Parses and checks every row, collecting every problem, so an administrator
 * fixes the whole file in one pass. Checks that need the database (a spouse
 * outside the file) happen in the importer.
 */
export function parsePeopleCsv(csvText: string, today: string): ParsedPeopleCsv {
  const records = readRecords(csvText);
  if (typeof records === 'string') return { rows: [], errors: [], fileError: records };
  const [header, ...data] = records;
  if (!header) return { rows: [], errors: [], fileError: `the file is empty; expected the header row "${PEOPLE_CSV_COLUMNS.join(',')}"` };
  const headerProblem = checkHeader(withoutTrailingEmpty(header.record, 0));
  if (headerProblem) return { rows: [], errors: [], fileError: headerProblem };

  const schema = rowSchema(today);
  const rows: PersonRow[] = [];
  const errors: RowError[] = [];
  data.forEach(({ record: cells, info }, index) => {
    const record = withoutTrailingEmpty(cells, PEOPLE_CSV_COLUMNS.length);
    const row = index + 1;
    const line = info.lines;
    if (record.length !== PEOPLE_CSV_COLUMNS.length) {
      errors.push({ row, line, field: 'row', problem: `expected ${PEOPLE_CSV_COLUMNS.length} columns, found ${record.length}` });
      return;
    }
    const fields = Object.fromEntries(PEOPLE_CSV_COLUMNS.map((column, i) => [column, record[i] ?? '']));
    const parsed = schema.safeParse(fields);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        errors.push({ row, line, field: (issue.path[0] as PeopleCsvColumn | undefined) ?? 'row', problem: issue.message });
      }
      return;
    }
    const v = parsed.data;
    rows.push({
      row,
      line,
      firstName: v.first_name,
      lastName: v.last_name,
      email: v.email,
      emailKey: normaliseEmail(v.email),
      mobile: v.mobile,
      birthDate: v.birth_date,
      weddingDate: v.wedding_date,
      spouseEmailKey: v.spouse_email === null ? null : normaliseEmail(v.spouse_email),
      ministryRoles: [...new Set(v.ministry_role.split(';').map((r) => r.trim()).filter(Boolean))],
      clearance: v.clearance_kind === null ? null : { kind: v.clearance_kind, number: v.clearance_number, expiresOn: v.clearance_expires },
    });
  });
  errors.push(...checkAcrossRows(rows));
  errors.sort((a, b) => a.row - b.row);
  return { rows, errors };
}

/** The same person twice, spouse links that contradict each other, or spouses married on different days. */
function checkAcrossRows(rows: PersonRow[]): RowError[] {
  const errors: RowError[] = [];
  const firstRowByEmail = new Map<string, PersonRow>();
  for (const row of rows) {
    const earlier = firstRowByEmail.get(row.emailKey);
    if (earlier) errors.push({ row: row.row, line: row.line, field: 'email', problem: `same person as row ${earlier.row} (emails match ignoring case)` });
    else firstRowByEmail.set(row.emailKey, row);
  }
  const partner = new Map<string, { email: string; row: number }>();
  for (const row of rows) {
    const spouse = row.spouseEmailKey;
    if (spouse === null) continue;
    const own = partner.get(row.emailKey);
    const theirs = partner.get(spouse);
    if (own && own.email !== spouse) {
      errors.push({ row: row.row, line: row.line, field: 'spouse_email', problem: `row ${own.row} links this person to ${own.email}` });
    } else if (theirs && theirs.email !== row.emailKey) {
      errors.push({ row: row.row, line: row.line, field: 'spouse_email', problem: `${spouse} is already linked to ${theirs.email} in row ${theirs.row}` });
    } else {
      partner.set(row.emailKey, { email: spouse, row: row.row });
      partner.set(spouse, { email: row.emailKey, row: row.row });
    }
  }
  // A couple is greeted once, on their wedding day: two days would mean two emails, each to both of them.
  for (const row of rows) {
    const spouse = partner.get(row.emailKey);
    const spouseRow = spouse && firstRowByEmail.get(spouse.email);
    if (!spouseRow || spouseRow.row > row.row || row.weddingDate === null || spouseRow.weddingDate === null) continue;
    if (row.weddingDate !== spouseRow.weddingDate) {
      errors.push({ row: row.row, line: row.line, field: 'wedding_date', problem: `differs from the spouse's (${spouseRow.weddingDate} in row ${spouseRow.row})` });
    }
  }
  return errors;
}
