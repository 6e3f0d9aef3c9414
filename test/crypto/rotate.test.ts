import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/context.js';
import { ENCRYPTED_COLUMNS, planRotation, rotateKeys } from '../../src/crypto/rotate.js';
import { AppError } from '../../src/errors.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { TEST_KEYS } from '../support/env.js';
import { readStoredValues, seedEncryptedRows, V1_ENV, V2_ENV, valueId, type EncryptedValue } from './encrypted-fixture.js';

let tdb: TestDatabase;
let v1: AppContext;
let v2: AppContext;
let seeded: EncryptedValue[];

beforeAll(async () => {
  tdb = await createTestDatabase();
  v1 = createTestContext({ db: tdb.db, env: V1_ENV });
  v2 = createTestContext({ db: tdb.db, env: V2_ENV });
  seeded = await seedEncryptedRows(tdb.db, v1.cipher);
});
afterAll(async () => {
  await tdb.drop();
});

const countBy = (values: { table: string; column: string }[]) => {
  const counts: Record<string, number> = {};
  for (const v of values) counts[`${v.table}.${v.column}`] = (counts[`${v.table}.${v.column}`] ?? 0) + 1;
  return counts;
};

describe('key rotation', () => {
  it('the fixture covers every encrypted column of the schema', async () => {
    const columns = (await tdb.db('information_schema.columns')
      .select('table_name', 'column_name')
      .where({ table_schema: 'public' })
      .andWhere('column_name', 'like', '%\\_enc')) as { table_name: string; column_name: string }[];
    const inSchema = columns.map((c) => `${c.table_name}.${c.column_name}`).sort();
    expect(ENCRYPTED_COLUMNS.map((c) => `${c.table}.${c.column}`).sort()).toEqual(inSchema);
    expect(Object.keys(countBy(seeded)).sort()).toEqual(inSchema);
  });

  it('the plan counts, per column and key version, the values not under the current version', async () => {
    const plan = await planRotation(v2);
    expect(plan.targetVersion).toBe('v2');
    expect(plan.total).toBe(seeded.length);
    expect(plan.missingKeys).toEqual([]);
    const expected = countBy(seeded);
    for (const column of plan.columns) {
      const count = expected[`${column.table}.${column.column}`] ?? 0;
      expect(column.pending).toBe(count);
      expect(column.byVersion).toEqual({ v1: count });
    }
    expect((await planRotation(v1)).total).toBe(0);
  });

  it('a run that stops after its first batch leaves that batch rotated and every other value still under v1', async () => {
    let batches = 0;
    const crashed = rotateKeys(v2, {
      batchSize: 2,
      onProgress: () => {
        batches += 1;
        throw new Error('simulated crash after the first batch');
      },
    });
    await expect(crashed).rejects.toThrow('simulated crash');
    expect(batches).toBe(1);
    const stored = await readStoredValues(tdb.db);
    expect(stored.filter((v) => v.stored.startsWith('v2:'))).toHaveLength(2);
    expect(stored.filter((v) => v.stored.startsWith('v1:'))).toHaveLength(seeded.length - 2);
    expect((await planRotation(v2)).total).toBe(seeded.length - 2);
  });

  it('a fresh run rotates the rest: every value is under v2 and decrypts to the original with the v2 keyring', async () => {
    const progress: number[] = [];
    const result = await rotateKeys(v2, { batchSize: 3, onProgress: (p) => void progress.push(p.rotated) });
    expect(result.targetVersion).toBe('v2');
    expect(result.rotated).toBe(seeded.length - 2);
    expect(result.skipped).toBe(0);
    expect(progress.at(-1)).toBe(seeded.length - 2);

    const stored = await readStoredValues(tdb.db);
    expect(stored).toHaveLength(seeded.length);
    const plaintextById = new Map(seeded.map((v) => [valueId(v), v.plaintext]));
    for (const value of stored) {
      expect(value.stored.startsWith('v2:')).toBe(true);
      expect(v2.cipher.decrypt(value.stored)).toBe(plaintextById.get(valueId(value)));
    }
    expect((await planRotation(v2)).total).toBe(0);
  });

  it('leaves NULL encrypted columns NULL', async () => {
    expect(await tdb.db('people').whereNull('mobile_enc').count({ n: '*' }).first()).toEqual({ n: 2 });
    expect(await tdb.db('checkout_sessions').whereNull('payload_enc').count({ n: '*' }).first()).toEqual({ n: 1 });
  });

  it('lookup hashes stay valid after rotation because they derive from key v1', async () => {
    const user = seeded.find((v) => v.table === 'users');
    const row = await tdb.db('users').where({ email_hash: v2.cipher.lookupHash('email', user?.plaintext ?? '') }).first();
    expect(String(row?.id)).toBe(user?.key);
  });

  it('a second run rotates nothing', async () => {
    const before = await readStoredValues(tdb.db);
    const result = await rotateKeys(v2);
    expect(result.rotated).toBe(0);
    expect(result.columns.every((c) => c.rotated === 0 && c.skipped === 0)).toBe(true);
    expect(await readStoredValues(tdb.db)).toEqual(before);
  });

  it('a value changed by someone else between read and write is not overwritten, and the next run rotates it', async () => {
    const [inserted] = (await tdb.db('users')
      .insert({ name: 'Late', email_enc: v1.cipher.encrypt('late@example.org'), email_hash: 'late-hash', role: 'STAFF' })
      .returning('id')) as { id: string }[];
    const id = inserted?.id;
    const concurrent = v1.cipher.encrypt('changed@example.org');

    // Hold the row lock so the rotation reads the old value, then blocks on its UPDATE until we have changed the row.
    const trx = await tdb.db.transaction();
    await trx('users').where({ id }).forUpdate().first();
    const running = rotateKeys(v2);
    await waitForLockWait(tdb);
    await trx('users').where({ id }).update({ email_enc: concurrent });
    await trx.commit();
    const result = await running;

    expect(result.columns.find((c) => c.table === 'users')).toMatchObject({ rotated: 0, skipped: 1 });
    expect((await tdb.db('users').where({ id }).first())?.email_enc).toBe(concurrent);

    const next = await rotateKeys(v2);
    expect(next.rotated).toBe(1);
    const row = await tdb.db('users').where({ id }).first();
    expect(row?.email_enc.startsWith('v2:')).toBe(true);
    expect(v2.cipher.decrypt(row?.email_enc)).toBe('changed@example.org');
  });

  it('a value that cannot be decrypted stops the run with an error naming table, column and id but not the plaintext', async () => {
    const foreign = createTestContext({ db: tdb.db, env: { ENCRYPTION_KEY: TEST_KEYS.v2 } });
    const [person] = (await tdb.db('people')
      .insert({ first_name: 'Wrong', last_name: 'Key', mobile_enc: foreign.cipher.encrypt('0499 999 999') })
      .returning('id')) as { id: string }[];
    try {
      const error = await rotateKeys(v2).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(AppError);
      const message = (error as AppError).message;
      expect((error as AppError).code).toBe('rotation_decrypt_failed');
      expect(message).toContain('people.mobile_enc');
      expect(message).toContain(String(person?.id));
      expect(message).not.toContain('0499');
      expect((await tdb.db('people').where({ id: person?.id }).first())?.mobile_enc.startsWith('v1:')).toBe(true);
    } finally {
      await tdb.db('people').where({ id: person?.id }).delete();
    }
  });

  it('values under a key version missing from the keyring are listed by the plan and stop the run before it changes anything', async () => {
    const v3 = createTestContext({
      db: tdb.db,
      env: { ...V2_ENV, ENCRYPTION_KEY_V3: TEST_KEYS.v2, ENCRYPTION_KEY_ID: 'v3' },
    });
    const [row] = (await tdb.db('queued_mail').insert({ kind: 'reminder', message_enc: v3.cipher.encrypt('{}') }).returning('id')) as {
      id: number;
    }[];
    const [pending] = (await tdb.db('people')
      .insert({ first_name: 'Still', last_name: 'V1', email_enc: v1.cipher.encrypt('still@example.org') })
      .returning('id')) as { id: string }[];
    try {
      const plan = await planRotation(v2);
      expect(plan.missingKeys).toEqual(['v3']);
      expect(plan.total).toBe(2);
      expect(plan.columns.find((c) => c.table === 'queued_mail')?.byVersion).toEqual({ v3: 1 });
      const before = await readStoredValues(tdb.db);
      const error = await rotateKeys(v2).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe('rotation_missing_keys');
      expect((error as AppError).message).toContain('queued_mail.message_enc');
      expect((error as AppError).suggestion).toContain('ENCRYPTION_KEY_V3');
      expect(await readStoredValues(tdb.db)).toEqual(before);
    } finally {
      await tdb.db('queued_mail').where({ id: row?.id }).delete();
      await tdb.db('people').where({ id: pending?.id }).delete();
    }
  });

  it('a run ends by counting what is still under another key, so an old key is not removed while a value needs it', async () => {
    // A process still writing under v1 (not restarted after ENCRYPTION_KEY_ID=v2) adds a value behind the run.
    let stale: string | undefined;
    await tdb.db('people').insert({ first_name: 'Now', last_name: 'V1', email_enc: v1.cipher.encrypt('now@example.org') });
    try {
      const result = await rotateKeys(v2, {
        onProgress: async (p) => {
          if (p.table !== 'people' || stale) return;
          const [row] = (await tdb.db('users')
            .insert({ name: 'Stale', email_enc: v1.cipher.encrypt('stale@example.org'), email_hash: 'stale-hash', role: 'STAFF' })
            .returning('id')) as { id: string }[];
          stale = row?.id;
        },
      });
      expect(result.rotated).toBe(1);
      expect(result.remaining).toBe(1);
      expect(result.remainingByVersion).toEqual({ v1: 1 });

      const next = await rotateKeys(v2);
      expect(next.rotated).toBe(1);
      expect(next.remaining).toBe(0);
      expect(next.remainingByVersion).toEqual({});
    } finally {
      await tdb.db('people').where({ first_name: 'Now', last_name: 'V1' }).delete();
      if (stale) await tdb.db('users').where({ id: stale }).delete();
    }
  });

  it('refuses a batch size that is not a positive integer', async () => {
    await expect(rotateKeys(v2, { batchSize: 0 })).rejects.toBeInstanceOf(AppError);
  });
});

async function waitForLockWait(tdb: TestDatabase): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const row = (await tdb.db('pg_stat_activity')
      .count({ n: '*' })
      .where({ datname: tdb.name, wait_event_type: 'Lock' })
      .first()) as { n: number } | undefined;
    if (Number(row?.n) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the rotation never waited for the row lock');
}
