import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cancelRegistration } from '../../src/admin/registrations/cancel.js';
import { canonicalMailbox } from '../../src/canonical-mailbox.js';
import { sweepExpiredCheckouts } from '../../src/jobs/sweep-checkouts.js';
import { deliverQueuedMail } from '../../src/mail/queue.js';
import { lockEventForSeats } from '../../src/registrations/registrations.js';
import { runWaitlistPass, WAITLIST_SKIP_LIMIT } from '../../src/registrations/waitlist/offers.js';
import { joinWaitingList } from '../../src/registrations/waitlist/join.js';
import { pathForLog } from '../../src/secret-paths.js';
import { useSmtpSink } from '../support/mail-fixture.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { claimTokenIn, entries, formBody, fullWaitlistEvent, placesHeld } from './waitlist-support.js';

const smtp = useSmtpSink();
let harness: PaymentsHarness;
beforeAll(async () => {
  harness = await startPaymentsHarness({ env: smtp.sink.configEnv(), realMailer: true });
});
afterAll(async () => {
  await harness.close();
});
beforeEach(async () => {
  await harness.tdb.db('rate_limits').delete();
  harness.ctx.clock.set(new Date('2026-11-22T00:00:00Z'));
});
// Passes run over every event: each test's lists are closed after it, so the next test's counts are its own.
afterEach(async () => {
  await harness.tdb.db('waitlist_entries').whereIn('state', ['WAITING', 'OFFERED']).update({ state: 'REMOVED' });
  await harness.tdb.db('queued_mail').where({ status: 'PENDING' }).update({ status: 'SENT' });
});

const db = () => harness.tdb.db;
const office = { actor: 'office' };
const post = (path: string, fields: Record<string, string | string[]>) =>
  fetch(`${harness.server.url}${path}`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: formBody(fields) });
const page = async (path: string) => (await fetch(`${harness.server.url}${path}`)).text();
const join = (eventId: string, email: string, places: number) =>
  joinWaitingList(harness.ctx, { id: eventId }, { contact: { name: `Family ${email}`, email }, places }, { actor: 'test' });

/** Delivers the queued mail to the sink and returns what arrived. */
async function mailSent(count: number) {
  await deliverQueuedMail(harness.ctx);
  return smtp.sink.waitFor(count);
}

describe('joining the waiting list', () => {
  it('a full event page offers the list; joining over HTTP stores one encrypted entry per mailbox and emails the position and a leave link', async () => {
    const { event } = await fullWaitlistEvent(db(), harness.ctx.cipher, 2);
    const shown = await page(`/events/${event.slug}`);
    expect(shown).toContain('Join the waiting list');
    expect(shown).toContain(`action="/events/${event.slug}/waitlist"`);

    const joined = await post(`/events/${event.slug}/waitlist`, { name: 'Lee Family', email: 'Lee.Family+camp@gmail.com', mobile: '0400 111 222', places: '3' });
    expect(joined.status).toBe(201);
    expect(await joined.text()).toContain('You are number 1 on the waiting list');

    const [row] = await db()('waitlist_entries').where({ event_id: event.id });
    expect(row).toMatchObject({ state: 'WAITING', places: 3 });
    expect(row.email_enc).not.toContain('Lee');
    expect(harness.ctx.cipher.decrypt(row.email_enc)).toBe('Lee.Family+camp@gmail.com');
    expect(harness.ctx.cipher.decrypt(row.name_enc)).toBe('Lee Family');
    expect(row.email_hash).toBe(harness.ctx.cipher.lookupHash('email', canonicalMailbox('leefamily@googlemail.com')));
    expect(await db()('waitlist_history').where({ entry_id: row.id }).select('action', 'actor')).toEqual([{ action: 'joined', actor: 'waiting-list form' }]);

    const [mail] = await mailSent(1);
    expect(mail?.envelope.to).toEqual(['Lee.Family+camp@gmail.com']);
    expect(mail?.subject).toBe('You are on the waiting list: Family Camp');
    expect(mail?.text).toContain('You are number 1 on the waiting list for Family Camp');
    const leave = /(\/waitlist\/leave\/[A-Za-z0-9_.-]+)/.exec(mail?.text ?? '')?.[1];
    expect(leave).toBeDefined();
    expect(pathForLog(leave as string)).toBe('/waitlist/leave/[redacted]');

    // The same mailbox, spelt another way, is one entry.
    const again = await post(`/events/${event.slug}/waitlist`, { name: 'Lee', email: 'leefamily@googlemail.com', places: '1' });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('already on the waiting list');
    // More places than one registration may name are refused.
    expect((await post(`/events/${event.slug}/waitlist`, { name: 'Big', email: 'big@example.org', places: '7' })).status).toBe(400);

    expect(await page(leave as string)).toContain('Leave the waiting list?');
    expect((await db()('waitlist_entries').where({ id: row.id }).first()).state).toBe('WAITING');
    const left = await fetch(`${harness.server.url}${leave}`, { method: 'POST' });
    expect(left.status).toBe(200);
    expect(await left.text()).toContain('You are off the waiting list');
    expect((await db()('waitlist_entries').where({ id: row.id }).first()).state).toBe('LEFT');
  });

  it('an event with places enough for the family refuses the join: they should register', async () => {
    const { event } = await fullWaitlistEvent(db(), harness.ctx.cipher, 10, {}, 8);
    const refused = await post(`/events/${event.slug}/waitlist`, { name: 'Small', email: 'small@example.org', places: '2' });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain('2 places are still free: please register instead');
    expect(await post(`/events/${event.slug}/waitlist`, { name: 'Large', email: 'large@example.org', places: '3' }).then((r) => r.status)).toBe(201);
  });
});

describe('counting places while anyone waits', () => {
  it('a freed place does not go back on public sale: the page shows full and the form refuses, until the list is empty', async () => {
    const { event, registrations } = await fullWaitlistEvent(db(), harness.ctx.cipher, 3);
    await join(event.id, 'four@example.org', 4);
    await cancelRegistration(harness.ctx, { registration: registrations[0] as string, ...office });
    expect(await page(`/events/${event.slug}`)).toContain('Sold out');
    const refused = await post(`/events/${event.slug}/register`, { name: 'Walk Up', email: 'walk@example.org', attendee_name: 'Walk Up', attendee_tier: 'adult', payment: 'bank' });
    expect(refused.status).toBe(409);
    expect(await db()('registrations').where({ event_id: event.id }).whereNot('status', 'CANCELLED').count({ n: '*' }).first()).toEqual({ n: 2 });

    const [entry] = await entries(db(), event.id);
    await db()('waitlist_entries').where({ id: entry?.id }).update({ state: 'LEFT' });
    expect(await page(`/events/${event.slug}`)).toContain('1 place left');
  });
});

describe('offering freed places', () => {
  it('sweep-checkouts offers a place freed by a cancellation, in order of joining, holding it against everyone else', async () => {
    const { event, registrations } = await fullWaitlistEvent(db(), harness.ctx.cipher, 2);
    await join(event.id, 'first@example.org', 1);
    await join(event.id, 'second@example.org', 1);
    await mailSent(2);
    smtp.sink.clear();
    expect(await sweepExpiredCheckouts(harness.ctx, { trigger: 'cli' })).toMatchObject({ waitlistOffered: 0 });

    await cancelRegistration(harness.ctx, { registration: registrations[0] as string, ...office });
    expect(await sweepExpiredCheckouts(harness.ctx, { trigger: 'cli' })).toMatchObject({ waitlistOffered: 1, waitlistExpired: 0 });
    expect((await entries(db(), event.id)).map((e) => e.state)).toEqual(['OFFERED', 'WAITING']);
    const [offer] = await mailSent(1);
    expect(offer?.envelope.to).toEqual(['first@example.org']);
    expect(offer?.subject).toBe('Places are free for you: Family Camp');
    expect(offer?.text).toMatch(/holding it for you until .*23 Nov/);
    claimTokenIn(offer?.text ?? '');

    // The offer holds the place in the one seat count.
    const locked = await db().transaction((trx) => lockEventForSeats(trx, event.id, harness.ctx.clock.now()));
    expect(locked).toMatchObject({ seatsTaken: 2, seatsLeft: 0, seatsOffered: 1, waiting: 1 });
    // A second pass offers nothing more.
    expect(await runWaitlistPass(harness.ctx, office)).toMatchObject({ offered: 0 });
  });

  it('an unclaimed offer expires after offerHours and its places pass to the next entry', async () => {
    const { event, registrations } = await fullWaitlistEvent(db(), harness.ctx.cipher, 1);
    await join(event.id, 'slow@example.org', 1);
    await join(event.id, 'next@example.org', 1);
    await cancelRegistration(harness.ctx, { registration: registrations[0] as string, ...office });
    await sweepExpiredCheckouts(harness.ctx, { trigger: 'cli' });
    harness.ctx.clock.advance(23 * 3600_000);
    expect(await sweepExpiredCheckouts(harness.ctx, { trigger: 'cli' })).toMatchObject({ waitlistOffered: 0, waitlistExpired: 0 });
    harness.ctx.clock.advance(3600_000);
    expect(await sweepExpiredCheckouts(harness.ctx, { trigger: 'cli' })).toMatchObject({ waitlistOffered: 1, waitlistExpired: 1 });
    expect((await entries(db(), event.id)).map((e) => e.state)).toEqual(['EXPIRED', 'OFFERED']);
    const [slow] = await entries(db(), event.id);
    expect(await db()('waitlist_history').where({ entry_id: slow?.id }).orderBy('id').pluck('action')).toEqual(['joined', 'offered', 'expired']);
  });

  it(`the large-family rule: an entry passed over ${WAITLIST_SKIP_LIMIT} times blocks those behind it until it is served`, async () => {
    const { event } = await fullWaitlistEvent(db(), harness.ctx.cipher, 10);
    await join(event.id, 'big@example.org', 4);
    for (const n of [1, 2, 3, 4]) await join(event.id, `small-${n}@example.org`, 1);
    const raiseCapacityTo = async (capacity: number) => {
      await db()('events').where({ id: event.id }).update({ capacity });
      return runWaitlistPass(harness.ctx, office);
    };
    const states = async () => (await entries(db(), event.id)).map((e) => `${e.state}:${e.skips}`);
    for (const capacity of [11, 12, 13]) expect(await raiseCapacityTo(capacity)).toMatchObject({ offered: 1 });
    expect(await states()).toEqual(['WAITING:3', 'OFFERED:0', 'OFFERED:0', 'OFFERED:0', 'WAITING:0']);
    // One more place: small-4 would fit, but the big family has been passed over three times and now blocks.
    expect(await raiseCapacityTo(14)).toMatchObject({ offered: 0 });
    expect(await raiseCapacityTo(17)).toMatchObject({ offered: 1 });
    expect(await states()).toEqual(['OFFERED:3', 'OFFERED:0', 'OFFERED:0', 'OFFERED:0', 'WAITING:0']);
    expect(await raiseCapacityTo(18)).toMatchObject({ offered: 1 });
    expect(await placesHeld(db(), event.id)).toEqual({ registered: 10, offered: 8 });
  });

  it('no offer is made once the event has started (registration has closed)', async () => {
    const { event, registrations } = await fullWaitlistEvent(db(), harness.ctx.cipher, 1, { starts_at: new Date('2026-11-23T00:00:00Z') });
    await join(event.id, 'late@example.org', 1);
    await cancelRegistration(harness.ctx, { registration: registrations[0] as string, ...office });
    harness.ctx.clock.set(new Date('2026-11-23T00:00:00Z'));
    expect(await runWaitlistPass(harness.ctx, office)).toMatchObject({ offered: 0 });
    expect((await entries(db(), event.id)).map((e) => e.state)).toEqual(['WAITING']);
  });

  it('an offer made close to the start holds its places only until the start', async () => {
    const { event, registrations } = await fullWaitlistEvent(db(), harness.ctx.cipher, 1, { starts_at: new Date('2026-11-22T06:00:00Z') });
    await join(event.id, 'soon@example.org', 1);
    await cancelRegistration(harness.ctx, { registration: registrations[0] as string, ...office });
    await runWaitlistPass(harness.ctx, office);
    const row = await db()('waitlist_entries').where({ event_id: event.id }).first();
    expect(row.offer_expires_at).toEqual(new Date('2026-11-22T06:00:00Z'));
  });
});

describe('claiming an offer through the registration form', () => {
  async function offeredEntry(places = 2) {
    const { event, registrations } = await fullWaitlistEvent(db(), harness.ctx.cipher, 3);
    await join(event.id, 'claimer@example.org', places);
    for (const id of registrations.slice(0, places)) await cancelRegistration(harness.ctx, { registration: id, ...office });
    await join(event.id, 'behind@example.org', 1);
    expect(await runWaitlistPass(harness.ctx, office)).toMatchObject({ offered: 1 });
    await deliverQueuedMail(harness.ctx);
    const offer = (await smtp.sink.waitFor(3)).find((mail) => mail.subject.startsWith('Places are free') && mail.envelope.to.includes('claimer@example.org'));
    return { event, token: claimTokenIn(offer?.text ?? '') };
  }
  const claimFields = (token: string, payment: 'bank' | 'card') => ({
    offer: token,
    name: 'Claimer Family',
    email: 'claimer@example.org',
    attendee_name: ['Ann Claimer', 'Bo Claimer'],
    attendee_tier: ['adult', 'adult'],
    payment,
  });

  it('by bank transfer: the link shows the form with the places reserved and the contact filled in; registering consumes the offer; the link is then dead', async () => {
    const { event, token } = await offeredEntry();
    const form = await page(`/events/${event.slug}?offer=${token}`);
    expect(form).toContain('2 places are held for you from the waiting list until');
    expect(form).toContain(`name="offer" value="${token}"`);
    expect(form).toContain('value="claimer@example.org"');
    expect(form).not.toContain('Sold out');

    const registered = await post(`/events/${event.slug}/register`, claimFields(token, 'bank'));
    expect(registered.status).toBe(303);
    const [entry] = await entries(db(), event.id);
    expect(entry).toMatchObject({ state: 'CLAIMED' });
    const registration = await db()('registrations').where({ id: entry?.registration_id }).first();
    expect(registration).toMatchObject({ status: 'PENDING', payment_method: 'bank', attendee_count: 2 });
    expect(await placesHeld(db(), event.id)).toEqual({ registered: 3, offered: 0 });

    const reused = await post(`/events/${event.slug}/register`, { ...claimFields(token, 'bank'), email: 'again@example.org' });
    expect(reused.status).toBe(409);
    expect(await reused.text()).toContain('no longer open');
    expect(await page(`/events/${event.slug}?offer=${token}`)).toContain('This waiting-list offer is no longer open');
    expect(await placesHeld(db(), event.id)).toEqual({ registered: 3, offered: 0 });
  });

  it('by card: the checkout keeps the offer, and the paid completion registers and claims it in one transaction', async () => {
    const { event, token } = await offeredEntry();
    const started = await post(`/events/${event.slug}/register`, claimFields(token, 'card'));
    expect(started.status).toBe(303);
    const checkout = await db()('checkout_sessions').where({ event_id: event.id }).first();
    expect((await entries(db(), event.id))[0]).toMatchObject({ state: 'OFFERED' });
    const delivered = await harness.provider.deliverEvent(harness.provider.buildEvent('checkout.session.completed', checkout.provider_session_id));
    expect(JSON.parse(delivered.body)).toMatchObject({ outcome: 'completed' });
    const [entry] = await entries(db(), event.id);
    expect(entry).toMatchObject({ state: 'CLAIMED' });
    expect(await db()('registrations').where({ id: entry?.registration_id }).first()).toMatchObject({ status: 'PAID', payment_method: 'card', attendee_count: 2 });
    expect(await placesHeld(db(), event.id)).toEqual({ registered: 3, offered: 0 });
    expect(await db()('waitlist_history').where({ entry_id: entry?.id }).orderBy('id').pluck('actor')).toContain('card provider');
  });
});
