import crypto from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createFieldCipher } from '../../src/crypto/field-cipher.js';
import { assertKeysFitForServing, assertKeysOpenDatabase, checkStoredKeys, EncryptionKeysMismatchError } from '../../src/crypto/key-check.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testConfig, TEST_KEYS } from '../support/env.js';
import { seedEncryptedRows, V1_ENV, V2_ENV } from './encrypted-fixture.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  await tdb.db.raw('TRUNCATE users, people, events, registrations, clearances, checkout_sessions, queued_mail CASCADE');
});

const cipherFor = (env: Record<string, string | undefined>) => createFieldCipher(testConfig(env).keyring);
const freshKey = () => crypto.randomBytes(32).toString('base64');
/** A new .env made for a restored database: a key of its own where the database's was. */
const FRESH_ENV = { ENCRYPTION_KEY: freshKey(), ENCRYPTION_KEY_V1: undefined };

describe('the key check: this configuration opens what the database holds', () => {
  it('an empty database passes, reading nothing', async () => {
    expect(await assertKeysOpenDatabase(tdb.db, cipherFor(FRESH_ENV))).toEqual({ checked: 0, problems: [] });
  });

  it('the keys the values were written with pass, reading the newest email of users, people and registrations', async () => {
    await seedEncryptedRows(tdb.db, cipherFor(V1_ENV));
    expect(await checkStoredKeys(tdb.db, cipherFor(V1_ENV))).toEqual({ checked: 3, problems: [] });
    // Mid-rotation: newer rows under v2, older under v1; a keyring with both opens everything.
    await seedEncryptedRows(tdb.db, cipherFor(V2_ENV), 'b');
    expect(await checkStoredKeys(tdb.db, cipherFor(V2_ENV))).toEqual({ checked: 3, problems: [] });
  });

  it('a fresh ENCRYPTION_KEY for a restored database fails, naming key v1 as not the one that wrote the values', async () => {
    await seedEncryptedRows(tdb.db, cipherFor(V1_ENV));
    const check = await checkStoredKeys(tdb.db, cipherFor(FRESH_ENV));
    expect(check.problems).toEqual([{ kind: 'mismatch', version: 'v1', table: 'users', column: 'email_enc' }]);
    const error = await assertKeysOpenDatabase(tdb.db, cipherFor(FRESH_ENV)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EncryptionKeysMismatchError);
    expect((error as EncryptionKeysMismatchError).exitCode).toBe(78);
    expect((error as EncryptionKeysMismatchError).message).toContain('ENCRYPTION_KEY is not the key v1 that wrote users.email_enc');
    expect((error as EncryptionKeysMismatchError).suggestion).toMatch(/^restore the \.env that goes with this database/);
  });

  it('a database rotated to v2, opened without ENCRYPTION_KEY_V2, fails once naming the missing ENCRYPTION_KEY_V2', async () => {
    await seedEncryptedRows(tdb.db, cipherFor(V2_ENV));
    const check = await checkStoredKeys(tdb.db, cipherFor(V1_ENV));
    expect(check).toEqual({ checked: 3, problems: [{ kind: 'missing', version: 'v2', table: 'users', column: 'email_enc' }] });
    const error = (await assertKeysOpenDatabase(tdb.db, cipherFor(V1_ENV)).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain('ENCRYPTION_KEY_V2 is not set, but users.email_enc holds values written with key v2');
  });

  it('serve runs with the right keys and one newer key missing (a rotation reaching this server last), logging it; config check still fails', async () => {
    await seedEncryptedRows(tdb.db, cipherFor(V1_ENV));
    await seedEncryptedRows(tdb.db, cipherFor(V2_ENV), 'b');
    const logged: string[] = [];
    const check = await assertKeysFitForServing(tdb.db, cipherFor(V1_ENV), { error: (_obj, msg) => logged.push(msg) });
    expect(check.problems).toEqual([{ kind: 'missing', version: 'v2', table: 'users', column: 'email_enc' }]);
    expect(logged).toEqual([
      'ENCRYPTION_KEY_V2 is not set, but users.email_enc holds values written with key v2; this server cannot read those values until it has that key too (see "Encryption and key rotation" in docs/operations.md)',
    ]);
    await expect(assertKeysOpenDatabase(tdb.db, cipherFor(V1_ENV))).rejects.toBeInstanceOf(EncryptionKeysMismatchError);
  });

  it('a fresh .env on a database rotated to v2 is still caught when every newest value is under v2: the older v1 values show the wrong key v1', async () => {
    await seedEncryptedRows(tdb.db, cipherFor(V1_ENV));
    await seedEncryptedRows(tdb.db, cipherFor(V2_ENV), 'b');
    const check = await checkStoredKeys(tdb.db, cipherFor(FRESH_ENV));
    expect(check.problems).toEqual([
      { kind: 'missing', version: 'v2', table: 'users', column: 'email_enc' },
      { kind: 'mismatch', version: 'v1', table: 'users', column: 'email_enc' },
    ]);
    const refused = (await assertKeysFitForServing(tdb.db, cipherFor(FRESH_ENV), { error: () => undefined }).catch((e: unknown) => e)) as EncryptionKeysMismatchError;
    expect(refused).toBeInstanceOf(EncryptionKeysMismatchError);
    expect(refused.problems).toEqual([{ kind: 'mismatch', version: 'v1', table: 'users', column: 'email_enc' }]);
  });

  it('the right v2 with another v1 fails on the lookup hashes, which derive from v1 (people import would duplicate everyone)', async () => {
    await seedEncryptedRows(tdb.db, cipherFor(V2_ENV));
    const otherV1 = { ENCRYPTION_KEY: freshKey(), ENCRYPTION_KEY_V1: undefined, ENCRYPTION_KEY_V2: TEST_KEYS.v2 };
    const check = await checkStoredKeys(tdb.db, cipherFor(otherV1));
    expect(check.problems).toEqual([{ kind: 'lookup_hash', version: 'v1', table: 'users', column: 'email_hash' }]);
    const error = (await assertKeysOpenDatabase(tdb.db, cipherFor(otherV1)).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain('ENCRYPTION_KEY (key v1) is not the key the lookup hashes in users.email_hash were made with');
  });

  it('reads the newest value of each table: a table written under a key this keyring lacks is found though older rows open', async () => {
    await seedEncryptedRows(tdb.db, cipherFor(V1_ENV));
    // Only a newer registration is under v2 (written after step 2 of a rotation, by a process that had v2).
    const email = 'late@example.org';
    const v2 = cipherFor(V2_ENV);
    const event = (await tdb.db('events').first('id')) as { id: string };
    await tdb.db('registrations').insert({
      event_id: event.id,
      status: 'PENDING',
      contact_name: 'Late',
      contact_email_enc: v2.encrypt(email),
      contact_email_hash: v2.lookupHash('email', email),
      attendees: JSON.stringify([{ name: 'Late', tier: 'adult' }]),
      attendee_count: 1,
      payment_method: 'bank',
      line_items: JSON.stringify([]),
      total_minor: 0,
    });
    expect((await checkStoredKeys(tdb.db, cipherFor(V1_ENV))).problems).toEqual([
      { kind: 'missing', version: 'v2', table: 'registrations', column: 'contact_email_enc' },
    ]);
  });
});
