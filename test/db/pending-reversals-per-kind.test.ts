import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as migration from '../../migrations/20261125000100_pending_reversals_per_kind.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const at = (second: number) => new Date(Date.UTC(2026, 10, 22, 0, 0, second));
const rows = async () =>
  (await tdb.db('pending_reversals').orderBy(['payment_intent_id', 'kind']).select('payment_intent_id', 'kind', 'provider_event_id')) as Array<
    Record<string, string>
  >;

describe('pending reversals: one waiting row per PaymentIntent and kind', () => {
  it('keeps a refund and a dispute of the same payment; the down keeps only the earliest of each payment, and up again works', async () => {
    await tdb.db('pending_reversals').insert([
      { payment_intent_id: 'pi_a', kind: 'refund', provider_event_id: 'evt_a_refund', created_at: at(1) },
      { payment_intent_id: 'pi_a', kind: 'dispute', provider_event_id: 'evt_a_dispute', created_at: at(2) },
      // Same instant: the kind decides, as it does for a completion.
      { payment_intent_id: 'pi_b', kind: 'refund', provider_event_id: 'evt_b_refund', created_at: at(3) },
      { payment_intent_id: 'pi_b', kind: 'dispute', provider_event_id: 'evt_b_dispute', created_at: at(3) },
      { payment_intent_id: 'pi_c', kind: 'dispute', provider_event_id: 'evt_c_dispute', created_at: at(4) },
    ]);
    await expect(
      tdb.db('pending_reversals').insert({ payment_intent_id: 'pi_a', kind: 'refund', provider_event_id: 'evt_a_again', created_at: at(5) }),
    ).rejects.toThrow(/pending_reversals_pkey/);

    await tdb.db.transaction((trx) => migration.down(trx));
    expect(await rows()).toEqual([
      { payment_intent_id: 'pi_a', kind: 'refund', provider_event_id: 'evt_a_refund' },
      { payment_intent_id: 'pi_b', kind: 'dispute', provider_event_id: 'evt_b_dispute' },
      { payment_intent_id: 'pi_c', kind: 'dispute', provider_event_id: 'evt_c_dispute' },
    ]);
    await expect(
      tdb.db('pending_reversals').insert({ payment_intent_id: 'pi_a', kind: 'dispute', provider_event_id: 'evt_a_dispute', created_at: at(6) }),
    ).rejects.toThrow(/pending_reversals_pkey/);

    await tdb.db.transaction((trx) => migration.up(trx));
    await tdb.db('pending_reversals').insert({ payment_intent_id: 'pi_a', kind: 'dispute', provider_event_id: 'evt_a_dispute', created_at: at(6) });
    expect(await rows()).toHaveLength(4);
  });
});
