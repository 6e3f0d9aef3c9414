import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProviderClient, PROVIDER_API_VERSION } from '../../src/payments/provider.js';
import { testConfig } from '../support/env.js';
import { parseProviderForm, startFakeProvider, type FakeProvider } from '../support/fake-provider.js';

const WEBHOOK_SECRET = 'whsec_test_fake_provider_signing_secret';

interface Received {
  body: string;
  signature: string | undefined;
}

/** A webhook endpoint that keeps each delivery's raw bytes and signature header. */
async function startWebhookSink(): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ body: Buffer.concat(chunks).toString('utf8'), signature: req.headers['stripe-signature'] as string | undefined });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"received":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/stripe/webhook`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let fake: FakeProvider;
let sink: Awaited<ReturnType<typeof startWebhookSink>>;
beforeAll(async () => {
  sink = await startWebhookSink();
  fake = await startFakeProvider({ webhookSecret: WEBHOOK_SECRET, webhookUrl: sink.url });
});
afterAll(async () => {
  await fake.close();
  await sink.close();
});

async function client() {
  return createProviderClient(testConfig(fake.configEnv()));
}

async function createSession(idempotencyKey: string, amounts: number[] = [12000, 6000, 312]) {
  const provider = await client();
  return provider.checkout.sessions.create(
    {
      mode: 'payment',
      currency: 'aud',
      line_items: amounts.map((amount, i) => ({
        quantity: 1,
        price_data: { currency: 'aud', unit_amount: amount, product_data: { name: `Line ${i + 1}` } },
      })),
      success_url: 'https://events.example.org/events/camp/success?session_id={CHECKOUT_SESSION_ID}',
      cancel_url: 'https://events.example.org/events/camp?checkout=cancelled',
      customer_email: 'payer@example.org',
      client_reference_id: 'staging-1',
      metadata: { eventops_checkout_id: 'staging-1' },
      payment_intent_data: { metadata: { eventops_checkout_id: 'staging-1' } },
    },
    { idempotencyKey },
  );
}

describe('fake provider', () => {
  it('parses nested form keys the way the provider does', () => {
    const parsed = parseProviderForm(
      'mode=payment&line_items[0][price_data][unit_amount]=100&line_items[1][quantity]=1&metadata[a]=x%20y&line_items%5B0%5D%5Bquantity%5D=2',
    );
    expect(parsed).toEqual({
      mode: 'payment',
      line_items: [{ price_data: { unit_amount: '100' }, quantity: '2' }, { quantity: '1' }],
      metadata: { a: 'x y' },
    });
  });

  it('computes amount_total from the line items and answers a checkout.session shaped like the published one', async () => {
    const session = await createSession('k-amount');
    expect(session).toMatchObject({
      object: 'checkout.session',
      amount_total: 18312,
      amount_subtotal: 18312,
      currency: 'aud',
      status: 'open',
      payment_status: 'unpaid',
      payment_intent: null,
      mode: 'payment',
      client_reference_id: 'staging-1',
      customer_email: 'payer@example.org',
      metadata: { eventops_checkout_id: 'staging-1' },
    });
    expect(session.id).toMatch(/^cs_test_/);
    expect(session.url).toBe(`${fake.apiBase}/pay/${session.id}`);
    const request = fake.requests.find((r) => r.idempotencyKey === 'k-amount');
    expect(request).toMatchObject({ method: 'POST', path: '/v1/checkout/sessions', authorized: true, apiVersion: PROVIDER_API_VERSION });
    expect(fake.paymentIntentMetadata.get(session.id)).toEqual({ eventops_checkout_id: 'staging-1' });
  });

  it('answers a repeated idempotency key with the first response and creates nothing new', async () => {
    const before = fake.sessions.size;
    const first = await createSession('k-same');
    const second = await createSession('k-same');
    expect(second.id).toBe(first.id);
    expect(fake.sessions.size).toBe(before + 1);
  });

  it('refuses a wrong secret key and a negative line item, as the provider does', async () => {
    const wrong = await createProviderClient(testConfig({ ...fake.configEnv(), PSP_SECRET_KEY: 'sk_test_wrong' }));
    await expect(wrong.checkout.sessions.retrieve('cs_test_x')).rejects.toMatchObject({ statusCode: 401 });
    await expect(createSession('k-negative', [100, -1])).rejects.toMatchObject({ statusCode: 400 });
  });

  it('gets and expires sessions; an unknown session is resource_missing', async () => {
    const provider = await client();
    const session = await createSession('k-expire');
    expect((await provider.checkout.sessions.retrieve(session.id)).status).toBe('open');
    expect((await provider.checkout.sessions.expire(session.id)).status).toBe('expired');
    await expect(provider.checkout.sessions.expire(session.id)).rejects.toMatchObject({ statusCode: 400 });
    await expect(provider.checkout.sessions.retrieve('cs_test_missing')).rejects.toMatchObject({ statusCode: 404, code: 'resource_missing' });
  });

  it('signs deliveries so that the package verifies them with the webhook secret, and only with it', async () => {
    const { default: Stripe } = await import('stripe');
    const session = await createSession('k-deliver');
    const result = await fake.deliver('checkout.session.completed', session.id);
    expect(result.status).toBe(200);
    const delivered = sink.received.at(-1) as Received;
    const event = Stripe.webhooks.constructEvent(delivered.body, delivered.signature ?? '', WEBHOOK_SECRET);
    expect(event.type).toBe('checkout.session.completed');
    expect(event.api_version).toBe(PROVIDER_API_VERSION);
    expect(event.data.object).toMatchObject({ id: session.id, status: 'complete', payment_status: 'paid', amount_total: 18312 });
    expect((event.data.object as { payment_intent: string }).payment_intent).toMatch(/^pi_test_/);
    expect(() => Stripe.webhooks.constructEvent(delivered.body, delivered.signature ?? '', 'whsec_another_secret')).toThrow();

    await fake.deliver('checkout.session.completed', session.id, {}, { secret: 'whsec_forged' });
    const forged = sink.received.at(-1) as Received;
    expect(() => Stripe.webhooks.constructEvent(forged.body, forged.signature ?? '', WEBHOOK_SECRET)).toThrow();
  });

  it('builds refunds and disputes of the session PaymentIntent with our ids in the charge metadata', async () => {
    const session = await createSession('k-reverse');
    const completed = await fake.deliver('checkout.session.completed', session.id);
    const paymentIntent = (completed.event.data as { object: { payment_intent: string } }).object.payment_intent;
    const refund = await fake.deliver('charge.refunded', session.id);
    expect(refund.event.data).toMatchObject({
      object: { object: 'charge', payment_intent: paymentIntent, amount: 18312, amount_refunded: 18312, refunded: true, metadata: { eventops_checkout_id: 'staging-1' } },
    });
    const partial = fake.buildEvent('charge.refunded', session.id, { amount_refunded: 1000, refunded: false });
    expect(partial.data).toMatchObject({ object: { amount_refunded: 1000, refunded: false } });
    const dispute = await fake.deliver('charge.dispute.created', session.id);
    const chargeId = (refund.event.data as { object: { id: string } }).object.id;
    expect(dispute.event.data).toMatchObject({ object: { object: 'dispute', payment_intent: paymentIntent, charge: chargeId, amount: 18312 } });
  });

  it('the hosted page shows the amount; Pay completes the session, sends the signed completion, then redirects 303 to the success URL', async () => {
    const session = await createSession('k-hosted');
    const page = await fetch(session.url as string);
    const html = await page.text();
    expect(html).toContain('183.12 AUD');
    expect(html).toMatch(/<button[^>]*>Pay<\/button>/);
    const deliveriesBefore = sink.received.length;
    const pay = await fetch(session.url as string, { method: 'POST', redirect: 'manual' });
    expect(pay.status).toBe(303);
    expect(pay.headers.get('location')).toBe(`https://events.example.org/events/camp/success?session_id=${session.id}`);
    expect(sink.received.length).toBe(deliveriesBefore + 1);
    const delivered = JSON.parse((sink.received.at(-1) as Received).body) as { type: string; data: { object: { id: string } } };
    expect(delivered).toMatchObject({ type: 'checkout.session.completed', data: { object: { id: session.id } } });
    expect(fake.sessions.get(session.id)).toMatchObject({ status: 'complete', payment_status: 'paid' });
  });

  it('refuses every refund call with 400 and records it', async () => {
    const response = await fetch(`${fake.apiBase}/v1/refunds`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fake.secretKey}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'payment_intent=pi_test_123',
    });
    expect(response.status).toBe(400);
    expect(fake.refundCalls).toHaveLength(1);
    expect(fake.refundCalls[0]).toMatchObject({ method: 'POST', path: '/v1/refunds', body: { payment_intent: 'pi_test_123' } });
  });

  it('lists sessions newest first in pages (limit, starting_after, has_more), filters created[gte], and expands the PaymentIntent with its latest charge', async () => {
    const provider = await client();
    const created = [await createSession('list-1', [1000]), await createSession('list-2', [2000]), await createSession('list-3', [3000])];
    for (const [index, session] of created.entries()) fake.sessions.set(session.id, { ...fake.sessions.get(session.id), created: 2_000_000_000 + index });
    fake.completeSession(created[0]?.id as string);
    fake.buildEvent('charge.refunded', created[0]?.id as string);
    const gte = { created: { gte: 2_000_000_000 } };

    const first = await provider.checkout.sessions.list({ ...gte, limit: 2, expand: ['data.payment_intent.latest_charge'] });
    expect(first).toMatchObject({ object: 'list', has_more: true, url: '/v1/checkout/sessions' });
    expect(first.data.map((s) => s.id)).toEqual([created[2]?.id, created[1]?.id]);
    const second = await provider.checkout.sessions.list({ ...gte, limit: 2, starting_after: created[1]?.id, expand: ['data.payment_intent.latest_charge'] });
    expect(second.has_more).toBe(false);
    const [paid] = second.data;
    expect(paid?.id).toBe(created[0]?.id);
    const intent = paid?.payment_intent as { object: string; status: string; latest_charge: { object: string; amount: number; amount_refunded: number; refunded: boolean; disputed: boolean } };
    expect(intent).toMatchObject({ object: 'payment_intent', status: 'succeeded' });
    expect(intent.latest_charge).toMatchObject({ object: 'charge', amount: 1000, amount_refunded: 1000, refunded: true, disputed: false });

    const all: string[] = [];
    for await (const session of provider.checkout.sessions.list({ ...gte, limit: 1 })) all.push(session.id);
    expect(all).toEqual([created[2]?.id, created[1]?.id, created[0]?.id]);
    expect((await provider.checkout.sessions.list({ created: { gte: 2_000_000_002 } })).data.map((s) => s.id)).toEqual([created[2]?.id]);
  });

  it('expires an open session and refuses to expire one that is not open', async () => {
    const provider = await client();
    const session = await createSession('expire-1');
    expect(await provider.checkout.sessions.expire(session.id)).toMatchObject({ id: session.id, status: 'expired' });
    await expect(provider.checkout.sessions.expire(session.id)).rejects.toMatchObject({ statusCode: 400 });
  });
});
