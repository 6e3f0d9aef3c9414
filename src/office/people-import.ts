import { formatInTimeZone } from 'date-fns-tz';
import type { AppContext } from '../context.js';
import type { FieldCipher } from '../crypto/field-cipher.js';
import type { Db } from '../db/connect.js';
import { AppError, EXIT } from '../errors.js';
import { formatRowError, parsePeopleCsv, type PersonRow, type RowError } from './people/csv-rows.js';

export { PEOPLE_CSV_COLUMNS, type RowError } from './people/csv-rows.js';

export type PeopleImportContext = Pick<AppContext, 'db' | 'cipher' | 'clock' | 'config'>;

export interface PeopleImportSummary {
  rows: number;
  created: number;
  updated: number;
  unchanged: number;
}

/** The whole file was refused; `rowErrors` lists every bad row (empty when the file itself is unreadable). */
export class PeopleImportInvalidError extends AppError {
  constructor(
    message: string,
    readonly rowErrors: RowError[],
  ) {
    super('import_invalid', message, {
      exitCode: EXIT.failure,
      httpStatus: 400,
      suggestion: 'fix the file and import it again; nothing was imported',
    });
    this.name = 'PeopleImportInvalidError';
  }
}

interface ExistingPerson {
  id: string;
  email_hash: string;
  first_name: string;
  last_name: string;
  email_enc: string;
  mobile_enc: string | null;
  birth_date: string | null;
  wedding_date: string | null;
  spouse_id: string | null;
}

const PERSON_COLUMNS = ['id', 'email_hash', 'first_name', 'last_name', 'email_enc', 'mobile_enc', 'birth_date', 'wedding_date', 'spouse_id'] as const;

const BATCH = 500;

function chunks<T>(items: T[]): T[][] {
  const result: T[][] = [];
  for (let i = 0; i < items.length; i += BATCH) result.push(items.slice(i, i + BATCH));
  return result;
}

/**
 * Imports the people CSV (header in PEOPLE_CSV_COLUMNS). Every row is checked
 * first; one bad row refuses the whole file. Otherwise one transaction upserts
 * people keyed by the email lookup hash, then spouse links (both ways),
 * ministry roles and clearances. Import adds and updates, never deletes: an
 * empty spouse, role or clearance cell leaves existing links as they are, while
 * empty mobile or date cells clear those fields. Re-importing the same file
 * changes nothing.
 */
export async function importPeople(ctx: PeopleImportContext, csvText: string): Promise<PeopleImportSummary> {
  const today = formatInTimeZone(ctx.clock.now(), ctx.config.regional.timeZone, 'yyyy-MM-dd');
  const parsed = parsePeopleCsv(csvText, today);
  if (parsed.fileError) throw new PeopleImportInvalidError(`people import refused: ${parsed.fileError}`, []);
  const hashOf = (emailKey: string) => ctx.cipher.lookupHash('email', emailKey);

  return ctx.db.transaction(async (trx) => {
    const keys = new Set(parsed.rows.flatMap((r) => (r.spouseEmailKey ? [r.emailKey, r.spouseEmailKey] : [r.emailKey])));
    const existing = await loadPeopleByHash(trx, [...keys].map(hashOf));

    const inFile = new Set(parsed.rows.map((r) => r.emailKey));
    const spouseErrors: RowError[] = parsed.rows
      .filter((r) => r.spouseEmailKey !== null && !inFile.has(r.spouseEmailKey) && !existing.has(hashOf(r.spouseEmailKey)))
      .map((r) => ({ row: r.row, line: r.line, field: 'spouse_email', problem: `${r.spouseEmailKey} is neither in this file nor already imported` }));
    const weddingErrors = await storedSpouseWeddingErrors(trx, ctx.cipher, parsed.rows, existing, hashOf);
    const errors = [...parsed.errors, ...spouseErrors, ...weddingErrors].sort((a, b) => a.row - b.row);
    if (errors.length > 0) {
      const bad = new Set(errors.map((e) => e.row)).size;
      throw new PeopleImportInvalidError(
        `people import refused, nothing imported: ${bad} row${bad === 1 ? '' : 's'} with problems\n` +
          errors.map((e) => `  ${formatRowError(e)}`).join('\n'),
        errors,
      );
    }

    const now = ctx.clock.now();
    const { idByHash, changedRows } = await upsertPeople(trx, ctx.cipher, parsed.rows, existing, hashOf, now);
    const idOf = (emailKey: string): string => {
      const id = idByHash.get(hashOf(emailKey));
      if (!id) throw new Error(`person ${emailKey} vanished during the import`);
      return id;
    };
    const touched = new Set<string>([
      ...(await linkSpouses(trx, parsed.rows, idOf, now)),
      ...(await addMinistryRoles(trx, parsed.rows, idOf)),
      ...(await upsertClearances(trx, ctx.cipher, parsed.rows, idOf)),
    ]);

    const summary: PeopleImportSummary = { rows: parsed.rows.length, created: 0, updated: 0, unchanged: 0 };
    for (const row of parsed.rows) {
      if (!existing.has(hashOf(row.emailKey))) summary.created += 1;
      else if (changedRows.has(row) || touched.has(idOf(row.emailKey))) summary.updated += 1;
      else summary.unchanged += 1;
    }
    return summary;
  });
}

async function loadPeopleByHash(db: Db, hashes: string[]): Promise<Map<string, ExistingPerson>> {
  const found = new Map<string, ExistingPerson>();
  for (const batch of chunks(hashes)) {
    const rows = await db('people')
      .whereRaw('email_hash = ANY(?)', [batch])
      .select<ExistingPerson[]>([...PERSON_COLUMNS]);
    for (const row of rows) found.set(row.email_hash, row);
  }
  return found;
}

/**
 * A couple is greeted once, on their wedding day, so spouses must not differ (checkAcrossRows compares rows of
 * the file). Here: a row against its spouse already imported and not in the file, the one the row names or, with
 * an empty spouse cell, the one stored (the link stays). An empty date on either side is no conflict.
 */
async function storedSpouseWeddingErrors(
  db: Db,
  cipher: FieldCipher,
  rows: PersonRow[],
  existing: Map<string, ExistingPerson>,
  hashOf: (emailKey: string) => string,
): Promise<RowError[]> {
  const rowByHash = new Map(rows.map((r) => [hashOf(r.emailKey), r]));
  // Whoever the file links gets that link: a stored link of theirs is replaced or undone.
  const linkedByFile = new Set(rows.flatMap((r) => (r.spouseEmailKey ? [hashOf(r.emailKey), hashOf(r.spouseEmailKey)] : [])));
  const storedSpouseId = (row: PersonRow) =>
    row.spouseEmailKey === null && !linkedByFile.has(hashOf(row.emailKey)) ? existing.get(hashOf(row.emailKey))?.spouse_id : null;
  const storedSpouses = await loadPeopleById(db, rows.flatMap((r) => storedSpouseId(r) ?? []));

  const errors: RowError[] = [];
  for (const row of rows) {
    if (row.weddingDate === null) continue;
    const named = row.spouseEmailKey === null ? undefined : existing.get(hashOf(row.spouseEmailKey));
    const stored = storedSpouses.get(storedSpouseId(row) ?? '');
    const spouse = named ?? (stored && !linkedByFile.has(stored.email_hash) ? stored : undefined);
    if (!spouse) continue;
    const spouseRow = rowByHash.get(spouse.email_hash);
    // Named and in the file, checkAcrossRows compares them; a stored couple both in the file is reported once, as there.
    if (spouseRow && (named || spouseRow.row > row.row)) continue;
    const date = spouseRow ? spouseRow.weddingDate : spouse.wedding_date;
    if (date === null || date === row.weddingDate) continue;
    const where = spouseRow ? `in row ${spouseRow.row}` : `already imported for ${cipher.decrypt(spouse.email_enc)}`;
    errors.push({ row: row.row, line: row.line, field: 'wedding_date', problem: `differs from the spouse's (${date} ${where})` });
  }
  return errors;
}

async function loadPeopleById(db: Db, ids: string[]): Promise<Map<string, ExistingPerson>> {
  const found = new Map<string, ExistingPerson>();
  for (const batch of chunks(ids)) {
    const rows = await db('people').whereRaw('id = ANY(?::uuid[])', [batch]).select<ExistingPerson[]>([...PERSON_COLUMNS]);
    for (const row of rows) found.set(row.id, row);
  }
  return found;
}

/**
 * Writes new people and people whose own fields changed; values that did not change keep their stored ciphertext.
 * The celebrations_off_* columns are never written: the church's export still has the dates of someone whose
 * birthday and anniversary emails were turned off, and a re-import must not turn them on again.
 */
async function upsertPeople(
  db: Db,
  cipher: FieldCipher,
  rows: PersonRow[],
  existing: Map<string, ExistingPerson>,
  hashOf: (emailKey: string) => string,
  now: Date,
): Promise<{ idByHash: Map<string, string>; changedRows: Set<PersonRow> }> {
  const idByHash = new Map<string, string>([...existing].map(([hash, p]) => [hash, p.id]));
  const changedRows = new Set<PersonRow>();
  const writes: Record<string, unknown>[] = [];
  for (const row of rows) {
    const hash = hashOf(row.emailKey);
    const prev = existing.get(hash);
    const prevEmail = prev ? cipher.decrypt(prev.email_enc) : null;
    const prevMobile = prev?.mobile_enc ? cipher.decrypt(prev.mobile_enc) : null;
    const same =
      prev !== undefined &&
      prev.first_name === row.firstName &&
      prev.last_name === row.lastName &&
      prevEmail === row.email &&
      prevMobile === row.mobile &&
      prev.birth_date === row.birthDate &&
      prev.wedding_date === row.weddingDate;
    if (same) continue;
    if (prev) changedRows.add(row);
    writes.push({
      first_name: row.firstName,
      last_name: row.lastName,
      email_enc: prev && prevEmail === row.email ? prev.email_enc : cipher.encrypt(row.email),
      email_hash: hash,
      mobile_enc: row.mobile === null ? null : prev?.mobile_enc && prevMobile === row.mobile ? prev.mobile_enc : cipher.encrypt(row.mobile),
      mobile_hash: row.mobile === null ? null : cipher.lookupHash('mobile', row.mobile),
      birth_date: row.birthDate,
      wedding_date: row.weddingDate,
      created_at: now,
      updated_at: now,
    });
  }
  for (const batch of chunks(writes)) {
    const written = await db('people')
      .insert(batch)
      .onConflict('email_hash')
      .merge(['first_name', 'last_name', 'email_enc', 'mobile_enc', 'mobile_hash', 'birth_date', 'wedding_date', 'updated_at'])
      .returning<Array<{ id: string; email_hash: string }>>(['id', 'email_hash']);
    for (const { id, email_hash } of written) idByHash.set(email_hash, id);
  }
  return { idByHash, changedRows };
}

/**
 * Sets both directions of every spouse named in the file, then unlinks anyone
 * still pointing at a person who is now married to someone else.
 * Returns the ids whose link changed.
 */
async function linkSpouses(db: Db, rows: PersonRow[], idOf: (emailKey: string) => string, now: Date): Promise<string[]> {
  const spouseOf = new Map<string, string>();
  for (const row of rows) {
    if (row.spouseEmailKey === null) continue;
    const a = idOf(row.emailKey);
    const b = idOf(row.spouseEmailKey);
    spouseOf.set(a, b);
    spouseOf.set(b, a);
  }
  if (spouseOf.size === 0) return [];
  const ids = [...spouseOf.keys()];
  const spouseIds = [...spouseOf.values()];
  const linked = await db.raw<{ rows: Array<{ id: string }> }>(
    `UPDATE people p SET spouse_id = v.spouse_id, updated_at = ?
     FROM unnest(?::uuid[], ?::uuid[]) AS v(id, spouse_id)
     WHERE p.id = v.id AND p.spouse_id IS DISTINCT FROM v.spouse_id
     RETURNING p.id`,
    [now, ids, spouseIds],
  );
  const unlinked = await db.raw<{ rows: Array<{ id: string }> }>(
    `UPDATE people z SET spouse_id = NULL, updated_at = ?
     FROM people y
     WHERE z.spouse_id = y.id AND y.id = ANY(?::uuid[]) AND y.spouse_id IS DISTINCT FROM z.id
     RETURNING z.id`,
    [now, ids],
  );
  return [...linked.rows, ...unlinked.rows].map((r) => r.id);
}

/** Adds the roles named in the file; returns the ids of people who gained one. */
async function addMinistryRoles(db: Db, rows: PersonRow[], idOf: (emailKey: string) => string): Promise<string[]> {
  const wanted = rows.flatMap((row) => row.ministryRoles.map((role) => ({ person_id: idOf(row.emailKey), role })));
  const added: string[] = [];
  for (const batch of chunks(wanted)) {
    const inserted = await db('ministry_roles')
      .insert(batch)
      .onConflict(['person_id', 'role'])
      .ignore()
      .returning<Array<{ person_id: string }>>('person_id');
    added.push(...inserted.map((r) => r.person_id));
  }
  return added;
}

/**
 * Writes clearances that are new or whose number or expiry changed. A changed
 * clearance is no longer verified: someone has to check the new details. An empty
 * number or expiry cell leaves what is stored, like every other clearance cell, and
 * the kind is matched ignoring case ("wwcc" renews the stored "WWCC").
 * Returns the ids of people whose clearance was written.
 */
const clearanceKey = (personId: string, kind: string): string => `${personId}\u0000${kind.toLowerCase()}`;

async function upsertClearances(db: Db, cipher: FieldCipher, rows: PersonRow[], idOf: (emailKey: string) => string): Promise<string[]> {
  const wanted = rows.flatMap((row) => (row.clearance ? [{ personId: idOf(row.emailKey), ...row.clearance }] : []));
  if (wanted.length === 0) return [];
  const current = new Map<string, { kind: string; number_enc: string | null; expires_on: string | null }>();
  for (const batch of chunks(wanted)) {
    const found = await db('clearances')
      .whereRaw('person_id = ANY(?::uuid[])', [batch.map((w) => w.personId)])
      .select<Array<{ person_id: string; kind: string; number_enc: string | null; expires_on: string | null }>>(
        'person_id',
        'kind',
        'number_enc',
        'expires_on',
      );
    for (const c of found) current.set(clearanceKey(c.person_id, c.kind), c);
  }
  const writes = wanted.flatMap((w) => {
    const prev = current.get(clearanceKey(w.personId, w.kind));
    const prevNumber = prev?.number_enc ? cipher.decrypt(prev.number_enc) : null;
    const number = w.number ?? prevNumber;
    const expiresOn = w.expiresOn ?? prev?.expires_on ?? null;
    if (prev && prevNumber === number && prev.expires_on === expiresOn) return [];
    return [
      {
        person_id: w.personId,
        kind: prev?.kind ?? w.kind,
        number_enc: number === null ? null : cipher.encrypt(number),
        expires_on: expiresOn,
        verified: false,
      },
    ];
  });
  const written: string[] = [];
  for (const batch of chunks(writes)) {
    const result = await db('clearances')
      .insert(batch)
      .onConflict(['person_id', 'kind'])
      .merge(['number_enc', 'expires_on', 'verified'])
      .returning<Array<{ person_id: string }>>('person_id');
    written.push(...result.map((r) => r.person_id));
  }
  return written;
}
