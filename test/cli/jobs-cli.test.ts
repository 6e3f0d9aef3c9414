import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFieldCipher } from '../../src/crypto/field-cipher.js';
import { migrateRollback } from '../../src/db/migrate.js';
import { runCli } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testConfig, testEnv } from '../support/env.js';
import { insertCheckoutSession, insertEvent } from '../support/factories.js';
import { followRealClock } from '../support/test-now.js';

// The command runs on the real clock: default event dates follow it.
followRealClock();

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const ANSI = /\u001b\[/;

describe('job subcommands under cron (no TTY)', () => {
  it('sweep-checkouts prints a JSON summary, records a cli run, and never writes spinner control characters', async () => {
    const cipher = createFieldCipher(testConfig().keyring);
    const event = await insertEvent(tdb.db);
    await insertCheckoutSession(tdb.db, cipher, event.id, { expires_at: new Date(Date.now() - 60_000) });
    const env = testEnv({ DATABASE_URL: tdb.url });

    const dry = await runCli(['sweep-checkouts', '--dry-run', '--json'], { env });
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ job: 'sweep-checkouts', dryRun: true, expired: 1 });
    expect(await tdb.db('checkout_sessions').where({ status: 'OPEN' }).count({ n: '*' }).first()).toEqual({ n: 1 });

    const real = await runCli(['sweep-checkouts', '--json'], { env });
    expect(real.code).toBe(0);
    const summary = JSON.parse(real.stdout) as { outcome: string; expired: number; runId: number };
    expect(summary).toMatchObject({ outcome: 'ok', expired: 1 });
    expect(await tdb.db('job_runs').where({ id: summary.runId }).first()).toMatchObject({ trigger: 'cli', outcome: 'ok' });
    for (const output of [dry.stdout, dry.stderr, real.stdout, real.stderr]) expect(output).not.toMatch(ANSI);
    // JSON log lines on stderr when --json
    for (const line of real.stderr.trim().split('\n').filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();

    const human = await runCli(['sweep-checkouts'], { env });
    expect(human.code).toBe(0);
    expect(human.stdout).toBe('sweep-checkouts: ok, expired 0, scrubbed 0\n');
  });

  it('a dry run never migrates: with migrations to apply it refuses, says so, and leaves the schema as it was', async () => {
    const old = await createTestDatabase();
    try {
      const [newest] = await old.db('knex_migrations').orderBy('id', 'desc').limit(1).pluck('name');
      await old.db('knex_migrations').update({ batch: 1 });
      await old.db('knex_migrations').where({ name: newest }).update({ batch: 2 });
      await migrateRollback(old.db);
      const env = testEnv({ DATABASE_URL: old.url, MIGRATE_ON_START: 'true' });

      const dry = await runCli(['send-celebrations', '--dry-run'], { env });

      expect(dry.code).toBe(1);
      expect(dry.stderr).toContain('migrations to apply');
      expect(await old.db('knex_migrations').where({ name: newest }).first()).toBeUndefined();
      expect(await old.db('job_runs').count({ n: '*' }).first()).toEqual({ n: 0 });

      const real = await runCli(['send-celebrations'], { env });
      expect(real.code).toBe(0);
      expect(await old.db('knex_migrations').where({ name: newest }).first()).toBeDefined();
      const again = await runCli(['send-celebrations', '--dry-run', '--json'], { env });
      expect(again.code).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({ job: 'send-celebrations', dryRun: true });
    } finally {
      await old.drop();
    }
  });

  it('status shows the in-app schedule only when the in-app scheduler is on; with cron it says so instead; and whether the clock is in step with the database', async () => {
    const withCron = await runCli(['status', '--json'], { env: testEnv({ DATABASE_URL: tdb.url, IN_APP_CRON: 'false' }) });
    expect(withCron.code).toBe(0);
    expect(JSON.parse(withCron.stdout)).toMatchObject({ inAppScheduler: false, nextDue: [] });
    const text = await runCli(['status'], { env: testEnv({ DATABASE_URL: tdb.url, IN_APP_CRON: 'false' }) });
    expect(text.stdout).not.toContain('next (in-app)');
    expect(text.stdout).toContain('in-app scheduler: off (IN_APP_CRON is not true)');
    expect(text.stdout).toMatch(/^clock: in step with the database \(-?\d+ ms\)$/m);
    expect(Math.abs((JSON.parse(withCron.stdout) as { clockOffsetMs: number }).clockOffsetMs)).toBeLessThan(1_000);

    const inApp = await runCli(['status', '--json'], { env: testEnv({ DATABASE_URL: tdb.url, IN_APP_CRON: 'true' }) });
    const { inAppScheduler, nextDue } = JSON.parse(inApp.stdout) as { inAppScheduler: boolean; nextDue: Array<{ job: string; enabled: boolean }> };
    expect(inAppScheduler).toBe(true);
    expect(nextDue).toContainEqual(expect.objectContaining({ job: 'send-reminders', enabled: true }));
  });

  it('status shows a job due now as due now, at the next check, never the past moment it asked as the next in-app run', async () => {
    const asked = Date.now();
    const env = testEnv({ DATABASE_URL: tdb.url, IN_APP_CRON: 'true', APP_TIMEZONE: 'Australia/Sydney' });
    const text = await runCli(['status'], { env });
    expect(text.code).toBe(0);
    const next = text.stdout.split('\n').filter((line) => line.includes('next (in-app):'));
    // No scheduler has claimed this 30-minute slot: the reminders are due now.
    expect(next.find((line) => line.startsWith('send-reminders'))).toMatch(/ next \(in-app\): due now \(at the server's next check, every 5 minutes\)$/);
    for (const line of next) {
      const time = / next \(in-app\): (\d{4}-\d\d-\d\d) (\d\d:\d\d) ([+-]\d\d:\d\d)$/.exec(line);
      if (time) expect(new Date(`${time[1]}T${time[2]}:00${time[3]}`).getTime(), line).toBeGreaterThan(asked);
      else expect(line).toContain('due now');
    }
    const json = await runCli(['status', '--json'], { env });
    const { nextDue } = JSON.parse(json.stdout) as { nextDue: Array<{ job: string; dueNow?: boolean }> };
    expect(nextDue.find((due) => due.job === 'send-reminders')).toMatchObject({ dueNow: true });
  });

  it('a database that cannot be reached exits 1 with a clear message', async () => {
    const result = await runCli(['sweep-checkouts'], { env: testEnv({ DATABASE_URL: 'postgres://u:p@127.0.0.1:1/none' }) });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/cannot prepare the database/);
  });
});
