import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { anniversaryPageQuery, birthdayPageQuery, type CelebrationDay } from '../../src/jobs/celebration-claims.js';
import { celebrationDay } from '../../src/jobs/send-celebrations.js';
import { setSetting } from '../../src/settings.js';
import type { Db } from '../../src/db/connect.js';
import { MIGRATED, settle } from '../support/database.js';
import { alternate, cpuNote, mailPhases, phasesNote, processRow, type BenchEnv, type MailPhases } from '../support/harness.js';
import { BIN, reference } from '../support/paths.js';
import { runNodeOk, type ProcessRun } from '../support/processes.js';
import { SQL_FIRST_NAMES, SQL_LAST_NAMES, insertInBatches, seededName, seededUuid } from '../support/seeded.js';
import type { ScaledMeasurement } from './sweep.js';

export const CELEBRATION_PEOPLE = 100_000;
const BIRTHDAYS = 200;
const COUPLES = 50;
const DATABASE = 'bench_celebrations';

export interface CelebrationMeasurement extends ScaledMeasurement {
  /** EXPLAIN (ANALYZE, BUFFERS) of the job's own page queries. */
  plans: Array<{ query: string; plan: string; usesIndex: boolean }>;
  /** CPU time of both sides, and when their messages reached the sink. */
  cpu: string;
  phases: string;
}

/**
 * Case 5 data: `people` members with birth dates over 80 years and a third
 * married, none celebrating today except 200 birthdays and 50 couples (100
 * people) married on today's date: 300 people, 250 emails. Non-celebrants'
 * encrypted columns are placeholders of the same shape: the job never reads them.
 */
async function buildDatabase(env: BenchEnv, people: number, day: CelebrationDay): Promise<void> {
  await env.database.create(DATABASE, MIGRATED);
  const db = env.database.connect(DATABASE, 1);
  try {
    const others = people - BIRTHDAYS - 2 * COUPLES;
    await db.raw(
      `INSERT INTO people (id, first_name, last_name, email_enc, email_hash, mobile_enc, mobile_hash, birth_date, wedding_date)
       SELECT md5('person' || i)::uuid,
              (${SQL_FIRST_NAMES})[1 + i % 16], (${SQL_LAST_NAMES})[1 + (i * 7) % 12],
              'v1:' || substr(md5('iv' || i), 1, 16) || ':' || substr(md5('tag' || i), 1, 24) || ':' || md5('email' || i),
              encode(sha256(('email' || i)::bytea), 'hex'),
              CASE WHEN i % 2 = 0 THEN 'v1:' || substr(md5('iv' || i), 1, 16) || ':' || md5('mobile' || i) END,
              CASE WHEN i % 2 = 0 THEN encode(sha256(('mobile' || i)::bytea), 'hex') END,
              date '1940-01-01' + ((i::bigint * 7919) % 29200)::int,
              CASE WHEN i % 3 = 0 THEN date '1965-01-01' + ((i::bigint * 104729) % 21900)::int END
       FROM generate_series(1, ${others}) AS i`,
    );
    // Nobody else celebrates today, so the rows touched stay 300 at every table size.
    await db.raw(`UPDATE people SET birth_date = birth_date + 2 WHERE birth_month = ? AND birth_day = ANY(?::smallint[])`, [day.month, day.days]);
    await db.raw(`UPDATE people SET wedding_date = wedding_date + 2 WHERE wedding_month = ? AND wedding_day = ANY(?::smallint[])`, [
      day.month,
      day.days,
    ]);
    const monthDay = `${String(day.month).padStart(2, '0')}-${String(day.days[0]).padStart(2, '0')}`;
    const person = (label: string, i: number, dates: { birth?: string; wedding?: string }) => {
      const email = `${label}${i}@example.org`;
      const name = seededName(i);
      return {
        id: seededUuid(`${label}-${i}`),
        first_name: name.first,
        last_name: name.last,
        email_enc: env.cipher.encrypt(email),
        email_hash: env.cipher.lookupHash('email', email),
        birth_date: dates.birth ?? null,
        wedding_date: dates.wedding ?? null,
      };
    };
    const celebrants = [
      ...Array.from({ length: BIRTHDAYS }, (_, i) => person('birthday', i, { birth: `${1950 + (i % 60)}-${monthDay}` })),
      ...Array.from({ length: 2 * COUPLES }, (_, i) =>
        person('married', i, { wedding: `${1970 + (Math.floor(i / 2) % 40)}-${monthDay}` }),
      ),
    ];
    await insertInBatches(db, 'people', celebrants);
    for (let c = 0; c < COUPLES; c++) {
      const a = seededUuid(`married-${2 * c}`);
      const b = seededUuid(`married-${2 * c + 1}`);
      await db('people').where({ id: a }).update({ spouse_id: b });
      await db('people').where({ id: b }).update({ spouse_id: a });
    }
    const now = new Date();
    await setSetting(db, 'church.name', 'Grace Community Church', now);
    await setSetting(db, 'celebrations.birthdays', true, now);
    await setSetting(db, 'celebrations.anniversaries', true, now);
    await settle(db, ['people']);
  } finally {
    await db.destroy();
  }
}

async function explain(db: Db, day: CelebrationDay): Promise<CelebrationMeasurement['plans']> {
  const plans: CelebrationMeasurement['plans'] = [];
  for (const [query, index, sql] of [
    ['birthday page (first page, 50 rows)', 'people_birthday_idx', birthdayPageQuery(day, undefined, 50)],
    ['anniversary page (first page, 50 rows)', 'people_anniversary_idx', anniversaryPageQuery(day, undefined, 50)],
  ] as const) {
    const result = await db.raw<{ rows: Array<{ 'QUERY PLAN': string }> }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql.sql}`, sql.bindings);
    const plan = result.rows.map((r) => r['QUERY PLAN']).join('\n');
    plans.push({ query, plan, usesIndex: plan.includes(index) });
  }
  return plans;
}

/** Case 5 at `scale` people: ours is the whole `eventops send-celebrations` process. */
export async function measureCelebrations(
  env: BenchEnv,
  options: { scale: number; name: string; warmup: number; reps: number; target?: number; watch?: boolean },
): Promise<CelebrationMeasurement> {
  const people = Math.max(1000, Math.round(CELEBRATION_PEOPLE * options.scale));
  const day = celebrationDay(new Date(), env.config.regional.timeZone);
  env.log(`case 5: generating ${people.toLocaleString('en')} people (celebrating ${day.date})`);
  await buildDatabase(env, people, day);
  const db = env.database.connect(DATABASE, 1);
  const messagesFile = path.join(env.tmpDir, 'celebration-messages.json');
  const processOptions = { env: env.appEnv(env.database.urlFor(DATABASE)), cwd: env.cwd, tmpDir: env.tmpDir };
  const emails = BIRTHDAYS + COUPLES;
  const addresses = [
    ...Array.from({ length: BIRTHDAYS }, (_, i) => `birthday${i}@example.org`),
    ...Array.from({ length: 2 * COUPLES }, (_, i) => `married${i}@example.org`),
  ];
  const counted = async (run: () => Promise<ProcessRun>): Promise<ProcessRun & MailPhases> => {
    const before = env.sink.accepted();
    const startedAt = performance.now();
    const result = await run();
    const sent = env.sink.accepted() - before;
    if (sent !== emails) throw new Error(`expected ${emails} celebration emails at the sink, got ${sent}`);
    return { ...result, ...mailPhases(env.sink, addresses, startedAt) };
  };
  const ours = () => counted(() => runNodeOk([BIN, 'send-celebrations', '--json'], processOptions));
  const resetClaims = () => db('celebration_claims').delete();
  try {
    await resetClaims();
    env.sink.capture(true);
    await ours();
    env.sink.capture(false);
    fs.writeFileSync(messagesFile, JSON.stringify(env.sink.captured()));
    env.sink.reset();
    const plans = await explain(db, day);
    const referenceEnv = {
      ...processOptions.env,
      BENCH_MESSAGES_FILE: messagesFile,
      BENCH_DAY: JSON.stringify({ month: day.month, days: day.days, date: day.date }),
    };
    const samples = await alternate({
      warmup: options.warmup,
      reps: options.reps,
      before: async (side) => {
        if (side === 'ours') await resetClaims();
      },
      ours,
      reference: () => counted(() => runNodeOk([reference('celebrations-pg')], { ...processOptions, env: referenceEnv })),
      log: env.log,
    });
    return {
      result: processRow({ name: options.name, scale: options.scale, samples, targetRatio: options.target, watch: options.watch }),
      touched: BIRTHDAYS + 2 * COUPLES,
      tableRows: people,
      plans,
      cpu: cpuNote(`case ${options.name}`, samples),
      phases: phasesNote(`case ${options.name}`, samples),
    };
  } finally {
    await db.destroy();
    fs.rmSync(messagesFile, { force: true });
    await env.database.drop(DATABASE);
  }
}
