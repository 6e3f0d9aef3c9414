import { getEventBySlug } from '../../src/office/events.js';
import { type EventRecord } from '../../src/registrations/event-record.js';
import { registerForEvent } from '../../src/signup/register.js';
import { insertEvent } from './factories.js';
import { startPaymentsHarness, type PaymentsHarness } from './payments-harness.js';

/** The payments harness at `now` with one event that takes card payments and has places to spare. */
export async function openCardEventHarness(now: Date): Promise<{ harness: PaymentsHarness; event: EventRecord }> {
  const harness = await startPaymentsHarness({ now });
  const { slug } = await insertEvent(harness.tdb.db, { online_payment: true, capacity: 50 });
  return { harness, event: (await getEventBySlug(harness.tdb.db, slug)) as EventRecord };
}

/** Another event of the harness that takes card payments (and bank transfers), with `capacity` places. */
export async function addCardEvent(harness: PaymentsHarness, capacity: number | null = 20): Promise<EventRecord> {
  const { slug } = await insertEvent(harness.tdb.db, { capacity, online_payment: true });
  return (await getEventBySlug(harness.tdb.db, slug)) as EventRecord;
}

/** A one-attendee registration to be paid by bank transfer, made through the public registration path: PENDING. */
export async function registerByBank(harness: PaymentsHarness, event: EventRecord, contact = { name: 'Bank Payer', email: 'bank.payer@example.org' }, attendee = 'Guest'): Promise<string> {
  const outcome = await registerForEvent(harness.ctx, event, { contact, attendees: [{ name: attendee, tier: 'adult' }], family: false, payment: 'bank' });
  if (outcome.kind !== 'registered') throw new Error('expected a bank registration');
  return outcome.registrationId;
}
