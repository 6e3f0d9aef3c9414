import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventFileError, parseEventFile } from '../../src/office/event-file.js';
import { createEvent, getEventBySlug, updateEvent } from '../../src/office/events.js';
import { FixedClock } from '../../src/clock.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures');
const camp = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'event-family-camp.json'), 'utf8')) as Record<string, unknown>;

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

function problems(input: Record<string, unknown>): string[] {
  try {
    parseEventFile(input);
    return [];
  } catch (error) {
    return error instanceof EventFileError ? error.problems : [String(error)];
  }
}

describe('the event file\'s "waitingList"', () => {
  it('is off by default; create and update take it; offerHours keeps its stored value when the file leaves it out', async () => {
    const ctx = createTestContext({ db: tdb.db, clock: new FixedClock(new Date('2026-11-22T00:00:00Z')) });
    await createEvent(ctx, parseEventFile({ ...camp, slug: 'camp-off' }));
    expect((await getEventBySlug(tdb.db, 'camp-off'))?.waitingList).toEqual({ enabled: false, offerHours: 24 });

    await createEvent(ctx, parseEventFile({ ...camp, slug: 'camp-on', waitingList: { enabled: true, offerHours: 48 } }));
    expect((await getEventBySlug(tdb.db, 'camp-on'))?.waitingList).toEqual({ enabled: true, offerHours: 48 });
    await updateEvent(ctx, parseEventFile({ ...camp, slug: 'camp-on', waitingList: { enabled: false } }));
    expect((await getEventBySlug(tdb.db, 'camp-on'))?.waitingList).toEqual({ enabled: false, offerHours: 48 });
  });

  it('offerHours is a whole number from 1 to 168, and a misspelt key is refused by name', () => {
    expect(problems({ ...camp, waitingList: { enabled: true, offerHours: 0 } })).toEqual(['waitingList.offerHours: at least 1']);
    expect(problems({ ...camp, waitingList: { enabled: true, offerHours: 169 } })).toEqual(['waitingList.offerHours: at most 168']);
    expect(problems({ ...camp, waitingList: { enabled: true, offerHours: 1.5 } })).toEqual(['waitingList.offerHours: a whole number of hours']);
    expect(problems({ ...camp, waitingList: { enabled: true, offerHour: 12 } })).toEqual(['unknown key "waitingList.offerHour"']);
    expect(problems({ ...camp, waitingList: { enabled: true, offerHours: 168 } })).toEqual([]);
  });
});
