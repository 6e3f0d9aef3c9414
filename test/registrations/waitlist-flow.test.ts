import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cancelRegistration } from '../../src/office/registrations/cancel.js';
import { canonicalMailbox } from '../../src/canonical-mailbox.js';
import { sweepExpiredCheckouts } from '../../src/jobs/sweep-checkouts.js';
import { deliverQueuedMail } from '../../src/mail/queue.js';
import { lockEventForSeats } from '../../src/registrations/registrations.js';
import { runWaitlistPass, WAITLIST_SKIP_LIMIT } from '../../src/registrations/waitlist/offers.js';
import { addToWaitingList } from '../../src/registrations/waitlist/join.js';
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
  addToWaitingList(harness.ctx, { id: eventId }, { contact: { name: `Family ${email}`, email }, places }, { actor: 'test' });

/** Delivers the queued mail to the sink and returns what arrived. */
async function mailSent(count: number) {
  await deliverQueuedMail(harness.ctx);
  return smtp.sink.waitFor(count);
}

/** The path of a link in an email's text, e.g. /waitlist/confirm/…, as the family would open it here. */
function linkIn(text: string | undefined, prefix: string): string {
  const path = new RegExp(`(${prefix}/[A-Za-z0-9_.-]+)`).exec(text ?? '')?.[1];
  if (!path) throw new Error(`no ${prefix} link in: ${text}`);
  return path;
}

describe('joining the waiting list', () => {
  it('a full event page offers the list; a join over HTTP stores one encrypted UNCONFIRMED entry and emails a confirm link; the link (GET shows, POST confirms) puts it on the list and emails the position and a leave link', async () => {
    const { event } = await fullWaitlistEvent(db(), harness.ctx.cipher, 2);
    const shown = await page(`/events/${event.slug}`);
    expect(shown).toContain('Join the waiting list');
    expect(shown).toContain(`action="/events/${event.slug}/waitlist"`);

    const joined = await post(`/events/${event.slug}/waitlist`, { name: 'Lee Family', email: 'Lee.Family+camp@gmail.com', mobile: '0400 111 222', places: '3' });
    expect(joined.status).toBe(202);
    expect(await joined.text()).toContain('Check your email');

    const [row] = await db()('waitlist_entries').where({ event_id: event.id });
    expect(row).toMatchObject({ state: 'UNCONFIRMED', places: 3, confirmed_at: null });
    expect(row.email_enc).not.toContain('Lee');
    expect(harness.ctx.cipher.decrypt(row.email_enc)).toBe('Lee.Family+camp@gmail.com');
    expect(harness.ctx.cipher.decrypt(row.name_enc)).toBe('Lee Family');
    expect(row.email_hash).toBe(harness.ctx.cipher.lookupHash('email', canonicalMailbox('leefamily@googlemail.com')));
    expect(await db()('waitlist_history').where({ entry_id: row.id }).select('action', 'actor')).toEqual([{ action: 'joined', actor: 'waiting-list form' }]);

    const [ask] = await mailSent(1);
    expect(ask?.envelope.to).toEqual(['Lee.Family+camp@gmail.com']);
    expect(ask?.subject).toBe('Confirm your place on the waiting list: Family Camp');
    const confirm = linkIn(ask?.text, '/waitlist/confirm');
    expect(pathForLog(confirm)).toBe('/waitlist/confirm/[redacted]');
    smtp.sink.clear();

    // A mail scanner's GET changes nothing.
    expect(await page(confirm)).toContain('Confirm your place on the waiting list');
    expect((await db()('waitlist_entries').where({ id: row.id }).first()).state).toBe('UNCONFIRMED');
    const confirmed = await fetch(`${harness.server.url}${confirm}`, { method: 'POST' });
    expect(confirmed.status).toBe(200);
    expect(await confirmed.text()).toContain('You are number 1 on the waiting list for <bdi>Family Camp</bdi>');
    expect(await db()('waitlist_entries').where({ id: row.id }).first()).toMatchObject({ state: 'WAITING', confirmed_at: harness.ctx.clock.now() });
    expect(await db()('waitlist_history').where({ entry_id: row.id }).orderBy('id').pluck('action')).toEqual(['joined', 'confirmed']);
    // A second tap of the link changes nothing.
    expect(await (await fetch(`${harness.server.url}${confirm}`, { method: 'POST' })).text()).toContain('You are number 1 on the waiting list');

    const [mail] = await mailSent(1);
    expect(mail?.envelope.to).toEqual(['Lee.Family+camp@gmail.com']);
    expect(mail?.subject).toBe('You are on the waiting list: Family Camp');
    expect(mail?.text).toContain('You are number 1 on the waiting list for Family Camp');
    const leave = linkIn(mail?.text, '/waitlist/leave');
    expect(pathForLog(leave)).toBe('/waitlist/leave/[redacted]');
    // More places than one registration may name are refused (a rule of the event, not of the list).
    expect((await post(`/events/${event.slug}/waitlist`, { name: 'Big', email: 'big@example.org', places: '7' })).status).toBe(400);

    expect(await page(leave)).toContain('Leave the waiting list?');
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
    expect(await post(`/events/${event.slug}/waitlist`, { name: 'Large', email: 'large@example.org', places: '3' }).then((r) => r.status)).toBe(202);
  });
});

describe('counting places while anyone waits', () => {
  it('a freed place a waiting family can take does not go back on public sale: the page shows full and the form refuses, until the pass offers it', async () => {
    const { event, registrations } = await fullWaitlistEvent(db(), harness.ctx.cipher, 3);
    await join(event.id, 'one@example.org', 1);
    await cancelRegistration(harness.ctx, { registration: registrations[0] as string, ...office });
    expect(await page(`/events/${event.slug}`)).toContain('Sold out');
    const refused = await post(`/events/${event.slug}/register`, { name: 'Walk Up', email: 'walk@example.org', attendee_name: 'Walk Up', attendee_tier: 'adult', payment: 'bank' });
    expect(refused.status).toBe(409);
    expect(await db()('registrations').where({ event_id: event.id }).whereNot('status', 'CANCELLED').count({ n: '*' }).first()).toEqual({ n: 2 });
    expect(await runWaitlistPass(harness.ctx, office)).toMatchObject({ offered: 1 });
    expect((await entries(db(), event.id)).map((e) => e.state)).toEqual(['OFFERED']);
  });

  it('no place left stranded: free places no waiting family fits (4 wanted, 2 free) go back on public sale, the page shows them and they sell', async () => {
    const { event, registrations } = await fullWaitlistEvent(db(), harness.ctx.cipher, 4);
    await join(event.id, 'four@example.org', 4);
    for (const id of registrations.slice(0, 2)) await cancelRegistration(harness.ctx, { registration: id, ...office });
    const shown = await page(`/events/${event.slug}`);
    expect(shown).toContain('2 places left');
    expect(shown).not.toContain('Every place is taken');
    const sold = await post(`/events/${event.slug}/register`, {
      name: 'Walk Up',
      email: 'walk@example.org',
      attendee_name: ['Walk Up', 'Walk Up Jr'],
      attendee_tier: ['adult', 'adult'],
      payment: 'bank',
    });
    expect(sold.status).toBe(303);
    expect(await placesHeld(db(), event.id)).toEqual({ registered: 4, offered: 0 });
    expect((await entries(db(), event.id)).map((e) => e.state)).toEqual(['WAITING']);
  });

  it('places held for a family passed over its limit are the list\'s, not the public\'s, while a family behind it would take them', async () => {
    const { event } = await fullWaitlistEvent(db(), harness.ctx.cipher, 10);
    await join(event.id, 'big@example.org', 4);
    await join(event.id, 'small@example.org', 1);
    await db()('waitlist_entries').where({ event_id: event.id, places: 4 }).update({ skips: WAITLIST_SKIP_LIMIT });
    await db()('events').where({ id: event.id }).update({ capacity: 12 });
    expect(await page(`/events/${event.slug}`)).toContain('Sold out');
    expect(await runWaitlistPass(harness.ctx, office)).toMatchObject({ offered: 0 });
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

  it('the family whose offer expired is emailed that its places have gone on and it is off the list, once', async () => {
    const { event, registrations } = await fullWaitlistEvent(db(), harness.ctx.cipher, 1);
    await join(event.id, 'slow@example.org', 1);
    await join(event.id, 'next@example.org', 1);
    await cancelRegistration(harness.ctx, { registration: registrations[0] as string, ...office });
    await runWaitlistPass(harness.ctx, office);
    await mailSent(3);
    smtp.sink.clear();
    harness.ctx.clock.advance(24 * 3600_000);
    expect(await runWaitlistPass(harness.ctx, office)).toMatchObject({ expired: 1, offered: 1 });
    expect(await runWaitlistPass(harness.ctx, office)).toMatchObject({ expired: 0 });
    const sent = await mailSent(2);
    const expired = sent.filter((mail) => mail.subject === 'Your waiting-list offer has expired: Family Camp');
    expect(expired.map((mail) => mail.envelope.to)).toEqual([['slow@example.org']]);
    expect(expired[0]?.text).toContain('gone to the next family on the waiting list, and you are no longer on it');
    expect(expired[0]?.text).toContain(`/events/${event.slug}`);
    expect(sent.find((mail) => mail.subject.startsWith('Places are free'))?.envelope.to).toEqual(['next@example.org']);
  });

  it('sweep-checkouts --dry-run previews the offers it would expire and make, and the joins that would lapse, changing nothing', async () => {
    const { event, registrations } = await fullWaitlistEvent(db(), harness.ctx.cipher, 2);
    await join(event.id, 'slow@example.org', 1);
    await join(event.id, 'big@example.org', 2);
    await join(event.id, 'next@example.org', 1);
    await cancelRegistration(harness.ctx, { registration: registrations[0] as string, ...office });
    await runWaitlistPass(harness.ctx, office);
    const [slow, big, next] = await entries(db(), event.id);
    await post(`/events/${event.slug}/waitlist`, { name: 'Never Confirms', email: 'never@example.org', places: '1' });
    harness.ctx.clock.advance(24 * 3600_000);
    const before = await db()('waitlist_entries').orderBy('id').select('id', 'state', 'skips');

    const dry = await sweepExpiredCheckouts(harness.ctx, { trigger: 'cli', dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, waitlistExpired: 1, waitlistOffered: 1, waitlistLapsed: 1 });
    const ref = (id: string | undefined) => `W-${id?.slice(0, 8).toUpperCase()}`;
    expect(dry.wouldDo).toEqual(
      expect.arrayContaining([
        'lapse 1 waiting-list join(s) left unconfirmed for a day',
        `expire the waiting-list offer of ${ref(slow?.id)} on ${event.slug} (1 place(s), held until 2026-11-23 11:00 Australia/Sydney) and email the family`,
        `offer 1 place(s) on ${event.slug} to ${ref(next?.id)}, passing over ${ref(big?.id)}`,
      ]),
    );
    expect(await db()('waitlist_entries').orderBy('id').select('id', 'state', 'skips')).toEqual(before);

    expect(await sweepExpiredCheckouts(harness.ctx, { trigger: 'cli' })).toMatchObject({ waitlistExpired: 1, waitlistOffered: 1, waitlistLapsed: 1 });
    expect((await entries(db(), event.id)).map((e) => `${e.state}:${e.skips}`)).toEqual(['EXPIRED:0', 'WAITING:1', 'OFFERED:0', 'LAPSED:0']);
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
