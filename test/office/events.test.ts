import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { EventFileError, parseEventFile, parseEventFileText, utcTimeWarnings, type EventFile } from '../../src/office/event-file.js';
import {
  createEvent,
  deleteEvent,
  getEventBySlug,
  listEvents,
  publishEvent,
  unpublishEvent,
  updateEvent,
} from '../../src/office/events.js';
import { AppError, NotFoundError } from '../../src/errors.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertRegistration } from '../support/factories.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures');
const fixtureJson = (name: string): Record<string, unknown> =>
  JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8')) as Record<string, unknown>;

const SYNC_ENV = { WEBSITE_SYNC_URL: 'http://127.0.0.1:9/hooks/eventops', WEBSITE_SYNC_SECRET: 'website-sync-test-secret' };

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

let counter = 0;
function eventFile(overrides: Record<string, unknown> = {}): EventFile {
  counter += 1;
  return parseEventFile({ ...fixtureJson('event-family-camp.json'), slug: `family-camp-${counter}`, ...overrides });
}

function syncContext(clock = new FixedClock(new Date('2026-11-22T00:00:00Z'))) {
  return createTestContext({ db: tdb.db, env: SYNC_ENV, clock });
}

interface OutboxRow {
  id: string;
  type: string;
  status: string;
  attempts: number;
  body: { id: string; type: string; occurredAt: string; event: Record<string, unknown> };
}

async function outboxFor(slug: string): Promise<OutboxRow[]> {
  return tdb.db('website_sync_outbox').whereRaw(`body->'event'->>'slug' = ?`, [slug]).orderBy('seq').select<OutboxRow[]>('*');
}

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof EventFileError) return error.problems;
    throw error;
  }
  throw new Error('expected the event file to be rejected');
}

describe('event file', () => {
  it('accepts the documented example and converts times with offsets to instants', () => {
    const file = parseEventFileText(fs.readFileSync(path.join(FIXTURES, 'event-family-camp.json'), 'utf8'));
    expect(file.startsAt.toISOString()).toBe('2027-03-12T07:00:00.000Z');
    expect(file.reminderAt?.toISOString()).toBe('2027-03-09T22:00:00.000Z');
    expect(file.pricing).toEqual({
      tiers: [
        { id: 'adult', label: 'Adult', price: 12000 },
        { id: 'child', label: 'Child', price: 6000 },
      ],
      familyWaiver: { maxChargedTickets: 3 },
      discount: { percent: 10 },
    });
  });

  it('in the church’s time zone, a time written with an offset the zone does not have that day is refused, naming the right one', () => {
    const base = { slug: 'autumn-fair', title: 'Autumn Fair', capacity: null, pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 0 }] } };
    const zone = { timeZone: 'Australia/Sydney' };
    // Daylight saving ends in Sydney on 4 April 2027: on the 10th the offset is +10:00, so 10:00+11:00 is 09:00 there.
    const error = (() => {
      try {
        parseEventFile({ ...base, startsAt: '2027-04-10T10:00:00+11:00', reminderAt: '2027-04-09T09:00:00+10:00' }, zone);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(EventFileError);
    expect((error as EventFileError).message).toContain(
      'startsAt: 2027-04-10T10:00:00+11:00 is 09:00 in Australia/Sydney, whose offset then is +10:00, not +11:00; for 10:00 there write 2027-04-10T10:00:00+10:00',
    );
    expect((error as EventFileError).message).not.toContain('reminderAt');
    // The right offset, summer's in summer, and UTC written as Z all pass; without a zone nothing is compared.
    expect(parseEventFile({ ...base, startsAt: '2027-04-10T10:00:00+10:00' }, zone).startsAt.toISOString()).toBe('2027-04-10T00:00:00.000Z');
    expect(parseEventFile({ ...base, startsAt: '2027-03-12T18:00:00+11:00' }, zone).startsAt.toISOString()).toBe('2027-03-12T07:00:00.000Z');
    expect(parseEventFile({ ...base, startsAt: '2027-04-10T00:00:00Z' }, zone).startsAt.toISOString()).toBe('2027-04-10T00:00:00.000Z');
    expect(parseEventFile({ ...base, startsAt: '2027-04-10T10:00:00+11:00' }).startsAt.toISOString()).toBe('2027-04-09T23:00:00.000Z');
  });

  it('reads a file saved with a UTF-8 byte-order mark (Windows Notepad) like one without', () => {
    const text = fs.readFileSync(path.join(FIXTURES, 'event-family-camp.json'), 'utf8');
    expect(parseEventFileText(`\uFEFF${text}`)).toEqual(parseEventFileText(text));
  });

  it('rejects unknown keys naming each key, at the top level and nested', () => {
    const topLevel = problemsOf(() => parseEventFileText(fs.readFileSync(path.join(FIXTURES, 'event-unknown-key.json'), 'utf8')));
    expect(topLevel).toEqual(['unknown key "colour"']);
    const nested = problemsOf(() =>
      eventFile({ pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 100, colour: 'red' }], extra: true } }),
    );
    expect(nested).toEqual(expect.arrayContaining(['unknown key "pricing.tiers.0.colour"', 'unknown key "pricing.extra"']));
  });

  it('capacity null means unlimited, but capacity may not be left out', () => {
    expect(eventFile({ capacity: null }).capacity).toBeNull();
    const { capacity: _omitted, ...withoutCapacity } = fixtureJson('event-family-camp.json');
    expect(problemsOf(() => parseEventFile(withoutCapacity))).toEqual([expect.stringMatching(/^capacity: /)]);
  });

  it('a capacity too large to store is refused by name in the file check, instead of failing in the database', () => {
    expect(problemsOf(() => eventFile({ capacity: 3_000_000_000 }))).toEqual(['capacity: at most 1000000, or null for unlimited']);
    expect(eventFile({ capacity: 1_000_000 }).capacity).toBe(1_000_000);
  });

  it('lists every problem at once with its path', () => {
    const problems = problemsOf(() =>
      eventFile({
        slug: 'Family Camp',
        startsAt: '2027-03-12T18:00:00',
        capacity: -1,
        pricing: {
          tiers: [
            { id: 'adult', label: 'Adult', price: 12000 },
            { id: 'child', label: 'Child', price: 10.5 },
          ],
          familyWaiver: { maxChargedTickets: 0 },
          discount: { percent: 10, amount: 500 },
        },
      }),
    );
    for (const where of ['slug', 'startsAt', 'capacity', 'pricing.tiers.1.price', 'pricing.familyWaiver.maxChargedTickets', 'pricing.discount']) {
      expect(problems.some((p) => p.startsWith(`${where}: `)), `a problem for ${where} in ${problems.join(' | ')}`).toBe(true);
    }
  });

  it('rejects duplicate tier ids', () => {
    const problems = problemsOf(() =>
      eventFile({ pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 1 }, { id: 'adult', label: 'Adult again', price: 2 }] } }),
    );
    expect(problems).toEqual(['pricing.tiers.1.id: duplicate tier id "adult"']);
  });

  it('refuses a discount percent with more than 2 decimals, which could not be charged exactly as the page shows it', () => {
    expect(problemsOf(() => eventFile({ pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 30000 }], discount: { percent: 33.333 } } }))).toEqual([
      expect.stringMatching(/^pricing\.discount\.percent: .*at most 2 decimals/),
    ]);
    expect(eventFile({ pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 30000 }], discount: { percent: 12.35 } } }).pricing.discount).toEqual({ percent: 12.35 });
  });

  it('refuses a reminder at or after the start, which the reminder job would never send', () => {
    expect(problemsOf(() => eventFile({ startsAt: '2027-03-12T18:00:00+11:00', reminderAt: '2027-03-20T09:00:00+11:00' }))).toEqual([
      expect.stringMatching(/^reminderAt: before startsAt/),
    ]);
    expect(eventFile({ startsAt: '2027-03-12T18:00:00+11:00', reminderAt: '2027-03-10T09:00:00+11:00' }).reminderAt).toEqual(
      new Date('2027-03-09T22:00:00Z'),
    );
  });

  it('rejects a pricing without tiers and a percentage above 100', () => {
    const problems = problemsOf(() => eventFile({ pricing: { tiers: [], discount: { percent: 150 } } }));
    expect(problems).toEqual(expect.arrayContaining([expect.stringMatching(/^pricing\.tiers: /), expect.stringMatching(/^pricing\.discount\.percent: /)]));
  });

  it('refuses a ticket price or discount amount above what one registration may cost, which no registration could be charged or stored', () => {
    const problems = problemsOf(() => eventFile({ pricing: { tiers: [{ id: 'vip', label: 'VIP', price: 100_000_000 }], discount: { amount: 100_000_000 } } }));
    expect(problems).toEqual(['pricing.tiers.0.price: at most 99999999', 'pricing.discount.amount: at most 99999999']);
    expect(eventFile({ pricing: { tiers: [{ id: 'vip', label: 'VIP', price: 99_999_999 }] } }).pricing.tiers[0]?.price).toBe(99_999_999);
  });

  it('the error is an event_invalid usage error (exit 2)', () => {
    try {
      eventFile({ nope: 1 });
      throw new Error('not rejected');
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe('event_invalid');
      expect((error as AppError).exitCode).toBe(2);
      expect((error as AppError).message).toContain('"nope"');
    }
  });
});

describe('event administration', () => {
  it('create stores the event and queues exactly one event.created notification carrying its public fields', async () => {
    const ctx = syncContext();
    const file = eventFile();
    const result = await createEvent(ctx, file);
    expect(result.change).toBe('created');

    const stored = await getEventBySlug(tdb.db, file.slug);
    expect(stored).toMatchObject({
      slug: file.slug,
      title: 'Family Camp',
      capacity: 120,
      published: false,
      onlinePayment: true,
      passCardFee: true,
      deletedAt: null,
      startsAt: new Date('2027-03-12T07:00:00Z'),
      reminderAt: new Date('2027-03-09T22:00:00Z'),
    });

    const rows = await outboxFor(file.slug);
    expect(rows).toHaveLength(1);
    const [row] = rows;
    expect(row).toMatchObject({ id: result.deliveryId, type: 'event.created', status: 'PENDING', attempts: 0 });
    expect(row?.body).toEqual({
      id: row?.id,
      type: 'event.created',
      occurredAt: '2026-11-22T00:00:00.000Z',
      event: {
        slug: file.slug,
        title: 'Family Camp',
        description: 'A weekend away for the whole church family.',
        startsAt: '2027-03-12T07:00:00.000Z',
        endsAt: null,
        location: 'Camp Grounds, Kangaroo Valley',
        capacity: 120,
        published: false,
        onlinePayment: true,
        pricing: file.pricing,
        maxAttendeesPerRegistration: 10,
        // Left out of the file: holds end after 7 days.
        unpaidHoldDays: 7,
        waitingList: { enabled: false, offerHours: 24, waiting: 0 },
        placesLeft: 120,
        deleted: false,
      },
    });
  });

  it('a slug already in use is refused and queues nothing more', async () => {
    const ctx = syncContext();
    const file = eventFile();
    await createEvent(ctx, file);
    await expect(createEvent(ctx, { ...file, title: 'Other' })).rejects.toMatchObject({ code: 'event_exists' });
    expect(await outboxFor(file.slug)).toHaveLength(1);
    expect((await getEventBySlug(tdb.db, file.slug))?.title).toBe('Family Camp');
  });

  it('update replaces the given fields, keeps absent optional ones, and queues one event.updated', async () => {
    const clock = new FixedClock(new Date('2026-11-22T00:00:00Z'));
    const ctx = syncContext(clock);
    const file = eventFile({ published: true });
    await createEvent(ctx, file);
    clock.advance(60_000);

    const { description: _d, location: _l, published: _p, ...rest } = fixtureJson('event-family-camp.json');
    const changed = parseEventFile({
      ...rest,
      slug: file.slug,
      title: 'Family Camp 2027',
      capacity: null,
      location: null,
      pricing: { tiers: [{ id: 'everyone', label: 'Everyone', price: 5000 }] },
    });
    const result = await updateEvent(ctx, changed);
    expect(result.change).toBe('updated');

    const stored = await getEventBySlug(tdb.db, file.slug);
    expect(stored).toMatchObject({
      title: 'Family Camp 2027',
      capacity: null,
      location: null,
      description: 'A weekend away for the whole church family.',
      published: true,
      pricing: { tiers: [{ id: 'everyone', label: 'Everyone', price: 5000 }] },
      updatedAt: clock.now(),
    });

    const rows = await outboxFor(file.slug);
    expect(rows.map((r) => r.type)).toEqual(['event.created', 'event.updated']);
    expect(rows[1]?.body).toMatchObject({
      id: result.deliveryId,
      type: 'event.updated',
      occurredAt: clock.now().toISOString(),
      event: { title: 'Family Camp 2027', capacity: null, location: null, published: true, pricing: { tiers: [{ id: 'everyone' }] } },
    });
  });

  it('update never changes the publish state: a "published" that differs is reported as ignored, and only publish and unpublish change it', async () => {
    // The office guide's round (docs/office.md, Events): create from a file saying "published": false, publish, then edit the same file and update.
    const ctx = syncContext();
    const file = eventFile({ published: false });
    await createEvent(ctx, file);
    await publishEvent(ctx, file.slug);
    const edited = await updateEvent(ctx, { ...file, title: 'Family Camp 2027' });
    expect(edited).toMatchObject({ change: 'updated', ignored: { published: false }, event: { title: 'Family Camp 2027', published: true } });
    expect(await getEventBySlug(tdb.db, file.slug)).toMatchObject({ title: 'Family Camp 2027', published: true });
    // A file that agrees, or says nothing, reports nothing ignored.
    expect((await updateEvent(ctx, { ...file, published: true })).ignored).toBeUndefined();
    const { published: _p, ...silent } = file;
    expect((await updateEvent(ctx, silent)).ignored).toBeUndefined();

    // Nor does an update publish a draft.
    const draft = eventFile({ published: false });
    await createEvent(ctx, draft);
    const publishing = await updateEvent(ctx, { ...draft, published: true });
    expect(publishing).toMatchObject({ ignored: { published: true }, event: { published: false } });
    expect((await getEventBySlug(tdb.db, draft.slug))?.published).toBe(false);
    expect((await outboxFor(draft.slug)).map((r) => r.type)).toEqual(['event.created', 'event.updated']);

    const rows = await outboxFor(file.slug);
    expect(rows.map((r) => r.type)).toEqual(['event.created', 'event.published', 'event.updated', 'event.updated', 'event.updated']);
    expect(rows[2]?.body).toMatchObject({ id: edited.deliveryId, type: 'event.updated', event: { title: 'Family Camp 2027', published: true } });
  });

  it('unpublish takes the event off the website with event.updated carrying published false; unpublishing a draft changes nothing', async () => {
    const ctx = syncContext();
    const file = eventFile({ published: true });
    await createEvent(ctx, file);
    const first = await unpublishEvent(ctx, file.slug);
    expect(first).toMatchObject({ change: 'unpublished', event: { published: false } });
    expect((await getEventBySlug(tdb.db, file.slug))?.published).toBe(false);
    expect(await unpublishEvent(ctx, file.slug)).toMatchObject({ change: 'unchanged', deliveryId: null });

    const rows = await outboxFor(file.slug);
    expect(rows.map((r) => r.type)).toEqual(['event.created', 'event.updated']);
    expect(rows[1]?.body).toMatchObject({ id: first.deliveryId, type: 'event.updated', event: { published: false } });
    await expect(unpublishEvent(ctx, 'no-such-event')).rejects.toBeInstanceOf(NotFoundError);
    await deleteEvent(ctx, file.slug);
    await expect(unpublishEvent(ctx, file.slug)).rejects.toMatchObject({ code: 'event_deleted' });
  });

  it('update or publish of an unknown slug is NotFound and queues nothing', async () => {
    const ctx = syncContext();
    await expect(updateEvent(ctx, eventFile({ slug: 'no-such-event' }))).rejects.toBeInstanceOf(NotFoundError);
    await expect(publishEvent(ctx, 'no-such-event')).rejects.toBeInstanceOf(NotFoundError);
    await expect(deleteEvent(ctx, 'no-such-event')).rejects.toBeInstanceOf(NotFoundError);
    expect(await outboxFor('no-such-event')).toHaveLength(0);
  });

  it('publish queues one event.published; publishing again changes nothing', async () => {
    const ctx = syncContext();
    const file = eventFile({ published: false });
    await createEvent(ctx, file);
    const first = await publishEvent(ctx, file.slug);
    expect(first.change).toBe('published');
    expect((await getEventBySlug(tdb.db, file.slug))?.published).toBe(true);
    const again = await publishEvent(ctx, file.slug);
    expect(again).toMatchObject({ change: 'unchanged', deliveryId: null });

    const rows = await outboxFor(file.slug);
    expect(rows.map((r) => r.type)).toEqual(['event.created', 'event.published']);
    expect(rows[1]?.body).toMatchObject({ id: first.deliveryId, type: 'event.published', event: { published: true, deleted: false } });
  });

  it('delete is soft, queues one event.deleted, hides the event, and deleting again succeeds without a new notification', async () => {
    const ctx = syncContext();
    const file = eventFile();
    const created = await createEvent(ctx, file);
    const deleted = await deleteEvent(ctx, file.slug);
    expect(deleted.change).toBe('deleted');

    const row = await tdb.db('events').where({ slug: file.slug }).first();
    expect(row.id).toBe(created.event.id);
    expect(row.deleted_at).toEqual(ctx.clock.now());
    expect(await getEventBySlug(tdb.db, file.slug)).toBeUndefined();
    expect((await listEvents(ctx)).map((e) => e.slug)).not.toContain(file.slug);
    expect((await listEvents(ctx, { includeDeleted: true })).map((e) => e.slug)).toContain(file.slug);

    expect(await deleteEvent(ctx, file.slug)).toMatchObject({ change: 'unchanged', deliveryId: null });
    await expect(publishEvent(ctx, file.slug)).rejects.toMatchObject({ code: 'event_deleted' });
    const rows = await outboxFor(file.slug);
    expect(rows.map((r) => r.type)).toEqual(['event.created', 'event.deleted']);
    expect(rows[1]?.body).toMatchObject({ id: deleted.deliveryId, type: 'event.deleted', event: { slug: file.slug, deleted: true } });
  });

  it('publish or update of a deleted event says it was deleted and its slug stays reserved, never to create it again', async () => {
    const ctx = syncContext();
    const file = eventFile();
    await createEvent(ctx, file);
    await deleteEvent(ctx, file.slug);
    for (const change of [() => publishEvent(ctx, file.slug), () => updateEvent(ctx, { ...file, title: 'Renamed' })]) {
      const error = await change().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AppError);
      const { code, message, suggestion, exitCode } = error as AppError;
      expect({ code, exitCode }).toEqual({ code: 'event_deleted', exitCode: 1 });
      expect(message).toContain('was deleted; deleted events cannot be changed');
      expect(suggestion).toContain('slug stays reserved');
      expect(`${message} ${suggestion}`).not.toContain('events create');
    }
    expect((await outboxFor(file.slug)).map((r) => r.type)).toEqual(['event.created', 'event.deleted']);
  });

  it('with website sync off, changes queue no notification', async () => {
    const ctx = createTestContext({ db: tdb.db });
    expect(ctx.config.websiteSync).toBeUndefined();
    const file = eventFile();
    const created = await createEvent(ctx, file);
    await updateEvent(ctx, { ...file, title: 'Renamed' });
    await publishEvent(ctx, file.slug);
    await deleteEvent(ctx, file.slug);
    expect(created.deliveryId).toBeNull();
    expect(await outboxFor(file.slug)).toHaveLength(0);
  });

  it('moving reminderAt re-arms a sent reminder; the same instant written differently does not', async () => {
    const ctx = syncContext();
    const file = eventFile({ reminderAt: '2027-03-10T09:00:00+11:00' });
    await createEvent(ctx, file);
    const markSent = () =>
      tdb.db('events').where({ slug: file.slug }).update({ reminder_sent_at: new Date('2027-03-09T22:00:05Z'), reminder_claimed_at: new Date('2027-03-09T22:00:00Z') });

    await markSent();
    await updateEvent(ctx, eventFile({ slug: file.slug, reminderAt: '2027-03-09T22:00:00Z' }));
    expect(await getEventBySlug(tdb.db, file.slug)).toMatchObject({ reminderSentAt: new Date('2027-03-09T22:00:05Z') });

    await updateEvent(ctx, eventFile({ slug: file.slug, reminderAt: '2027-03-11T09:00:00+11:00' }));
    expect(await getEventBySlug(tdb.db, file.slug)).toMatchObject({
      reminderAt: new Date('2027-03-10T22:00:00Z'),
      reminderSentAt: null,
      reminderClaimedAt: null,
    });

    await markSent();
    await updateEvent(ctx, eventFile({ slug: file.slug, reminderAt: null }));
    expect(await getEventBySlug(tdb.db, file.slug)).toMatchObject({ reminderAt: null, reminderSentAt: null });
  });

  it('update bringing the start before a stored, unsent reminder is refused naming it, instead of leaving a reminder that never goes out', async () => {
    const ctx = syncContext();
    const file = eventFile();
    await createEvent(ctx, file);
    const earlier = { startsAt: '2027-03-09T18:00:00+11:00', reminderAt: undefined };

    const refused = await updateEvent(ctx, eventFile({ slug: file.slug, ...earlier })).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(EventFileError);
    expect((refused as EventFileError).problems).toEqual([
      'reminderAt: before startsAt (the stored reminder is 2027-03-09T22:00:00.000Z; give a new reminderAt, or null for none)',
    ]);
    expect(await getEventBySlug(tdb.db, file.slug)).toMatchObject({ startsAt: new Date('2027-03-12T07:00:00Z') });

    // With a new reminder, or none, the move goes through; so does it once the reminder was sent.
    await updateEvent(ctx, eventFile({ slug: file.slug, ...earlier, reminderAt: '2027-03-08T09:00:00+11:00' }));
    expect(await getEventBySlug(tdb.db, file.slug)).toMatchObject({ startsAt: new Date('2027-03-09T07:00:00Z'), reminderAt: new Date('2027-03-07T22:00:00Z') });
    await tdb.db('events').where({ slug: file.slug }).update({ reminder_sent_at: new Date('2027-03-07T22:00:05Z') });
    await updateEvent(ctx, eventFile({ slug: file.slug, startsAt: '2027-03-07T18:00:00+11:00', reminderAt: undefined }));
    expect(await getEventBySlug(tdb.db, file.slug)).toMatchObject({ startsAt: new Date('2027-03-07T07:00:00Z') });
  });

  it("setting or shortening unpaidHoldDays records when, so holds made before get a day's notice; lengthening it does not", async () => {
    const clock = new FixedClock(new Date('2026-11-22T00:00:00Z'));
    const ctx = syncContext(clock);
    const file = eventFile({ unpaidHoldDays: null });
    await createEvent(ctx, file);
    const since = async () => (await tdb.db('events').where({ slug: file.slug }).first()).unpaid_hold_since as Date | null;
    expect(await since()).toBeNull();

    clock.set(new Date('2026-11-23T00:00:00Z'));
    await updateEvent(ctx, eventFile({ slug: file.slug, unpaidHoldDays: 14 }));
    expect(await since()).toEqual(new Date('2026-11-23T00:00:00Z'));
    clock.set(new Date('2026-11-24T00:00:00Z'));
    await updateEvent(ctx, eventFile({ slug: file.slug, unpaidHoldDays: 21 }));
    expect(await since()).toEqual(new Date('2026-11-23T00:00:00Z'));
    clock.set(new Date('2026-11-25T00:00:00Z'));
    await updateEvent(ctx, eventFile({ slug: file.slug, unpaidHoldDays: 7 }));
    expect(await since()).toEqual(new Date('2026-11-25T00:00:00Z'));
  });

  it('list orders events by start time', async () => {
    const ctx = syncContext();
    const later = eventFile({ startsAt: '2030-02-01T10:00:00+11:00' });
    const sooner = eventFile({ startsAt: '2030-01-01T10:00:00+11:00' });
    await createEvent(ctx, later);
    await createEvent(ctx, sooner);
    const slugs = (await listEvents(ctx)).map((e) => e.slug);
    expect(slugs.indexOf(sooner.slug)).toBeLessThan(slugs.indexOf(later.slug));
  });
});

describe('a ticket too cheap to pay for alone by card', () => {
  // AUD: the card provider's minimum charge is $0.50.
  const CARD_ENV = { PSP_SECRET_KEY: 'sk_test_x', PSP_WEBHOOK_SECRET: 'whsec_x' };
  const candle = (price: number) => ({
    tiers: [
      { id: 'adult', label: 'Adult', price: 12000 },
      { id: 'candle', label: 'Candle', price },
      { id: 'guest', label: 'Guest', price: 0 },
    ],
  });
  const warning = (amount: string, fee = '') =>
    `one "Candle" ticket alone comes to ${amount} by card${fee}, below the card provider's minimum of $0.50: ` +
    'a registration of just that ticket cannot be paid by card, and the member is asked to choose bank transfer';

  it('create and update of a card-payable event warn the office, naming the ticket, its card total and the minimum, and still save it', async () => {
    const ctx = createTestContext({ db: tdb.db, env: CARD_ENV });
    const file = eventFile({ passCardFee: false, pricing: candle(40) });
    const created = await createEvent(ctx, file);
    expect(created.change).toBe('created');
    expect(created.warnings).toEqual([warning('$0.40')]);

    // The card fee counts: $0.10 with the default fee (1.7% + 30) is $0.40; $0.20 with it is $0.50.
    expect((await updateEvent(ctx, eventFile({ slug: file.slug, passCardFee: true, pricing: candle(10) }))).warnings).toEqual([
      warning('$0.40', ' with the card fee'),
    ]);
    expect((await updateEvent(ctx, eventFile({ slug: file.slug, passCardFee: true, pricing: candle(20) }))).warnings).toEqual([]);
    // A discount counts too: 50% off $0.90 is $0.45. Keys left out (onlinePayment, passCardFee) keep their stored values.
    const { onlinePayment: _o, passCardFee: _p, ...rest } = eventFile({ slug: file.slug, pricing: { ...candle(90), discount: { percent: 50 } } });
    expect((await updateEvent(ctx, { ...rest, passCardFee: false })).warnings).toEqual([warning('$0.45')]);
    expect((await getEventBySlug(tdb.db, file.slug))?.pricing.tiers.map((tier) => tier.price)).toEqual([12000, 90, 0]);
  });

  it('says nothing when card payment is not possible for the event: onlinePayment off, or no card keys', async () => {
    const withCard = createTestContext({ db: tdb.db, env: CARD_ENV });
    expect((await createEvent(withCard, eventFile({ onlinePayment: false, pricing: candle(40) }))).warnings).toEqual([]);
    const withoutCard = createTestContext({ db: tdb.db });
    expect((await createEvent(withoutCard, eventFile({ onlinePayment: true, pricing: candle(40) }))).warnings).toEqual([]);
  });
});

describe('an event that ends', () => {
  it('endsAt is optional and must come after startsAt, in the church zone like the other times', () => {
    expect(eventFile().endsAt).toBeUndefined();
    expect(eventFile({ endsAt: '2027-03-14T15:00:00+11:00' }).endsAt).toEqual(new Date('2027-03-14T04:00:00Z'));
    expect(problemsOf(() => eventFile({ endsAt: '2027-03-12T18:00:00+11:00' }))).toEqual([expect.stringMatching(/^endsAt: after startsAt/)]);
    expect(() => parseEventFile({ ...fixtureJson('event-family-camp.json'), endsAt: '2027-04-14T15:00:00+11:00' }, { timeZone: 'Australia/Sydney' })).toThrow(
      /endsAt/,
    );
  });

  it('is stored, sent to the website, kept by an update that leaves it out and cleared by null', async () => {
    const ctx = syncContext();
    const file = eventFile({ endsAt: '2027-03-14T15:00:00+11:00' });
    await createEvent(ctx, file);
    expect(await getEventBySlug(tdb.db, file.slug)).toMatchObject({ endsAt: new Date('2027-03-14T04:00:00Z') });
    expect((await outboxFor(file.slug))[0]?.body.event).toMatchObject({ endsAt: '2027-03-14T04:00:00.000Z' });

    await updateEvent(ctx, eventFile({ slug: file.slug, title: 'Family Camp 2027' }));
    expect(await getEventBySlug(tdb.db, file.slug)).toMatchObject({ title: 'Family Camp 2027', endsAt: new Date('2027-03-14T04:00:00Z') });
    await updateEvent(ctx, eventFile({ slug: file.slug, endsAt: null }));
    expect(await getEventBySlug(tdb.db, file.slug)).toMatchObject({ endsAt: null });
    expect((await outboxFor(file.slug)).at(-1)?.body.event).toMatchObject({ endsAt: null });
  });

  it('an update moving the start past the stored end is refused naming endsAt, instead of failing on the database', async () => {
    const ctx = syncContext();
    const file = eventFile({ endsAt: '2027-03-14T15:00:00+11:00' });
    await createEvent(ctx, file);
    const later = { startsAt: '2027-03-20T18:00:00+11:00', reminderAt: '2027-03-18T09:00:00+11:00' };

    const refused = await updateEvent(ctx, eventFile({ slug: file.slug, ...later })).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(EventFileError);
    expect((refused as EventFileError).problems).toEqual([
      'endsAt: after startsAt (the stored end is 2027-03-14T04:00:00.000Z; give a new endsAt, or null for none)',
    ]);
    await updateEvent(ctx, eventFile({ slug: file.slug, ...later, endsAt: '2027-03-22T15:00:00+11:00' }));
    expect(await getEventBySlug(tdb.db, file.slug)).toMatchObject({ startsAt: new Date('2027-03-20T07:00:00Z'), endsAt: new Date('2027-03-22T04:00:00Z') });
  });
});

describe('changesCloseAt, until when families may change or cancel on their manage page', () => {
  it('a value after startsAt is refused naming the key (a typo once let families cancel after the event); at the start or before is fine', () => {
    expect(problemsOf(() => eventFile({ changesCloseAt: '2027-03-13T18:00:00+11:00' }))).toEqual([
      'changesCloseAt: at or before startsAt (families cannot change or cancel a registration once the event has started)',
    ]);
    expect(eventFile({ changesCloseAt: '2027-03-12T18:00:00+11:00' }).changesCloseAt).toEqual(new Date('2027-03-12T07:00:00Z'));
    expect(eventFile({ changesCloseAt: '2027-03-05T17:00:00+11:00' }).changesCloseAt).toEqual(new Date('2027-03-05T06:00:00Z'));
  });

  it('an update moving the start before the stored changesCloseAt is refused naming it', async () => {
    const ctx = syncContext();
    const file = eventFile({ changesCloseAt: '2027-03-10T17:00:00+11:00' });
    await createEvent(ctx, file);
    const earlier = { startsAt: '2027-03-08T18:00:00+11:00', reminderAt: '2027-03-06T09:00:00+11:00' };
    const refused = await updateEvent(ctx, eventFile({ slug: file.slug, ...earlier })).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(EventFileError);
    expect((refused as EventFileError).problems).toEqual([
      'changesCloseAt: at or before startsAt (the stored one is 2027-03-10T06:00:00.000Z; give a new changesCloseAt, or null for the start)',
    ]);
    expect(await getEventBySlug(tdb.db, file.slug)).toMatchObject({ startsAt: new Date('2027-03-12T07:00:00Z') });
    await updateEvent(ctx, eventFile({ slug: file.slug, ...earlier, changesCloseAt: null }));
    expect(await getEventBySlug(tdb.db, file.slug)).toMatchObject({ startsAt: new Date('2027-03-08T07:00:00Z'), changesCloseAt: null });
  });
});

describe('deleting an event that still has registrations', () => {
  async function register(eventId: string, status: 'PENDING' | 'PAID' | 'CANCELLED', attendees: number) {
    const { cipher } = createTestContext({ db: tdb.db });
    return insertRegistration(tdb.db, cipher, eventId, { status, attendee_count: attendees });
  }

  it('is refused while it has PENDING or PAID registrations, naming how many, that their registrants are not told, and what to do; nothing changes', async () => {
    const ctx = syncContext();
    const file = eventFile({ published: true });
    const { event } = await createEvent(ctx, file);
    await register(event.id, 'PENDING', 2);
    await register(event.id, 'PAID', 1);
    await register(event.id, 'CANCELLED', 4);

    const error = await deleteEvent(ctx, file.slug).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AppError);
    const { code, exitCode, message, suggestion } = error as AppError;
    expect({ code, exitCode }).toEqual({ code: 'event_has_registrations', exitCode: 1 });
    expect(message).toBe(
      `event "${file.slug}" has 2 live registrations (1 PENDING, 1 PAID; 3 seats): deleting the event would tell none of their registrants, ` +
        'and cannot be undone; nothing was deleted',
    );
    expect(suggestion).toContain(`eventops registrations list --event ${file.slug}`);
    expect(suggestion).toContain('eventops registrations cancel REFERENCE --notify');
    expect(suggestion).toContain(`eventops events delete ${file.slug} --force`);
    expect(await getEventBySlug(tdb.db, file.slug)).toMatchObject({ deletedAt: null, published: true });
    expect((await outboxFor(file.slug)).map((r) => r.type)).toEqual(['event.created']);
  });

  it('with force it is deleted and reports the registrations left, which stay as they were', async () => {
    const ctx = syncContext();
    const file = eventFile();
    const { event } = await createEvent(ctx, file);
    const pending = await register(event.id, 'PENDING', 2);

    const deleted = await deleteEvent(ctx, file.slug, { force: true });
    expect(deleted).toMatchObject({ change: 'deleted', left: { pending: 1, paid: 0, seats: 2 } });
    expect((await tdb.db('events').where({ slug: file.slug }).first()).deleted_at).toEqual(ctx.clock.now());
    expect((await tdb.db('registrations').where({ id: pending.id }).first()).status).toBe('PENDING');
    expect((await outboxFor(file.slug)).map((r) => r.type)).toEqual(['event.created', 'event.deleted']);
  });

  it('cancelled registrations alone do not stop it, and nothing is reported left', async () => {
    const ctx = syncContext();
    const file = eventFile();
    const { event } = await createEvent(ctx, file);
    await register(event.id, 'CANCELLED', 3);
    const deleted = await deleteEvent(ctx, file.slug);
    expect(deleted.change).toBe('deleted');
    expect(deleted.left).toBeUndefined();
  });
});

describe('a start in the past', () => {
  const PAST = 'the start, Sunday 1 November 2026 at 7:00 pm AEDT, is in the past: the public form is closed already';

  it('create and update warn, naming the start in the church zone, and still save the event', async () => {
    // The test clock is 22 November 2026.
    const ctx = syncContext();
    const file = eventFile({ startsAt: '2026-11-01T19:00:00+11:00', reminderAt: null, published: true });
    const created = await createEvent(ctx, file);
    expect(created.warnings).toEqual([expect.stringContaining(PAST)]);
    expect(created.warnings[0]).toContain('no event reminder will be sent');
    expect(await getEventBySlug(tdb.db, file.slug)).toMatchObject({ startsAt: new Date('2026-11-01T08:00:00Z'), published: true });

    expect((await updateEvent(ctx, { ...file, title: 'Renamed' })).warnings).toEqual([expect.stringContaining(PAST)]);
    const moved = await updateEvent(ctx, eventFile({ slug: file.slug, startsAt: '2027-03-12T18:00:00+11:00' }));
    expect(moved.warnings).toEqual([]);
  });
});

describe('a capacity below the seats already taken', () => {
  it('update warns naming the seats taken and the new capacity, saves it, and cancels nobody', async () => {
    const ctx = syncContext();
    const file = eventFile({ capacity: 10 });
    const { event } = await createEvent(ctx, file);
    const { cipher } = ctx;
    const held = [
      await insertRegistration(tdb.db, cipher, event.id, { status: 'PENDING', attendee_count: 2 }),
      await insertRegistration(tdb.db, cipher, event.id, { status: 'PAID', attendee_count: 2 }),
    ];
    await insertRegistration(tdb.db, cipher, event.id, { status: 'CANCELLED', attendee_count: 5 });

    const lowered = await updateEvent(ctx, { ...file, capacity: 2 });
    expect(lowered.warnings).toEqual([
      'capacity 2 is below the 4 seats already taken by PENDING and PAID registrations: nobody was cancelled, ' +
        'and the event shows as full until fewer than 2 seats are taken',
    ]);
    expect((await getEventBySlug(tdb.db, file.slug))?.capacity).toBe(2);
    const statuses = await tdb.db('registrations').whereIn('id', held.map((r) => r.id)).orderBy('status').pluck('status');
    expect(statuses).toEqual(['PAID', 'PENDING']);

    // Said when the capacity is set: the same capacity again, or one the seats fit, says nothing.
    expect((await updateEvent(ctx, { ...file, capacity: 2, title: 'Renamed' })).warnings).toEqual([]);
    expect((await updateEvent(ctx, { ...file, capacity: 4 })).warnings).toEqual([]);
    expect((await updateEvent(ctx, { ...file, capacity: 0 })).warnings).toEqual([
      'capacity 0 is below the 4 seats already taken by PENDING and PAID registrations: nobody was cancelled, and the event shows as full',
    ]);
  });
});

describe('a time written in UTC', () => {
  it('is taken as written, and warned about where the church zone is not at UTC then, with the offset for the wall clock written', () => {
    const base = { ...fixtureJson('event-family-camp.json'), startsAt: '2027-02-05T19:00:00Z', reminderAt: '2027-02-04T09:00:00+11:00' };
    expect(parseEventFile(base, { timeZone: 'Australia/Sydney' }).startsAt.toISOString()).toBe('2027-02-05T19:00:00.000Z');
    expect(utcTimeWarnings(base, 'Australia/Sydney')).toEqual([
      'startsAt: 2027-02-05T19:00:00Z is written in UTC (Z), which is 2027-02-06 06:00 in Australia/Sydney; ' +
        'if 19:00 there was meant, write 2027-02-05T19:00:00+11:00 and run `eventops events update`',
    ]);
    expect(utcTimeWarnings(base, 'UTC')).toEqual([]);
    expect(utcTimeWarnings(base, 'Europe/London')).toEqual([]);
    expect(utcTimeWarnings({ ...base, startsAt: '2027-02-05T19:00:00+11:00' }, 'Australia/Sydney')).toEqual([]);
  });
});
