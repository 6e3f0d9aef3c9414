import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEventFile } from '../../src/office/event-file.js';
import { createEvent, getEventBySlug, updateEvent } from '../../src/office/events.js';
import * as unpaidSeatsPerClient from '../../migrations/20261201000100_unpaid_seats_per_client.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent } from '../support/factories.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const file = (slug: string, extra: Record<string, unknown> = {}) => ({
  slug,
  title: 'Family Camp',
  startsAt: '2027-03-12T18:00:00+11:00',
  capacity: 120,
  pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 12000 }] },
  ...extra,
});

describe('unpaidHoldDays: holds end after a week unless the event file says otherwise', () => {
  it('create without the key: 7 days; an explicit null: until the event; a number: that many days', async () => {
    const ctx = createTestContext({ db: tdb.db });
    expect((await createEvent(ctx, parseEventFile(file('absent-hold')))).event.unpaidHoldDays).toBe(7);
    expect((await createEvent(ctx, parseEventFile(file('null-hold', { unpaidHoldDays: null })))).event.unpaidHoldDays).toBeNull();
    expect((await createEvent(ctx, parseEventFile(file('two-week-hold', { unpaidHoldDays: 14 })))).event.unpaidHoldDays).toBe(14);
    // Stored, not only answered.
    expect((await tdb.db('events').where({ slug: 'absent-hold' }).first()).unpaid_hold_days).toBe(7);
  });

  it('update without the key keeps what the event has, an explicit null included; null written clears it', async () => {
    const ctx = createTestContext({ db: tdb.db });
    await createEvent(ctx, parseEventFile(file('kept-null', { unpaidHoldDays: null })));
    expect((await updateEvent(ctx, parseEventFile(file('kept-null', { title: 'Renamed' })))).event.unpaidHoldDays).toBeNull();
    await createEvent(ctx, parseEventFile(file('kept-seven')));
    expect((await updateEvent(ctx, parseEventFile(file('kept-seven', { title: 'Renamed' })))).event.unpaidHoldDays).toBe(7);
    expect((await updateEvent(ctx, parseEventFile(file('kept-seven', { unpaidHoldDays: null })))).event.unpaidHoldDays).toBeNull();
  });
});

describe('maxUnpaidSeatsPerClient in the event file', () => {
  it('defaults to 30; the file sets it; update without it keeps it; it is validated like the other keys', async () => {
    const ctx = createTestContext({ db: tdb.db });
    expect((await createEvent(ctx, parseEventFile(file('cap-default')))).event.maxUnpaidSeatsPerClient).toBe(30);
    expect((await createEvent(ctx, parseEventFile(file('cap-wifi', { maxUnpaidSeatsPerClient: 80 })))).event.maxUnpaidSeatsPerClient).toBe(80);
    expect((await updateEvent(ctx, parseEventFile(file('cap-wifi', { title: 'Renamed' })))).event.maxUnpaidSeatsPerClient).toBe(80);
    expect((await updateEvent(ctx, parseEventFile(file('cap-default', { maxUnpaidSeatsPerClient: 120 })))).event.maxUnpaidSeatsPerClient).toBe(120);
    expect((await tdb.db('events').where({ slug: 'cap-default' }).first()).max_unpaid_seats_per_client).toBe(120);

    expect(() => parseEventFile(file('bad', { maxUnpaidSeatsPerClient: 0 }))).toThrow(/maxUnpaidSeatsPerClient: at least 1/);
    expect(() => parseEventFile(file('bad', { maxUnpaidSeatsPerClient: 2.5 }))).toThrow(/maxUnpaidSeatsPerClient: a whole number of places/);
    expect(() => parseEventFile(file('bad', { maxUnpaidSeatsPerClient: '30' }))).toThrow(/maxUnpaidSeatsPerClient/);
    expect(() => parseEventFile(file('bad', { maxUnpaidSeatsPerClient: null }))).toThrow(/maxUnpaidSeatsPerClient/);
  });
});

describe('the migration adding the cap', () => {
  it("leaves existing events' hold as it was and gives them the default cap; down and up again round-trip", async () => {
    const untilEvent = await insertEvent(tdb.db, { unpaid_hold_days: null });
    const threeDays = await insertEvent(tdb.db, { unpaid_hold_days: 3 });
    await unpaidSeatsPerClient.down(tdb.db);
    await unpaidSeatsPerClient.up(tdb.db);
    expect(await getEventBySlug(tdb.db, untilEvent.slug)).toMatchObject({ unpaidHoldDays: null, maxUnpaidSeatsPerClient: 30 });
    expect(await getEventBySlug(tdb.db, threeDays.slug)).toMatchObject({ unpaidHoldDays: 3, maxUnpaidSeatsPerClient: 30 });
  });
});
