import { insertEvent } from '../../test/support/factories.js';
import type { PaymentsHarness } from '../../test/support/payments-harness.js';
import { CONFIRMATIONS_PER_ADDRESS_PER_HOUR } from '../../src/signup/confirmations.js';

/**
 * The plus-addressing probe: one mailbox written many ways (a `+tag` each time, dots and capitals
 * for a gmail address) from many clients. Every registration is made, but the mailbox gets no
 * more confirmations an hour than the per-mailbox limit allows, whoever asks.
 */
export interface PlusAddressingReport {
  posts: number;
  registrations: number;
  /** Confirmations queued for the one mailbox the posts all name. */
  confirmationsQueued: number;
  /** Posts answered with anything but the registration page's redirect. */
  refused: number;
}

function spelling(n: number, gmail: boolean): string {
  if (!gmail) return `victim+${n}@example.org`;
  const dotted = 'victim'.split('').join(n % 2 === 0 ? '.' : '');
  return `${n % 3 === 0 ? dotted.toUpperCase() : dotted}+${n}@${n % 2 === 0 ? 'googlemail.com' : 'gmail.com'}`;
}

export async function sendPlusAddressedPosts(harness: PaymentsHarness, posts: number, options: { gmail?: boolean } = {}): Promise<PlusAddressingReport> {
  const event = await insertEvent(harness.tdb.db, { capacity: null });
  let refused = 0;
  for (let n = 1; n <= posts; n += 1) {
    const body = new URLSearchParams({ name: 'Jo Victim', email: spelling(n, options.gmail ?? false), payment: 'bank', attendee_name: 'Jo Victim', attendee_tier: 'adult' });
    const answer = await fetch(`${harness.server.url}/events/${event.slug}/register`, {
      method: 'POST',
      redirect: 'manual',
      // A new client each time: the per-client cap must not be what stops it.
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': `198.51.100.${n % 250}` },
      body: body.toString(),
    });
    await answer.arrayBuffer();
    if (answer.status !== 303) refused += 1;
  }
  const registrations = await harness.tdb.db('registrations').where({ event_id: event.id }).count<{ count: string }>({ count: '*' }).first();
  const queued = await harness.tdb.db('queued_mail as q')
    .join('registrations as r', 'r.id', 'q.registration_id')
    .where({ 'r.event_id': event.id, 'q.kind': 'registration-confirmation' })
    .count<{ count: string }>({ count: '*' })
    .first();
  return { posts, registrations: Number(registrations?.count ?? 0), confirmationsQueued: Number(queued?.count ?? 0), refused };
}

/** Whether the probe held: every post registered, and the mailbox got at most its hourly limit. */
export function plusAddressingHeld(report: PlusAddressingReport): boolean {
  return report.refused === 0 && report.registrations === report.posts && report.confirmationsQueued <= CONFIRMATIONS_PER_ADDRESS_PER_HOUR;
}
