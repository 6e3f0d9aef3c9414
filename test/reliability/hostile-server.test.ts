import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAILED_BEARERS_PER_MINUTE } from '../../src/http/cron-routes.js';
import { sendControlCharacters, sendWrongBearers, trickleRequest } from '../../soak/cases/hostile-input.js';
import { testEnv } from '../support/env.js';
import { insertEvent } from '../support/factories.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';

let harness: PaymentsHarness;
beforeAll(async () => {
  // TRUST_PROXY: each registration post comes from its own X-Forwarded-For address, so the form's rate limit does not hide answers.
  harness = await startPaymentsHarness({ env: { TRUST_PROXY: 'true' } });
}, 60_000);
afterAll(async () => {
  await harness.close();
});

describe('slow clients', () => {
  it('a body trickled one byte every 20 s is closed within 30 s, and so are headers that never finish', async () => {
    const event = await insertEvent(harness.tdb.db);
    const path = `/events/${event.slug}/register`;
    const [slowBody, slowHeaders] = await Promise.all([
      trickleRequest(harness.server.url, { path, intervalMs: 20_000, giveUpMs: 45_000 }),
      trickleRequest(harness.server.url, { path, intervalMs: 5_000, giveUpMs: 45_000, headersOnly: true }),
    ]);
    expect(slowBody.closedAfterMs).toBeDefined();
    expect(slowBody.closedAfterMs).toBeLessThan(30_000);
    expect(slowBody.statusLine).toBe('HTTP/1.1 408 Request Timeout');
    expect(slowHeaders.closedAfterMs).toBeLessThan(30_000);
    expect(await harness.tdb.db('registrations').where({ event_id: event.id })).toEqual([]);
  }, 60_000);
});

describe('wrong cron bearers', () => {
  it(`are answered 401 up to ${FAILED_BEARERS_PER_MINUTE} a minute per client address, then 429 with Retry-After; the right bearer still runs the job`, async () => {
    const report = await sendWrongBearers(harness.server.url, {
      count: 40,
      localAddress: '127.0.0.9',
      limit: FAILED_BEARERS_PER_MINUTE,
      rightSecret: testEnv().CRON_SECRET as string,
    });
    expect(report.problems).toEqual([]);
    expect(report.statuses.filter((s) => s === 401)).toHaveLength(FAILED_BEARERS_PER_MINUTE);
    expect(report.rightBearerStatus).toBe(200);
  });
});

describe('control characters in public fields', () => {
  it('are refused with 400 naming the field, in every field, as JSON and as the form; nothing reaches the error log', async () => {
    const report = await sendControlCharacters(harness);
    expect(report.sent).toBe(96);
    expect(report.problems).toEqual([]);
    expect(report.registrationsCreated).toBe(0);
    expect(report.loggedRows).toBe(0);
    expect(await harness.tdb.db('error_logs').count({ n: '*' }).first()).toEqual({ n: 0 });
  });
});
