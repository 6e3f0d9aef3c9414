import type { Knex } from 'knex';
import { AppError, EXIT } from '../errors.js';
import { FieldDecryptError, UnknownKeyVersionError, type FieldCipher } from './field-cipher.js';

/**
 * Where a handful of stored values are read to tell whether this configuration's keys are
 * the ones the database was written with: the newest row of each table that has a value.
 * Each email column has its lookup hash beside it, which derives from key v1 whatever key
 * encrypted the value, so a different v1 shows even when the newest values are under v2.
 */
const SAMPLED: ReadonlyArray<{ table: string; value: string; hash: string }> = [
  { table: 'users', value: 'email_enc', hash: 'email_hash' },
  { table: 'people', value: 'email_enc', hash: 'email_hash' },
  { table: 'registrations', value: 'contact_email_enc', hash: 'contact_email_hash' },
];

export interface KeyProblem {
  /** missing: no key for the version; mismatch: the key does not decrypt; lookup_hash: key v1 made other hashes. */
  kind: 'missing' | 'mismatch' | 'lookup_hash';
  version: string;
  table: string;
  column: string;
}

export interface KeyCheck {
  /** Stored values read (0 for an empty or not yet migrated database, which passes). */
  checked: number;
  problems: KeyProblem[];
}

const UNDEFINED_TABLE = '42P01';

/** Reads the newest encrypted email of users, people and registrations and checks that this keyring opens it. Reads only. */
export async function checkStoredKeys(db: Knex, cipher: FieldCipher): Promise<KeyCheck> {
  const result: KeyCheck = { checked: 0, problems: [] };
  const check = async (excluding: string[]) => {
    for (const sample of SAMPLED) {
      const row = await newestValue(db, sample, excluding);
      if (!row) continue;
      result.checked += 1;
      const problem = problemWith(cipher, sample, row);
      // One line per key: three tables under the same missing v2 say the same thing.
      if (problem && !result.problems.some((p) => p.kind === problem.kind && p.version === problem.version)) result.problems.push(problem);
    }
  };
  await check([]);
  // A value under a version this keyring lacks says nothing about the keys it has (a fresh .env on a database rotated to
  // v2 would show only "v2 missing"): the newest values under the other versions are checked too.
  const missing = [...new Set(result.problems.filter((p) => p.kind === 'missing').map((p) => p.version))];
  if (missing.length > 0) await check(missing);
  return result;
}

async function newestValue(db: Knex, sample: (typeof SAMPLED)[number], excludingVersions: string[]): Promise<{ value: string; hash: string | null } | undefined> {
  try {
    const row = await db(sample.table)
      .whereNotNull(sample.value)
      .where((q) => {
        for (const version of excludingVersions) q.whereNot(sample.value, 'like', `${version}:%`);
      })
      .orderBy('created_at', 'desc')
      .first<{ value: string; hash: string | null } | undefined>({ value: sample.value, hash: sample.hash });
    return row ?? undefined;
  } catch (error) {
    if ((error as { code?: unknown }).code === UNDEFINED_TABLE) return undefined; // not migrated yet: nothing stored
    throw error;
  }
}

function problemWith(cipher: FieldCipher, sample: (typeof SAMPLED)[number], row: { value: string; hash: string | null }): KeyProblem | undefined {
  let version: string;
  let plaintext: string;
  try {
    version = cipher.versionOf(row.value);
  } catch {
    return undefined; // not an encrypted value at all: damaged data, which no key would open, is not this check's question
  }
  try {
    plaintext = cipher.decrypt(row.value);
  } catch (error) {
    if (error instanceof UnknownKeyVersionError) return { kind: 'missing', version, table: sample.table, column: sample.value };
    if (error instanceof FieldDecryptError) return { kind: 'mismatch', version, table: sample.table, column: sample.value };
    throw error;
  }
  if (row.hash !== null && cipher.lookupHash('email', plaintext) !== row.hash) {
    return { kind: 'lookup_hash', version: 'v1', table: sample.table, column: sample.hash };
  }
  return undefined;
}

/** The variable that holds a key version: v1 is ENCRYPTION_KEY (or ENCRYPTION_KEY_V1, which must equal it). */
function keyVariable(version: string): string {
  return version === 'v1' ? 'ENCRYPTION_KEY' : `ENCRYPTION_KEY_${version.toUpperCase()}`;
}

export function describeKeyProblem(problem: KeyProblem): string {
  const where = `${problem.table}.${problem.column}`;
  switch (problem.kind) {
    case 'missing':
      return `${keyVariable(problem.version)} is not set, but ${where} holds values written with key ${problem.version}`;
    case 'mismatch':
      return `${keyVariable(problem.version)} is not the key ${problem.version} that wrote ${where}: it does not decrypt it`;
    case 'lookup_hash':
      return `${keyVariable('v1')} (key v1) is not the key the lookup hashes in ${where} were made with: a search by email would find nobody and people import would add everyone again`;
  }
}

export class EncryptionKeysMismatchError extends AppError {
  constructor(readonly problems: KeyProblem[]) {
    super(
      'encryption_keys_mismatch',
      `this configuration's encryption keys do not open what the database holds:\n` +
        problems.map((problem) => `  - ${describeKeyProblem(problem)}`).join('\n'),
      {
        exitCode: EXIT.config,
        suggestion:
          'restore the .env that goes with this database (its ENCRYPTION_KEY and every ENCRYPTION_KEY_Vn, kept with the backups); ' +
          'never make new keys for a database that holds data: what it holds cannot be read without the old ones',
      },
    );
    this.name = 'EncryptionKeysMismatchError';
  }
}

/**
 * For `serve`'s start. A key that does not open what it wrote (mismatch) or another key v1 (lookup_hash) is the wrong
 * .env: refused, exit 78. A key version this keyring lacks while the keys it has are right is the rotation order the
 * key rotation (docs/operations.md) allows (another server already writes under the new key): logged, and the server runs, leaving those values
 * to a server that has the key, as mail, webhooks and alerts already do; refusing would keep it down after a restart.
 */
export async function assertKeysFitForServing(db: Knex, cipher: FieldCipher, logger: { error(obj: object, msg: string): void }): Promise<KeyCheck> {
  const check = await checkStoredKeys(db, cipher);
  const wrongKeys = check.problems.filter((problem) => problem.kind !== 'missing');
  if (wrongKeys.length > 0) throw new EncryptionKeysMismatchError(wrongKeys);
  for (const problem of check.problems) {
    logger.error({ keyVersion: problem.version }, `${describeKeyProblem(problem)}; this server cannot read those values until it has that key too (see "Encryption and key rotation" in docs/operations.md)`);
  }
  return check;
}

/** checkStoredKeys, throwing EncryptionKeysMismatchError (exit 78) when a value does not open. */
export async function assertKeysOpenDatabase(db: Knex, cipher: FieldCipher): Promise<KeyCheck> {
  const check = await checkStoredKeys(db, cipher);
  if (check.problems.length > 0) throw new EncryptionKeysMismatchError(check.problems);
  return check;
}
