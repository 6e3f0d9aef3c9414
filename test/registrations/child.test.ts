import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadEventForRoll, loadRoll } from '../../src/door/roll.js';
import { seedDemoChurch, DEMO_EVENT_SLUG } from '../../src/office/demo-seed.js';
import { EventFileError, parseEventFile, parseEventFileText } from '../../src/office/event-file.js';
import { createEvent, updateEvent } from '../../src/office/events.js';
import { FixedClock } from '../../src/clock.js';
import type { Question } from '../../src/registrations/answers.js';
import { readAnswers } from '../../src/registrations/questions.js';
import { registerFamily } from '../support/checkin-fixtures.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent } from '../support/factories.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SYDNEY = 'Australia/Sydney';
const NOW = new Date('2026-11-22T00:00:00Z');

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const photos: Question = { id: 'photos', label: 'Photos of my child may appear in the newsletter.', type: 'consent', appliesTo: 'attendee' };
const childTier = { id: 'child', label: 'Child', price: 6000, child: true };
const adultTier = { id: 'adult', label: 'Adult', price: 12000 };

function problemsOf(input: Record<string, unknown>): string[] {
  try {
    parseEventFile(input);
    return [];
  } catch (error) {
    if (error instanceof EventFileError) return error.problems;
    throw error;
  }
}

const file = (overrides: Record<string, unknown> = {}) => ({
  slug: `camp-${Math.random().toString(16).slice(2, 10)}`,
  title: 'Family Camp',
  startsAt: '2027-03-12T18:00:00+11:00',
  capacity: null,
  pricing: { tiers: [adultTier, childTier] },
  ...overrides,
});

describe('a tier marked "child": true', () => {
  it('is validated: true or false only, and never beside an age limit that says otherwise', () => {
    expect(parseEventFile(file()).pricing.tiers[1]).toEqual(childTier);
    expect(problemsOf(file({ pricing: { tiers: [{ ...childTier, child: 'yes' }] } }))).toEqual([
      'pricing.tiers.0.child: true (every attendee of this tier is a child) or false',
    ]);
    expect(problemsOf(file({ pricing: { tiers: [{ ...childTier, minAge: 18 }] } }))).toEqual([
      "pricing.tiers.0.child: a children's tier cannot have a minAge of 18 or more",
    ]);
    expect(problemsOf(file({ pricing: { tiers: [{ ...childTier, maxAge: 19 }] } }))).toEqual([
      "pricing.tiers.0.child: a children's tier cannot have a maxAge of 18 or more; leave \"child\" out and the date of birth decides",
    ]);
    expect(problemsOf(file({ pricing: { tiers: [{ ...childTier, child: false, maxAge: 12 }] } }))).toEqual([
      'pricing.tiers.0.child: a maxAge under 18 makes every attendee of the tier a child; leave "child" out or set it to true',
    ]);
  });

  it("makes a consent given for its attendee the contact's as guardian, while an adult's own consent names no guardian", () => {
    const event = { questions: [photos], startsAt: new Date('2027-03-12T07:00:00Z'), pricing: { tiers: [adultTier, childTier] } };
    const fields = { 'q.0.photos': ['yes'], 'q.1.photos': ['yes'] };
    const attendees = [
      { name: 'Ruth Camper', tier: 'adult' },
      { name: 'Kim Camper', tier: 'child' },
    ];
    const { answers, problems } = readAnswers(event, attendees, fields, { contactName: 'Ruth Camper', now: NOW, timeZone: SYDNEY });
    expect(problems).toEqual([]);
    expect(answers.attendees[0]?.photos).not.toHaveProperty('asGuardianOf');
    expect(answers.attendees[1]?.photos).toMatchObject({ by: 'Ruth Camper', asGuardianOf: 'Kim Camper' });
  });

  it('shows the contact as the guardian at the door, as a date of birth under 18 does; an adult tier with no date of birth has none', async () => {
    const ctx = createTestContext({ db: tdb.db, clock: new FixedClock(NOW) });
    const event = await insertEvent(tdb.db, {
      pricing: JSON.stringify({ tiers: [{ id: 'adult', label: 'Adult', price: 12000 }, { id: 'child', label: 'Child', price: 6000, child: true }] }),
    });
    await registerFamily(tdb.db, ctx.cipher, event, {
      contact: 'Ruth Lee',
      attendees: [
        { name: 'Ruth Lee', tier: 'adult' },
        { name: 'Mia Lee', tier: 'child' },
      ],
    });
    const roll = await loadRoll(ctx, await loadEventForRoll(ctx, { id: event.id }));
    expect(roll.attendees.map((a) => [a.name, a.guardian])).toEqual([
      ['Ruth Lee', null],
      ['Mia Lee', 'Ruth Lee'],
    ]);
  });
});

describe('an attendee consent that no tier can give as a guardian', () => {
  it('is saved with a warning from events create and update naming the question and what to do; a children\'s tier or an age limit silences it', async () => {
    const ctx = createTestContext({ db: tdb.db, clock: new FixedClock(NOW) });
    const unmarked = file({ questions: [photos], pricing: { tiers: [adultTier, { id: 'child', label: 'Child', price: 6000 }] } });
    const created = await createEvent(ctx, parseEventFile(unmarked));
    expect(created.warnings).toEqual([
      'questions.0 ("photos"): a consent asked of each attendee, and no tier it is asked of (adult, child) can be a child, so every consent is recorded ' +
        "as the contact's own, never as a guardian's, and the door shows no guardian; mark a children's tier \"child\": true (or give it a maxAge under 18, " +
        'or minAge/maxAge to ask a date of birth)',
    ]);
    const updated = await updateEvent(ctx, parseEventFile({ ...unmarked, questions: undefined }));
    expect(updated.warnings).toEqual(created.warnings);

    expect((await updateEvent(ctx, parseEventFile({ ...unmarked, pricing: { tiers: [adultTier, childTier] } }))).warnings).toEqual([]);
    const byAge = { ...unmarked, pricing: { tiers: [adultTier, { id: 'child', label: 'Child', price: 6000, minAge: 5 }] } };
    expect((await updateEvent(ctx, parseEventFile(byAge))).warnings).toEqual([]);
    // Adults only (minAge 18): nobody there is a child.
    const adultsOnly = { ...unmarked, pricing: { tiers: [{ ...adultTier, minAge: 18 }] } };
    expect((await updateEvent(ctx, parseEventFile(adultsOnly))).warnings).toHaveLength(1);
    // Asked only of the adults: no guardian could ever give it.
    const adultsAsked = { ...unmarked, questions: [{ ...photos, tiers: ['adult'] }], pricing: { tiers: [adultTier, childTier] } };
    expect((await updateEvent(ctx, parseEventFile(adultsAsked))).warnings).toHaveLength(1);
    // A consent asked once of the contact is the contact's own anyway.
    const once = { ...unmarked, questions: [{ ...photos, appliesTo: 'registration' }] };
    expect((await updateEvent(ctx, parseEventFile(once))).warnings).toEqual([]);
  });
});

describe('the samples mark their Child tier', () => {
  it("the office guide's sample event file", () => {
    const guide = fs.readFileSync(path.join(ROOT, 'docs/office.md'), 'utf8');
    const section = guide.slice(guide.indexOf('### The event file'));
    const sample = /```json\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    const tiers = parseEventFileText(sample).pricing.tiers;
    expect(tiers.find((tier) => tier.label === 'Child')).toMatchObject({ child: true });
  });

  it("the demo: its child's consent-giver and guardian at the door is the registering parent", async () => {
    const ctx = createTestContext({ db: tdb.db, env: { ALLOW_DEMO_SEED: 'true' }, clock: new FixedClock(NOW) });
    await seedDemoChurch(ctx);
    const roll = await loadRoll(ctx, await loadEventForRoll(ctx, { slug: DEMO_EVENT_SLUG }));
    expect(roll.attendees.find((a) => a.name === 'Eli Campbell')).toMatchObject({ tierLabel: 'Child', guardian: 'Ruth Campbell' });
    expect(roll.attendees.find((a) => a.name === 'Ruth Campbell')).toMatchObject({ guardian: null });
  });
});
