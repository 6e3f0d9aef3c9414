import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { ENCRYPTED_COLUMNS } from '../../src/crypto/rotate.js';
import { purgeSensitiveAnswers } from '../../src/jobs/purge-answers.js';
import { decryptStagedRegistration, encryptStagedRegistration, type StagedRegistration } from '../../src/payments/staging.js';
import type { Question } from '../../src/registrations/answers.js';
import { priceRegistration } from '../../src/registrations/pricing.js';
import { insertCheckoutSession, insertEvent } from '../support/factories.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { completedSession, postWebhook, signedDelivery } from '../support/webhook-events.js';

/**
 * The purge of sensitive answers reaches the answers a card checkout staged (checkout_sessions.payload_enc), of
 * any status: a payment kept without a registration (UNFULFILLED) keeps its payload for the office, so without
 * this its allergy would outlive the purge docs/office.md promises.
 */

const QUESTIONS: Question[] = [
  { id: 'diet', label: 'Dietary needs', type: 'text', appliesTo: 'attendee' },
  { id: 'allergies', label: 'Allergies', type: 'longtext', appliesTo: 'attendee', sensitive: true },
];
const PRICING = { tiers: [{ id: 'adult', label: 'Adult', price: 12000 }] };
const ALLERGY = 'Hazelnut and kiwi allergy, EpiPen in the blue pouch';
const DIET = 'No pork please';
// The factory's events start on 5 December 2026 with no end: 30 days' retention ends on 4 January 2027.
const AFTER_RETENTION = new Date('2027-01-10T00:00:00Z');

let harness: PaymentsHarness;
beforeAll(async () => {
  harness = await startPaymentsHarness({ admin: true });
});
afterAll(async () => {
  await harness.close();
});

const db = () => harness.tdb.db;
const purgeAt = (now: Date, dryRun = false) => purgeSensitiveAnswers({ ...harness.ctx, clock: new FixedClock(now) }, { trigger: 'cli', dryRun });

const questionEvent = (overrides: Record<string, unknown> = {}) =>
  insertEvent(db(), { capacity: 20, online_payment: true, pricing: JSON.stringify(PRICING), questions: JSON.stringify(QUESTIONS), ...overrides });

/** Every encrypted value in the database, decrypted, with where it sits: what someone holding the keys and a dump reads. */
async function decryptedDump(): Promise<Array<{ where: string; text: string }>> {
  const found: Array<{ where: string; text: string }> = [];
  for (const { table, column } of ENCRYPTED_COLUMNS) {
    for (const value of await db()(table).whereNotNull(column).pluck<string[]>(column)) {
      try {
        found.push({ where: `${table}.${column}`, text: harness.ctx.cipher.decrypt(value) });
      } catch {
        // Not readable with these keys: holds nothing anyone could read back.
      }
    }
  }
  return found;
}
const holding = async (needle: string) => (await decryptedDump()).filter((entry) => entry.text.includes(needle)).map((entry) => entry.where);

describe('purge-answers takes the sensitive answers out of staged card checkouts', () => {
  it('a card registration with an allergy that ended UNFULFILLED: after the purge its kept payload has the contact and the plain answer, and no allergy is left anywhere in the database', async () => {
    const event = await questionEvent();
    const form = new URLSearchParams({ name: 'Quinn Payer', email: 'quinn.payer@example.org', payment: 'card', attendee_name: 'Quinn Payer', attendee_tier: 'adult' });
    form.append('q.0.diet', DIET);
    form.append('q.0.allergies', ALLERGY);
    const posted = await fetch(`${harness.server.url}/events/${event.slug}/register`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    expect(posted.status).toBe(303);
    const checkout = await db()('checkout_sessions').where({ event_id: event.id }).first<{ id: string; provider_session_id: string; net_minor: number }>();
    // The provider reports another amount than the checkout's: the payment is kept without a registration, with its payload.
    const delivery = signedDelivery(
      'checkout.session.completed',
      completedSession({ checkoutId: checkout.id, providerSessionId: checkout.provider_session_id, eventId: event.id, amountTotal: checkout.net_minor - 100 }),
    );
    expect((await postWebhook(harness.server.url, delivery)).status).toBe(200);
    expect(await db()('checkout_sessions').where({ id: checkout.id }).first('status', 'payload_enc')).toMatchObject({ status: 'UNFULFILLED', payload_enc: expect.any(String) });
    expect(await holding(ALLERGY)).toEqual(['checkout_sessions.payload_enc']);

    // Not yet due: nothing changes.
    expect(await purgeAt(new Date('2027-01-01T00:00:00Z'))).toMatchObject({ outcome: 'ok', checkoutsPurged: 0 });
    expect(await holding(ALLERGY)).toEqual(['checkout_sessions.payload_enc']);

    const summary = await purgeAt(AFTER_RETENTION);
    expect(summary).toMatchObject({ outcome: 'ok', dryRun: false, checkoutsPurged: 1 });
    expect(await holding(ALLERGY)).toEqual([]);
    const kept = await db()('checkout_sessions').where({ id: checkout.id }).first<{ status: string; payload_enc: string; sensitive_purged_at: Date }>();
    expect(kept.status).toBe('UNFULFILLED');
    expect(kept.sensitive_purged_at).toEqual(AFTER_RETENTION);
    const staged = decryptStagedRegistration(harness.ctx.cipher, kept.payload_enc);
    expect(staged.contact).toEqual({ name: 'Quinn Payer', email: 'quinn.payer@example.org' });
    expect(staged.answers).toEqual({ registration: {}, attendees: [{ diet: DIET }] });
  });

  it('whatever the status (open, expired and kept, unfulfilled), a due payload loses its sensitive answers once; one not yet due is left; one that cannot be read goes whole; a dry run only lists them', async () => {
    const due = await questionEvent();
    const later = await questionEvent({ starts_at: new Date('2027-03-01T08:00:00Z') });
    const stage = async (eventId: string, status: string) => {
      const attendees = [{ name: 'Robin Camper', tier: 'adult' }];
      const staged: StagedRegistration = {
        version: 1,
        contact: { name: 'Robin Camper', email: `robin-${status.toLowerCase()}@example.org` },
        attendees,
        family: false,
        priced: priceRegistration(PRICING, { attendees, family: false }),
        // "dateOfBirth" is always sensitive; "removedQuestion" is no question of the event any more: sensitive too.
        answers: { registration: { removedQuestion: 'kept?' }, attendees: [{ diet: DIET, allergies: ALLERGY, dateOfBirth: '2015-04-02' }] },
      };
      return (await insertCheckoutSession(db(), harness.ctx.cipher, eventId, { status, payload_enc: encryptStagedRegistration(harness.ctx.cipher, staged) })).id;
    };
    const open = await stage(due.id, 'OPEN');
    const expired = await stage(due.id, 'EXPIRED');
    const unfulfilled = await stage(due.id, 'UNFULFILLED');
    const notYet = await stage(later.id, 'UNFULFILLED');
    const { id: unreadable } = await insertCheckoutSession(db(), harness.ctx.cipher, due.id, { status: 'UNFULFILLED', payload_enc: 'v9:not-a-payload' });

    const preview = await purgeAt(AFTER_RETENTION, true);
    expect(preview).toMatchObject({ dryRun: true, checkoutsPurged: 4 });
    expect(preview.wouldDo?.filter((line) => line.startsWith('purge the sensitive answers staged with checkout'))).toHaveLength(4);
    expect(await db()('checkout_sessions').whereIn('id', [open, expired, unfulfilled]).whereNotNull('sensitive_purged_at')).toEqual([]);

    expect(await purgeAt(AFTER_RETENTION)).toMatchObject({ checkoutsPurged: 4 });
    for (const id of [open, expired, unfulfilled]) {
      const row = await db()('checkout_sessions').where({ id }).first<{ payload_enc: string; sensitive_purged_at: Date | null }>();
      expect(row.sensitive_purged_at).toEqual(AFTER_RETENTION);
      expect(decryptStagedRegistration(harness.ctx.cipher, row.payload_enc).answers).toEqual({ registration: {}, attendees: [{ diet: DIET }] });
    }
    expect(await db()('checkout_sessions').where({ id: unreadable }).first('payload_enc', 'status')).toEqual({ payload_enc: null, status: 'UNFULFILLED' });
    const waiting = await db()('checkout_sessions').where({ id: notYet }).first<{ payload_enc: string; sensitive_purged_at: Date | null }>();
    expect(waiting.sensitive_purged_at).toBeNull();
    expect(decryptStagedRegistration(harness.ctx.cipher, waiting.payload_enc).answers?.attendees[0]).toMatchObject({ allergies: ALLERGY });

    // A second run finds nothing to do.
    expect(await purgeAt(new Date(AFTER_RETENTION.getTime() + 60_000))).toMatchObject({ checkoutsPurged: 0 });
  });
});
