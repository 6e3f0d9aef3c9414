import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { parseEventFileText } from '../../src/office/event-file.js';
import { createEvent, publishEvent } from '../../src/office/events.js';
import { memberDateTime } from '../../src/time-format.js';
import { ROOT } from '../support/cli.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testConfig } from '../support/env.js';
import { startTestServer } from '../support/http.js';

/** The event file the README's "Your first event" walks through, as a newcomer runs it: the default configuration. */
const EXAMPLE = 'docs/examples/first-event.json';
const text = fs.readFileSync(path.join(ROOT, EXAMPLE), 'utf8');
const config = testConfig({ APP_TIMEZONE: undefined, APP_CURRENCY: undefined, APP_LOCALE: undefined });
const DAY = 24 * 60 * 60_000;

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

describe("the README's first event", () => {
  it("is a valid event file in the default time zone, with a question, an age-limited children's tier and a waiting list", () => {
    const file = parseEventFileText(text, { timeZone: config.regional.timeZone });
    expect(file.questions?.length).toBeGreaterThan(0);
    expect(file.pricing.tiers.some((tier) => tier.child === true && (tier.minAge !== undefined || tier.maxAge !== undefined))).toBe(true);
    expect(file.waitingList?.enabled).toBe(true);
  });

  it('is shown in the README exactly as the file holds it, and the README quotes the start `events create` prints for it', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Your first event'));
    expect(/```json\n([\s\S]*?)```/.exec(section)?.[1]).toBe(text);
    expect(section).toContain(`events create ${EXAMPLE}`);
    const starts = `starts: ${memberDateTime(config.regional)(parseEventFileText(text).startsAt)} (${config.regional.timeZone})`;
    expect(section.replace(/\s+/g, ' ')).toContain(starts);
  });

  it('creates without a warning a month before it starts, publishes, and its page asks the question and offers the tickets', async () => {
    const file = parseEventFileText(text, { timeZone: config.regional.timeZone });
    const ctx = createTestContext({ db: tdb.db, config, clock: new FixedClock(new Date(file.startsAt.getTime() - 30 * DAY)) });
    expect((await createEvent(ctx, file)).warnings).toEqual([]);
    expect((await publishEvent(ctx, file.slug)).change).toBe('published');
    const server = await startTestServer(ctx);
    try {
      const page = await fetch(`${server.url}/events/${file.slug}`);
      expect(page.status).toBe(200);
      const html = await page.text();
      for (const question of file.questions ?? []) expect(html).toContain(question.label);
      for (const tier of file.pricing.tiers) expect(html).toContain(tier.label);
    } finally {
      await server.close();
    }
  });
});
