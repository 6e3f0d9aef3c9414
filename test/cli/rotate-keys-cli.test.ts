import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProgress } from '../../src/cli/progress.js';
import type { AppContext } from '../../src/context.js';
import { runCli, type CliResult } from '../support/cli.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testEnv } from '../support/env.js';
import { readStoredValues, seedEncryptedRows, V1_ENV, V2_ENV, valueId, type EncryptedValue } from '../crypto/encrypted-fixture.js';

// The global setup builds the command once before any test file starts.
let tdb: TestDatabase;
let v2: AppContext;
let seeded: EncryptedValue[];
let env: Record<string, string | undefined>;

beforeAll(async () => {
  tdb = await createTestDatabase();
  seeded = await seedEncryptedRows(tdb.db, createTestContext({ db: tdb.db, env: V1_ENV }).cipher);
  v2 = createTestContext({ db: tdb.db, env: V2_ENV });
  env = testEnv({ ...V2_ENV, DATABASE_URL: tdb.url, NODE_ENV: 'test', LOG_LEVEL: 'warn' });
});
afterAll(async () => {
  await tdb.drop();
});

const rotateKeys = (...args: string[]): Promise<CliResult> => runCli(['rotate-keys', ...args], { env });
// ESC starts every colour, cursor and erase sequence a spinner uses; a carriage return redraws a line in place.
const TERMINAL_CONTROL = /[\u001b\r]/;

describe('eventops rotate-keys', () => {
  it('without --apply prints the plan, exits 0 and changes nothing', async () => {
    const before = await readStoredValues(tdb.db);
    const result = await rotateKeys();
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`${seeded.length} values would be re-encrypted to key v2`);
    expect(result.stdout).toMatch(/people\.mobile_enc\s+3\s+\(v1: 3\)/);
    expect(await readStoredValues(tdb.db)).toEqual(before);

    const json = await rotateKeys('--json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ applied: false, targetVersion: 'v2', total: seeded.length, missingKeys: [] });
    expect(await readStoredValues(tdb.db)).toEqual(before);
  });

  it('a dry run that finds values under a key the keyring lacks exits 1 and names the variable to set', async () => {
    const other = await createTestDatabase();
    try {
      await seedEncryptedRows(other.db, createTestContext({ db: other.db, env: V1_ENV }).cipher);
      const [row] = await other.db('people').whereNotNull('mobile_enc').select('id', 'mobile_enc').limit(1);
      await other.db('people').where({ id: row.id }).update({ mobile_enc: String(row.mobile_enc).replace(/^v1:/, 'v7:') });
      const result = await runCli(['rotate-keys'], { env: { ...env, DATABASE_URL: other.url } });
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('set ENCRYPTION_KEY_V7 first');
    } finally {
      await other.drop();
    }
  });

  it('--apply without --confirm exits 2, says to add --confirm and changes nothing', async () => {
    const before = await readStoredValues(tdb.db);
    const result = await rotateKeys('--apply');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--confirm');
    expect(result.stdout).toBe('');
    expect(await readStoredValues(tdb.db)).toEqual(before);
  });

  it('an invalid --batch-size is a usage error', async () => {
    const result = await rotateKeys('--apply', '--confirm', '--batch-size', '0');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--batch-size');
    expect(result.stdout).toBe('');
  });

  it('--apply --confirm moves every value to v2, reports progress as plain lines and prints the summary', async () => {
    const result = await rotateKeys('--apply', '--confirm', '--batch-size', '4');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Re-encrypted ${seeded.length} values to key v2.`);
    expect(result.stderr).toContain(`rotate-keys: ${seeded.length} values now under key v2`);
    expect(result.stderr).toMatch(new RegExp(`rotate-keys: people\\.email_enc \\(\\d+/${seeded.length}\\)`));
    expect(result.stdout + result.stderr).not.toMatch(TERMINAL_CONTROL);

    const stored = await readStoredValues(tdb.db);
    expect(stored).toHaveLength(seeded.length);
    const plaintextById = new Map(seeded.map((v) => [valueId(v), v.plaintext]));
    for (const value of stored) {
      expect(value.stored.startsWith('v2:')).toBe(true);
      expect(v2.cipher.decrypt(value.stored)).toBe(plaintextById.get(valueId(value)));
    }
  });

  it('a second --apply --confirm rotates nothing; --json progress goes to stderr as JSON lines', async () => {
    const before = await readStoredValues(tdb.db);
    const result = await rotateKeys('--apply', '--confirm', '--json');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ applied: true, targetVersion: 'v2', rotated: 0, skipped: 0 });
    const progress = result.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { label: string; event: string });
    expect(progress.at(-1)).toMatchObject({ label: 'rotate-keys', event: 'succeed' });
    expect(result.stdout + result.stderr).not.toMatch(TERMINAL_CONTROL);
    expect(await readStoredValues(tdb.db)).toEqual(before);

    const plan = await rotateKeys();
    expect(plan.stdout).toContain('already under key v2');
  });

  it('says whether an older key may be removed: exit 1 while a value is still under it after --apply, exit 0 once none is', async () => {
    const v1 = createTestContext({ db: tdb.db, env: V1_ENV });
    // A process that still writes with v1 puts the value back under v1 as soon as the run writes it.
    await tdb.db.raw(`CREATE FUNCTION keep_v1() RETURNS trigger AS $$ BEGIN NEW.email_enc := OLD.email_enc; RETURN NEW; END $$ LANGUAGE plpgsql`);
    await tdb.db.raw('CREATE TRIGGER keep_v1 BEFORE UPDATE ON users FOR EACH ROW EXECUTE FUNCTION keep_v1()');
    await tdb.db('users').insert({ name: 'Stale', email_enc: v1.cipher.encrypt('stale@example.org'), email_hash: 'stale-hash', role: 'STAFF' });
    try {
      const stuck = await rotateKeys('--apply', '--confirm');
      expect(stuck.code).toBe(1);
      expect(stuck.stdout).toContain('1 values are still under another key (v1: 1): keep every key');
      expect(stuck.stdout).not.toContain('may be removed');
      expect(JSON.parse((await rotateKeys('--apply', '--confirm', '--json')).stdout)).toMatchObject({ remaining: 1, remainingByVersion: { v1: 1 } });

      await tdb.db.raw('DROP TRIGGER keep_v1 ON users');
      const done = await rotateKeys('--apply', '--confirm');
      expect(done.code).toBe(0);
      expect(done.stdout).toContain('Nothing is left under another key: an older key may be removed everywhere (keep v1');
      const plan = await rotateKeys();
      expect(plan.code).toBe(0);
      expect(plan.stdout).toContain('an older key may be removed everywhere (keep v1');
    } finally {
      await tdb.db.raw('DROP TRIGGER IF EXISTS keep_v1 ON users');
      await tdb.db.raw('DROP FUNCTION IF EXISTS keep_v1()');
      await tdb.db('users').where({ email_hash: 'stale-hash' }).delete();
    }
  });

  it('--help explains the rotation order with an example', async () => {
    const result = await rotateKeys('--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('set ENCRYPTION_KEY_V1 to the same value as ENCRYPTION_KEY');
    expect(result.stdout).toContain('ENCRYPTION_KEY_ID=v2');
    // The new key reaches every process (the server included) before any process writes with it.
    expect(result.stdout).toContain('keeping ENCRYPTION_KEY_ID at v1; restart every');
    const addKey = result.stdout.indexOf('ENCRYPTION_KEY_V2 with the new key');
    expect(addKey).toBeGreaterThanOrEqual(0);
    expect(addKey).toBeLessThan(result.stdout.indexOf('then set ENCRYPTION_KEY_ID=v2'));
    expect(result.stdout).toContain('$ eventops rotate-keys --apply --confirm');
  });
});

describe('progress reporter', () => {
  const capture = (tty?: { columns: number }) => {
    const stream = Object.assign(new PassThrough(), tty ? { isTTY: true, columns: tty.columns } : {});
    let text = '';
    stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
    return { stream, text: () => text };
  };

  it('without a terminal writes one plain line per event and no control characters', async () => {
    const out = capture();
    const progress = await createProgress({ interactive: false, json: false, label: 'job', stream: out.stream });
    progress.update('people.email_enc', { done: 2, total: 5 });
    progress.log('a note');
    progress.succeed('done');
    progress.fail('stopped');
    expect(out.text()).toBe('job: people.email_enc (2/5)\njob: a note\njob: done\njob: failed: stopped\n');
  });

  it('with json writes JSON lines even on a terminal', async () => {
    const out = capture({ columns: 80 });
    const progress = await createProgress({ interactive: true, json: true, label: 'job', stream: out.stream });
    progress.update('batch', { done: 1, total: 3 });
    progress.succeed('finished');
    const lines = out.text().trim().split('\n').map((line) => JSON.parse(line) as unknown);
    expect(lines).toEqual([
      { label: 'job', event: 'update', text: 'batch', done: 1, total: 3 },
      { label: 'job', event: 'succeed', text: 'finished' },
    ]);
  });

  it('a terminal that reports no width gets plain lines instead of a spinner that would hang', async () => {
    const out = capture({ columns: 0 });
    const progress = await createProgress({ interactive: true, json: false, label: 'job', stream: out.stream });
    progress.update('batch', { done: 1 });
    progress.succeed('finished');
    expect(out.text()).toBe('job: batch (1)\njob: finished\n');
  });
});
