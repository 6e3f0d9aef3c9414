import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getEventBySlug } from '../../src/office/events.js';
import type { FixedClock } from '../../src/clock.js';
import type { AppContext } from '../../src/context.js';
import { NOT_FINISHED_NOTICE, NOTHING_CHARGED_NOTICE } from '../../src/http/cancelled-checkout.js';
import { startEventCheckout } from '../../src/payments/checkout.js';
import type { TestDatabase } from '../support/db.js';
import type { FakeProvider } from '../support/fake-provider.js';
import { insertCheckoutSession, insertEvent } from '../support/factories.js';
import type { TestServer } from '../support/http.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';

// Rule: the event page a payer returns to from the provider's page says "nothing was charged" only for a
// checkout the provider reports (or has confirmed) unpaid and not complete; otherwise that the payment was
// not finished. The query string alone proves nothing.

const T0 = new Date('2026-11-22T00:00:00Z');
let harness: PaymentsHarness;
let tdb: TestDatabase;
let ctx: AppContext & { clock: FixedClock };
let fake: FakeProvider;
let server: TestServer;

beforeAll(async () => {
  harness = await startPaymentsHarness({ now: T0 });
  ({ tdb, ctx, provider: fake, server } = harness);
});
afterAll(() => harness.close());

const html = (text: string) => text.replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&#x27;', "'");

async function getPage(path: string): Promise<{ status: number; body: string; headers: Headers }> {
  const response = await fetch(`${server.url}${path}`);
  return { status: response.status, body: html(await response.text()), headers: response.headers };
}

/** A card checkout for a new registration, opened at the provider; returns the cancel address the provider was given. */
async function openedCheckout(minute: number) {
  ctx.clock.set(new Date(T0.getTime() + minute * 60_000));
  const row = await insertEvent(tdb.db, { online_payment: true });
  const event = (await getEventBySlug(tdb.db, row.slug))!;
  const started = await startEventCheckout(ctx, {
    event,
    contact: { name: 'Pat Payer', email: 'pat.payer@example.org' },
    attendees: [{ name: 'Pat Payer', tier: 'adult' }],
    family: false,
  });
  const session = (await tdb.db('checkout_sessions').where({ id: started.checkoutId }).first()).provider_session_id as string;
  const create = fake.sessionCreateCalls().find((call) => (call.body.metadata as Record<string, string>).eventops_checkout_id === started.checkoutId);
  const cancelUrl = new URL(String(create?.body.cancel_url));
  return { event, checkoutId: started.checkoutId, session, cancelPath: `${cancelUrl.pathname}${cancelUrl.search}` };
}

const sessionReads = (session: string) => fake.requests.filter((r) => r.authorized && r.method === 'GET' && r.path === `/v1/checkout/sessions/${session}`).length;

describe('the event page after the payer leaves the provider\'s page', () => {
  it('the cancel address names the checkout, and a session the provider reports unpaid and open says nothing was charged', async () => {
    const { event, checkoutId, session, cancelPath } = await openedCheckout(0);
    expect(cancelPath).toBe(`/events/${event.slug}?checkout=cancelled&ref=${checkoutId}`);

    const page = await getPage(cancelPath);

    expect(page.status).toBe(200);
    expect(page.body).toContain(NOTHING_CHARGED_NOTICE);
    expect(sessionReads(session)).toBe(1);
    expect(page.headers.get('cache-control')).toBe('no-store');
  });

  it('a session paid at the provider says the payment was not finished, never that nothing was charged', async () => {
    const { session, cancelPath } = await openedCheckout(2);
    fake.completeSession(session);

    const page = await getPage(cancelPath);

    expect(page.body).toContain(NOT_FINISHED_NOTICE);
    expect(page.body).not.toContain('nothing was charged');
  });

  it('without a checkout, with an unknown one, with one of another event, or with the provider out of reach, the page says only that the payment was not finished', async () => {
    const { event, checkoutId, session, cancelPath } = await openedCheckout(4);
    const other = await insertEvent(tdb.db, { online_payment: true });
    const paths = [
      `/events/${event.slug}?checkout=cancelled`,
      `/events/${event.slug}?checkout=cancelled&ref=not-a-checkout`,
      `/events/${event.slug}?checkout=cancelled&ref=00000000-0000-4000-8000-000000000000`,
      `/events/${other.slug}?checkout=cancelled&ref=${checkoutId}`,
    ];
    for (const path of paths) {
      const page = await getPage(path);
      expect(page.status).toBe(200);
      expect(page.body).toContain(NOT_FINISHED_NOTICE);
      expect(page.body).not.toContain('nothing was charged');
    }
    fake.failPath(`/v1/checkout/sessions/${session}`, 503);
    try {
      expect((await getPage(cancelPath)).body).toContain(NOT_FINISHED_NOTICE);
    } finally {
      fake.failPath(`/v1/checkout/sessions/${session}`, undefined);
    }
  });

  it('a checkout already confirmed unpaid says nothing was charged from our records, without asking the provider', async () => {
    ctx.clock.set(new Date(T0.getTime() + 6 * 60_000));
    const event = await insertEvent(tdb.db, { online_payment: true });
    const confirmed = await insertCheckoutSession(tdb.db, ctx.cipher, event.id, {
      status: 'EXPIRED',
      payload_enc: null,
      scrubbed_at: T0,
      unpaid_confirmed_at: T0,
    });
    const before = fake.requests.length;

    const page = await getPage(`/events/${event.slug}?checkout=cancelled&ref=${confirmed.id}`);

    expect(page.body).toContain(NOTHING_CHARGED_NOTICE);
    expect(fake.requests.length).toBe(before);
  });

  it('returns from the provider are limited per client (10 a minute); the plain event page is not', async () => {
    const { event, cancelPath } = await openedCheckout(8);
    const statuses: number[] = [];
    for (let i = 0; i < 11; i += 1) statuses.push((await getPage(cancelPath)).status);
    expect(statuses.slice(0, 10).every((status) => status === 200)).toBe(true);
    expect(statuses[10]).toBe(429);
    for (let i = 0; i < 12; i += 1) expect((await getPage(`/events/${event.slug}`)).status).toBe(200);
  });
});
