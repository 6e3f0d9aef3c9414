import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerColumns, decryptSensitiveAnswers, type Question } from '../../src/registrations/answers.js';
import { runCli } from '../support/cli.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testEnv } from '../support/env.js';
import { insertRegistration } from '../support/factories.js';

let tdb: TestDatabase;
let workDir: string;

beforeAll(async () => {
  tdb = await createTestDatabase();
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-questions-cli-'));
});
afterAll(async () => {
  await tdb?.drop();
});

const env = () => ({ ...testEnv(), DATABASE_URL: tdb.url, NODE_ENV: 'test', LOG_LEVEL: 'warn' });

const QUESTIONS: Question[] = [
  { id: 'diet', label: 'Dietary needs', type: 'text', appliesTo: 'attendee' },
  { id: 'medical', label: 'Medical conditions', type: 'longtext', appliesTo: 'attendee', sensitive: true },
  { id: 'bus', label: 'Taking the bus?', type: 'yesno', appliesTo: 'registration' },
];

function writeEventFile(questions: Question[], extra: Record<string, unknown> = {}): string {
  const file = path.join(workDir, `kids-camp-${questions.length}-${Object.keys(extra).length}.json`);
  fs.writeFileSync(
    file,
    JSON.stringify({
      slug: 'kids-camp',
      title: 'Kids Camp',
      startsAt: '2027-02-05T19:00:00+11:00',
      capacity: null,
      pricing: { tiers: [{ id: 'child', label: 'Child', price: 0, minAge: 5, maxAge: 12 }] },
      questions,
      ...extra,
    }),
  );
  return file;
}

const storedQuestionIds = async () => ((await tdb.db('events').where({ slug: 'kids-camp' }).first()).questions as Question[]).map((q) => q.id);

describe('events create and update keep the questions; removing an answered one is refused unless --force', () => {
  it('an invalid question exits 2 naming its key, and creates nothing', async () => {
    const bad = writeEventFile([{ id: 'meal', label: 'Meal', type: 'choice', appliesTo: 'attendee' }]);
    const result = await runCli(['events', 'create', bad], { env: env(), cwd: workDir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('questions.0.options: a choice question needs a non-empty list of options');
    expect(await tdb.db('events').where({ slug: 'kids-camp' }).first()).toBeUndefined();
  });

  it('create stores the questions and the retention (30 when left out)', async () => {
    const created = await runCli(['events', 'create', writeEventFile(QUESTIONS)], { env: env(), cwd: workDir });
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const row = await tdb.db('events').where({ slug: 'kids-camp' }).first();
    expect(row.questions).toEqual(QUESTIONS);
    expect(row.sensitive_retention_days).toBe(30);
    expect(row.pricing.tiers[0]).toMatchObject({ minAge: 5, maxAge: 12 });
  });

  it('removing a question nobody answered is allowed; one answered (plain or encrypted) is refused, naming it and the count', async () => {
    const event = await tdb.db('events').where({ slug: 'kids-camp' }).first();
    const { cipher } = createTestContext({ db: tdb.db });
    // Two registrations answered the sensitive "medical", one of them "diet"; nobody answered "bus".
    await insertRegistration(tdb.db, cipher, event.id, {
      attendees: JSON.stringify([{ name: 'Kim', tier: 'child' }]),
      ...answerColumns(cipher, QUESTIONS, { registration: {}, attendees: [{ diet: 'Vegetarian', medical: 'Asthma' }] }),
    });
    const second = await insertRegistration(tdb.db, cipher, event.id, {
      attendees: JSON.stringify([{ name: 'Lee', tier: 'child' }]),
      ...answerColumns(cipher, QUESTIONS, { registration: {}, attendees: [{ medical: 'Epilepsy' }] }),
    });

    const withoutBus = await runCli(['events', 'update', writeEventFile(QUESTIONS.slice(0, 2))], { env: env(), cwd: workDir });
    expect(withoutBus.code).toBe(0);
    expect(await storedQuestionIds()).toEqual(['diet', 'medical']);

    const withoutAnswered = writeEventFile([], { sensitiveRetentionDays: 7 });
    const refused = await runCli(['events', 'update', withoutAnswered], { env: env(), cwd: workDir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('"diet" (Dietary needs): answered in 1 registration');
    expect(refused.stderr).toContain('"medical" (Medical conditions): answered in 2 registrations');
    expect(refused.stderr).toContain('eventops events update FILE.json --force');
    expect(refused.stderr).not.toContain('Asthma');
    expect(await storedQuestionIds()).toEqual(['diet', 'medical']);
    expect((await tdb.db('events').where({ slug: 'kids-camp' }).first()).sensitive_retention_days).toBe(30);

    const forced = await runCli(['events', 'update', withoutAnswered, '--force'], { env: env(), cwd: workDir });
    expect(forced.code).toBe(0);
    expect(await storedQuestionIds()).toEqual([]);
    expect((await tdb.db('events').where({ slug: 'kids-camp' }).first()).sensitive_retention_days).toBe(7);
    // The answers stay stored, hidden.
    const kept = await tdb.db('registrations').where({ id: second.id }).first();
    expect(decryptSensitiveAnswers(cipher, kept.sensitive_answers_enc).attendees).toEqual([{ medical: 'Epilepsy' }]);
  });
});
