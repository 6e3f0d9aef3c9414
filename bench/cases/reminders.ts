import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setSetting } from '../../src/settings.js';
import { MIGRATED, settle } from '../support/database.js';
import { alternate, cpuNote, mailPhases, phasesNote, ratioRow, type BenchEnv, type CaseReport, type MailPhases } from '../support/harness.js';
import { BIN, reference } from '../support/paths.js';
import { runNodeOk, type ProcessRun } from '../support/processes.js';
import { insertInBatches, seededName, seededUuid } from '../support/seeded.js';
import { maxOf } from '../support/stats.js';

export const REMINDER_RECIPIENTS = 5_000;
const DATABASE = 'bench_reminders';
const EVENT_ID = seededUuid('reminder-event');

/**
 * Case 4 data: one event due for its reminder with `recipients` live
 * registrations (one in five PENDING bank transfers, so payment reminders
 * with a pay-now link; the rest PAID, so event reminders with a calendar
 * file), 2% cancelled ones the job must skip, and five times as many
 * registrations of past events around them.
 */
async function buildDatabase(env: BenchEnv, recipients: number): Promise<void> {
  await env.database.create(DATABASE, MIGRATED);
  const db = env.database.connect(DATABASE, 1);
  try {
    const now = new Date();
    await db('events').insert({
      id: EVENT_ID,
      slug: 'family-camp',
      title: 'Family Camp',
      location: 'Church Hall, 1 Main St',
      starts_at: new Date(now.getTime() + 3 * 86_400_000),
      capacity: null,
      published: true,
      online_payment: true,
      pass_card_fee: true,
      pricing: JSON.stringify({ tiers: [{ id: 'adult', label: 'Adult', price: 12000 }] }),
      reminder_at: new Date(now.getTime() - 3_600_000),
    });
    for (const [key, value] of [
      ['church.name', 'Grace Community Church'],
      ['church.address', '1 Main St, Springfield NSW 2000'],
      ['bank.accountName', 'Grace Community Church'],
      ['bank.bsb', '062-000'],
      ['bank.accountNumber', '1234 5678'],
    ] as const) {
      await setSetting(db, key, value, now);
    }
    const cancelled = Math.round(recipients * 0.02);
    const rows = Array.from({ length: recipients + cancelled }, (_, i) => {
      const email = `member${i}@example.org`;
      const name = seededName(i);
      const status = i >= recipients ? 'CANCELLED' : i % 5 === 0 ? 'PENDING' : 'PAID';
      return {
        id: seededUuid(`registration-${i}`),
        event_id: EVENT_ID,
        status,
        contact_name: `${name.first} ${name.last}`,
        contact_email_enc: env.cipher.encrypt(email),
        contact_email_hash: env.cipher.lookupHash('email', email),
        attendees: JSON.stringify([{ name: `${name.first} ${name.last}`, tier: 'adult' }]),
        attendee_count: 1,
        payment_method: status === 'PENDING' ? 'bank' : 'card',
        line_items: JSON.stringify([{ label: 'Adult', amount: 12000, kind: 'ticket' }]),
        total_minor: 12000,
      };
    });
    await insertInBatches(db, 'registrations', rows);
    await db.raw(
      `INSERT INTO events (id, slug, title, starts_at, published, reminder_at, reminder_sent_at)
       SELECT md5('past-event' || e)::uuid, 'past-event-' || e, 'Past event ' || e, now() - (e || ' days')::interval, true,
              now() - (e + 2 || ' days')::interval, now() - (e + 2 || ' days')::interval
       FROM generate_series(1, 50) AS e`,
    );
    await db.raw(
      `INSERT INTO registrations (event_id, status, contact_name, contact_email_enc, contact_email_hash, attendees, attendee_count,
         payment_method, line_items, total_minor)
       SELECT md5('past-event' || (1 + i % 50))::uuid, 'PAID', 'Past Member', 'v1:' || md5('iv' || i) || ':' || md5('enc' || i),
              encode(sha256(('past' || i)::bytea), 'hex'), '[{"name":"Past Member","tier":"adult"}]', 1, 'bank',
              '[{"label":"Adult","amount":12000,"kind":"ticket"}]', 12000
       FROM generate_series(1, ${recipients * 5}) AS i`,
    );
    await settle(db, ['events', 'registrations']);
  } finally {
    await db.destroy();
  }
}

export async function reminders(env: BenchEnv): Promise<CaseReport> {
  const recipients = Math.max(100, Math.round(REMINDER_RECIPIENTS * env.scale));
  env.log(`case 4: ${recipients.toLocaleString('en')} registrations to remind`);
  await buildDatabase(env, recipients);
  const db = env.database.connect(DATABASE, 1);
  const processOptions = { env: env.appEnv(env.database.urlFor(DATABASE)), cwd: env.cwd, tmpDir: env.tmpDir };
  const messagesFile = path.join(env.tmpDir, 'reminder-messages.json');
  const addresses = Array.from({ length: recipients }, (_, i) => `member${i}@example.org`);
  const counted = async (run: () => Promise<ProcessRun>): Promise<ProcessRun & MailPhases> => {
    const before = env.sink.accepted();
    const startedAt = performance.now();
    const result = await run();
    const sent = env.sink.accepted() - before;
    if (sent !== recipients) throw new Error(`expected ${recipients} reminders at the sink, got ${sent}`);
    return { ...result, ...mailPhases(env.sink, addresses, startedAt) };
  };
  const ours = () => counted(() => runNodeOk([BIN, 'send-reminders', '--json'], processOptions));
  try {
    const resetClaim = async () => {
      // Each run sends the same round afresh: without forgetting the last run's records it would skip everyone they name.
      await db('registration_emails').whereIn('registration_id', db('registrations').select('id').where({ event_id: EVENT_ID })).del();
      await db('events').where({ id: EVENT_ID }).update({ reminder_claimed_at: null, reminder_sent_at: null });
    };
    // One run of ours to capture its messages: the reference sends exactly these.
    await resetClaim();
    env.sink.capture(true);
    await ours();
    env.sink.capture(false);
    fs.writeFileSync(messagesFile, JSON.stringify(env.sink.captured()));
    env.sink.reset();
    const samples = await alternate({
      warmup: 1,
      reps: 3,
      before: async (side) => {
        if (side === 'ours') await resetClaim();
      },
      ours,
      reference: () =>
        counted(() =>
          runNodeOk([reference('send-raw')], { ...processOptions, env: { ...processOptions.env, BENCH_MESSAGES_FILE: messagesFile } }),
        ),
      log: env.log,
    });
    return {
      results: [
        ratioRow({
          name: '4 send-reminders',
          scale: env.scale,
          ours: samples.ours.map((r) => r.ms),
          reference: samples.reference.map((r) => r.ms),
          // A nightly job: 2× its floor is a watch against regressions (see bench/README.md, "Targets that follow the users").
          targetRatio: 2,
          watch: true,
          peakRssMb: maxOf(samples.ours.map((r) => r.rssMb)),
        }),
      ],
      notes: [cpuNote('case 4', samples), phasesNote('case 4', samples)],
    };
  } finally {
    await db.destroy();
    fs.rmSync(messagesFile, { force: true });
    await env.database.drop(DATABASE);
  }
}
