import { getEventBySlug, type EventRecord } from '../../src/admin/events.js';
import { insertEvent } from './factories.js';
import { startPaymentsHarness, type PaymentsHarness } from './payments-harness.js';

/** The payments harness at `now` with one event that takes card payments and has places to spare. */
export async function openCardEventHarness(now: Date): Promise<{ harness: PaymentsHarness; event: EventRecord }> {
  const harness = await startPaymentsHarness({ now });
  const { slug } = await insertEvent(harness.tdb.db, { online_payment: true, capacity: 50 });
  return { harness, event: (await getEventBySlug(harness.tdb.db, slug)) as EventRecord };
}
