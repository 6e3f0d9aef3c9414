import { cancelRegistration } from '../../src/office/registrations/cancel.js';
import { sweepExpiredCheckouts } from '../../src/jobs/sweep-checkouts.js';
import { heldUntil } from '../../src/payments/hold-release.js';
import { registrationToken } from '../../src/payments/links.js';
import { addToWaitingList } from '../../src/registrations/waitlist/join.js';
import { runWaitlistPass } from '../../src/registrations/waitlist/offers.js';
import { claimToken } from '../../src/registrations/waitlist/tokens.js';
import { insertEvent, insertRegistration } from '../../test/support/factories.js';
import type { PaymentsHarness } from '../../test/support/payments-harness.js';

/**
 * The hold-extension probes of the hostile-input case: a family that keeps opening card checkouts from one
 * waiting-list claim link, or keeps starting pay-now on an unpaid bank transfer, must not keep its places a
 * minute past the time it was told; and two checkouts paid from one offer must never leave an innocent
 * payer, whose open checkout held the last places, without a registration. Each probe moves the harness's
 * clock forward (a day and more), so they run last in a round.
 */
export interface HoldProbeReport {
  /** Requests and payments sent. */
  sent: number;
  /** What went against the rule: each a sentence. */
  problems: string[];
}

const MINUTE = 60_000;
const office = { actor: 'soak' };
const plus = (from: Date, minutes: number) => new Date(from.getTime() + minutes * MINUTE);

/** A full event of 3 (waiting list on, offers held 24 hours) whose first waiting family has just been offered 2 places. */
async function offeredFamily(harness: PaymentsHarness, options: { behind: boolean }) {
  const { db } = harness.tdb;
  const event = await insertEvent(db, { capacity: 3, online_payment: true, waitlist_enabled: true, waitlist_offer_hours: 24, max_attendees_per_registration: 6 });
  const taken: string[] = [];
  for (let n = 0; n < 3; n += 1) taken.push((await insertRegistration(db, harness.ctx.cipher, event.id, { paid_at: harness.ctx.clock.now(), created_at: harness.ctx.clock.now() })).id);
  const join = (email: string) => addToWaitingList(harness.ctx, { id: event.id }, { contact: { name: 'Looping Family', email }, places: 2 }, { actor: 'soak' });
  const { entryId } = await join('looping@example.org');
  if (options.behind) await join('behind@example.org');
  for (const id of taken.slice(0, 2)) await cancelRegistration(harness.ctx, { registration: id, ...office });
  await runWaitlistPass(harness.ctx, office);
  const entry = await db('waitlist_entries').where({ id: entryId }).first<{ state: string; offer_seq: number; offer_expires_at: Date | null }>();
  if (entry.state !== 'OFFERED' || !entry.offer_expires_at) throw new Error(`the probe's family was not offered its places (${entry.state})`);
  return { event, entryId, statedEnd: entry.offer_expires_at, token: claimToken(harness.ctx.config.keyring, { entryId, offerSeq: entry.offer_seq }) };
}

async function claimByCard(harness: PaymentsHarness, slug: string, token: string, client: string) {
  const body = new URLSearchParams({ offer: token, name: 'Looping Family', email: 'looping@example.org', payment: 'card' });
  for (const name of ['Lee Looping', 'Max Looping']) {
    body.append('attendee_name', name);
    body.append('attendee_tier', 'adult');
  }
  const answer = await fetch(`${harness.server.url}/events/${slug}/register`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': client },
    body: body.toString(),
  });
  await answer.arrayBuffer();
  return { status: answer.status, location: answer.headers.get('location') };
}

/** The event's checkouts that are open and unexpired by the harness's clock. */
const liveCheckouts = (harness: PaymentsHarness, eventId: string) =>
  harness.tdb.db('checkout_sessions').where({ event_id: eventId, status: 'OPEN' }).where('expires_at', '>', harness.ctx.clock.now()).select<Array<{ id: string; provider_url: string | null }>>('id', 'provider_url');

/**
 * Offer-extension loop: the claim link opens a card checkout every 29 minutes for 26 hours (each abandoned),
 * the minute loop's pass running after each. The offer must end at the time its email stated (never moved),
 * every attempt while a checkout is open must be sent to that same provider page (one open session at most),
 * no checkout may open past the end, and at the end the places must have passed to the next family.
 */
export async function probeOfferExtensionLoop(harness: PaymentsHarness, client = '203.0.113.71'): Promise<HoldProbeReport> {
  const { db } = harness.tdb;
  const start = harness.ctx.clock.now();
  const { event, entryId, statedEnd, token } = await offeredFamily(harness, { behind: true });
  const problems: string[] = [];
  let sent = 0;
  for (let minute = 0; minute <= 26 * 60; minute += 29) {
    harness.ctx.clock.set(plus(start, minute));
    const live = await liveCheckouts(harness, event.id);
    const answer = await claimByCard(harness, event.slug, token, client);
    sent += 1;
    const beforeEnd = harness.ctx.clock.now() < statedEnd;
    if (beforeEnd && answer.status !== 303) problems.push(`minute ${minute}: a claim before the offer's end answered ${answer.status}, not 303`);
    if (!beforeEnd && answer.status !== 409) problems.push(`minute ${minute}: a claim after the offer's end answered ${answer.status}, not 409`);
    if (live[0] && answer.status === 303 && answer.location !== live[0].provider_url) problems.push(`minute ${minute}: a second attempt opened a new provider page instead of resuming the open one`);
    const liveAfter = (await liveCheckouts(harness, event.id)).length;
    if (liveAfter > 1) problems.push(`minute ${minute}: ${liveAfter} checkouts of one offer are open at once`);
    await runWaitlistPass(harness.ctx, office);
    const entry = await db('waitlist_entries').where({ id: entryId }).first<{ offer_expires_at: Date }>('offer_expires_at');
    if (entry.offer_expires_at.getTime() !== statedEnd.getTime()) problems.push(`minute ${minute}: the offer's end moved from ${statedEnd.toISOString()} to ${entry.offer_expires_at.toISOString()}`);
  }
  const late = await db('checkout_sessions').where({ event_id: event.id }).where('created_at', '>=', statedEnd).count<{ n: string }>({ n: '*' }).first();
  if (Number(late?.n ?? 0) > 0) problems.push(`${String(late?.n)} checkouts were opened from the offer after its end`);
  const states = (await db('waitlist_entries').where({ event_id: event.id }).orderBy('position').pluck<string[]>('state')).join(',');
  if (states !== 'EXPIRED,OFFERED') problems.push(`after the loop the list is ${states}, not EXPIRED,OFFERED: the places did not pass on`);
  return { sent, problems };
}

/**
 * Pay-now loop: on an event with a one-day unpaid hold, pay-now is started every 30 minutes (each session
 * abandoned) while the sweep runs hourly. The hold must be released by the first sweep after the last
 * session opened before its end has expired, and no session may be opened at or after the end.
 */
export async function probePayNowLoop(harness: PaymentsHarness): Promise<HoldProbeReport> {
  const { db } = harness.tdb;
  const start = harness.ctx.clock.now();
  const event = await insertEvent(db, { online_payment: true, unpaid_hold_days: 1, starts_at: plus(start, 30 * 24 * 60) });
  const { id } = await insertRegistration(db, harness.ctx.cipher, event.id, { status: 'PENDING', payment_method: 'bank', paid_at: null, created_at: start });
  const releaseAt = await heldUntil(db, id, harness.ctx.config.regional.timeZone);
  if (!releaseAt) return { sent: 0, problems: ['the probe registration has no unpaid hold end'] };
  const token = registrationToken(harness.ctx.config.authSecret, id, 1);
  const problems: string[] = [];
  let sent = 0;
  let releasedAt: Date | undefined;
  for (let minute = 15; minute <= 30 * 60 && !releasedAt; minute += 15) {
    harness.ctx.clock.set(plus(start, minute));
    if (minute % 30 === 0) {
      const answer = await fetch(`${harness.server.url}/registrations/${id}/pay`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${token}`,
      });
      await answer.arrayBuffer();
      sent += 1;
      if (harness.ctx.clock.now() < releaseAt && answer.status !== 303) problems.push(`minute ${minute}: pay-now before the hold's end answered ${answer.status}, not 303`);
    }
    if (minute % 60 === 45) {
      await sweepExpiredCheckouts(harness.ctx, { trigger: 'cli' });
      const row = await db('registrations').where({ id }).first<{ status: string }>('status');
      if (row.status === 'CANCELLED') releasedAt = harness.ctx.clock.now();
    }
  }
  if (!releasedAt) problems.push(`the one-day hold was still PENDING ${30 - 24} hours after its end`);
  else if (releasedAt.getTime() > plus(releaseAt, 60 + 31).getTime()) problems.push(`the hold ending ${releaseAt.toISOString()} was released only at ${releasedAt.toISOString()}`);
  const late = await db('checkout_sessions').where({ registration_id: id }).where('created_at', '>=', releaseAt).count<{ n: string }>({ n: '*' }).first();
  if (Number(late?.n ?? 0) > 0) problems.push(`${String(late?.n)} pay-now sessions were opened at or after the hold's end`);
  return { sent, problems };
}

/**
 * Two checkouts paid from one offer: the first expires unpaid as far as anyone knows, the family opens a
 * second, then the first is paid after all (claiming the offer). The office adds two places and a stranger's
 * card checkout holds them; then the family's second checkout is paid. It holds no places, so it may take
 * only places nobody holds: it must end kept with an alert, and the stranger must be registered.
 */
export async function probeTwoCheckoutsFromOneOffer(harness: PaymentsHarness): Promise<HoldProbeReport> {
  const { db } = harness.tdb;
  const start = harness.ctx.clock.now();
  const { event, token } = await offeredFamily(harness, { behind: false });
  const problems: string[] = [];
  const paid = async (sessionId: string | null) => JSON.parse((await harness.provider.deliver('checkout.session.completed', sessionId as string)).body) as { outcome?: string };
  if ((await claimByCard(harness, event.slug, token, '203.0.113.72')).status !== 303) problems.push('the first checkout from the offer was not opened');
  const first = await db('checkout_sessions').where({ event_id: event.id }).first<{ id: string; provider_session_id: string | null }>();
  harness.ctx.clock.set(plus(start, 32));
  if ((await claimByCard(harness, event.slug, token, '203.0.113.72')).status !== 303) problems.push('the second checkout from the offer was not opened after the first expired');
  const second = await db('checkout_sessions').where({ event_id: event.id }).whereNot({ id: first.id }).first<{ id: string; provider_session_id: string | null } | undefined>();
  if (!second) return { sent: 2, problems: [...problems, 'no second checkout was opened from the offer'] };
  harness.ctx.clock.set(plus(start, 33));
  await paid(first.provider_session_id);

  await db('events').where({ id: event.id }).update({ capacity: 5 });
  const stranger = new URLSearchParams({ name: 'Innocent Payer', email: 'innocent@example.org', payment: 'card' });
  for (const name of ['Ivy Payer', 'Ike Payer']) {
    stranger.append('attendee_name', name);
    stranger.append('attendee_tier', 'adult');
  }
  const innocent = await fetch(`${harness.server.url}/events/${event.slug}/register`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '203.0.113.73' },
    body: stranger.toString(),
  });
  await innocent.arrayBuffer();
  const held = await db('checkout_sessions').where({ event_id: event.id, places: 2, status: 'OPEN' }).first<{ id: string; provider_session_id: string | null } | undefined>();
  if (!held) return { sent: 4, problems: [...problems, `the stranger's card checkout did not hold the two new places (answered ${innocent.status})`] };

  harness.ctx.clock.set(plus(start, 35));
  const secondOutcome = await paid(second.provider_session_id);
  if (secondOutcome.outcome !== 'unfulfilled') problems.push(`the family's second paid checkout ended ${String(secondOutcome.outcome)}, not kept with an alert`);
  harness.ctx.clock.set(plus(start, 36));
  const heldOutcome = await paid(held.provider_session_id);
  if (heldOutcome.outcome !== 'completed') problems.push(`the innocent payer's checkout ended ${String(heldOutcome.outcome)}: their places were taken by another payment`);
  const unfulfilled = await db('checkout_sessions').where({ id: held.id, status: 'UNFULFILLED' }).first();
  if (unfulfilled) problems.push('the innocent payer is UNFULFILLED, their money kept');
  const taken = await db('registrations').where({ event_id: event.id }).whereIn('status', ['PENDING', 'PAID']).sum<{ n: string | null }>({ n: 'attendee_count' }).first();
  if (Number(taken?.n ?? 0) > 5) problems.push(`${String(taken?.n)} places registered on an event of 5`);
  return { sent: 6, problems };
}
