import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOSTILE_MARKER, rawPost, sendHostileWebhooks, type HostileWebhookReport } from '../../soak/cases/hostile-input.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { completedSession, signedDelivery, stageNewRegistrationCheckout } from '../support/webhook-events.js';
import { insertEvent } from '../support/factories.js';

const SEED = 7_000_001;
let harness: PaymentsHarness;
let report: HostileWebhookReport;

beforeAll(async () => {
  harness = await startPaymentsHarness({ captureLogs: true });
  report = await sendHostileWebhooks(harness, 1000, SEED);
}, 90_000);
afterAll(async () => {
  await harness.close();
});

describe('1,000 hostile webhook requests against the real server', () => {
  it('covers every kind of forgery: no, wrong, stale and malformed signatures, tampered and oversized bodies, wrong content types', () => {
    expect(report.sent).toBe(1000);
    expect(Object.keys(report.byKind).sort()).toEqual(
      ['huge_body', 'huge_body_chunked', 'malformed_header', 'no_signature', 'stale_timestamp', 'tampered_body', 'wrong_content_type', 'wrong_secret'].sort(),
    );
  });

  it('answers each with 400 (signature) or 413 (over 1 MB), always with the JSON error body', () => {
    expect(report.unexpected).toEqual([]);
    expect(report.badBodies).toBe(0);
  });

  it('writes no row: no processed event, registration, alert, queued mail or error-log row, and the target checkout stays OPEN', () => {
    expect(report.rowsWritten).toBe(0);
  });

  it('logs no part of any body, while the request log lines themselves were captured', () => {
    expect(harness.logs.lines.length).toBeGreaterThan(1000);
    expect(report.leakedLogLines).toEqual([]);
    expect(harness.logs.text()).not.toContain('stripe-signature');
  });
});

describe('what a correctly signed delivery needs', () => {
  it('the signature alone decides: the same signed event is handled (200) whatever Content-Type it is labelled with', async () => {
    // Documented behaviour: the route keeps raw bytes for every content type, because the signature is over them.
    const event = await insertEvent(harness.tdb.db, { online_payment: true });
    const staged = await stageNewRegistrationCheckout(harness.ctx, event);
    const delivery = signedDelivery('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount }));
    const answer = await rawPost(`${harness.server.url}/api/stripe/webhook`, {
      headers: { 'content-type': 'text/plain', 'stripe-signature': delivery.signature },
      body: Buffer.from(delivery.body),
      chunked: false,
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ outcome: 'completed' });
    expect(harness.logs.text()).not.toContain(HOSTILE_MARKER);
  });
});
