import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as migration from '../../migrations/20261129000100_operations_alerts_lookups.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const BY_SESSION = 'operations_alerts_provider_session_id_kind_index';
const BY_PAYMENT_INTENT = 'operations_alerts_payment_intent_id_kind_index';
const BY_CHECKOUT = 'operations_alerts_checkout_session_id_kind_index';

const alertIndexes = async () =>
  (await tdb.db('pg_indexes').where({ tablename: 'operations_alerts' }).orderBy('indexname').pluck('indexname')) as string[];

/** The plan's JSON, as text: which scans, on which indexes. */
async function plan(db: Knex | Knex.Transaction, query: Knex.QueryBuilder | Knex.Raw): Promise<string> {
  const { sql, bindings } = query.toSQL();
  const result = await db.raw<{ rows: Array<{ 'QUERY PLAN': unknown }> }>(`EXPLAIN (FORMAT JSON) ${sql}`, bindings as Knex.RawBinding[]);
  return JSON.stringify(result.rows[0]?.['QUERY PLAN']);
}

describe('operations_alerts lookups by provider session and PaymentIntent', () => {
  it('the migration is applied, and rolls back and applies again', async () => {
    expect(await tdb.db('knex_migrations').pluck('name')).toContain('20261129000100_operations_alerts_lookups');
    expect(await alertIndexes()).toEqual(expect.arrayContaining([BY_PAYMENT_INTENT, BY_SESSION]));
    const definitions = (await tdb.db('pg_indexes').whereIn('indexname', [BY_SESSION, BY_PAYMENT_INTENT]).orderBy('indexname').pluck('indexdef')) as string[];
    expect(definitions).toEqual([
      expect.stringMatching(/\(payment_intent_id, kind\) WHERE \(payment_intent_id IS NOT NULL\)$/),
      expect.stringMatching(/\(provider_session_id, kind\) WHERE \(provider_session_id IS NOT NULL\)$/),
    ]);

    expect(await alertIndexes()).toContain(BY_CHECKOUT);
    await tdb.db.transaction((trx) => migration.down(trx));
    expect(await alertIndexes()).not.toContain(BY_CHECKOUT);
    expect(await alertIndexes()).not.toEqual(expect.arrayContaining([BY_SESSION]));
    expect(await alertIndexes()).not.toEqual(expect.arrayContaining([BY_PAYMENT_INTENT]));
    await tdb.db.transaction((trx) => migration.up(trx));
    expect(await alertIndexes()).toEqual(expect.arrayContaining([BY_PAYMENT_INTENT, BY_SESSION]));
  });

  it("the webhooks' and reconcile's once-per-session checks use them", async () => {
    // A year of a busy church's alerts: most carry one id or neither.
    await tdb.db.raw(
      `INSERT INTO operations_alerts (kind, reason, details, provider_session_id, payment_intent_id, checkout_session_id)
       SELECT (ARRAY['unknown_checkout', 'reversal_unfulfilled', 'dispute_after_cancellation', 'reconcile_mismatch', 'payment_unreadable'])[1 + n % 5],
              'seeded', jsonb_build_object('reversal', CASE WHEN n % 2 = 0 THEN 'refund' ELSE 'dispute' END),
              CASE WHEN n % 5 IN (0, 1) THEN 'cs_' || n END,
              CASE WHEN n % 5 IN (1, 2) THEN 'pi_' || n END,
              CASE WHEN n % 5 = 3 THEN n::text END
         FROM generate_series(1, 5000) AS n`,
    );
    await tdb.db.raw('ANALYZE operations_alerts');

    // Each query as the code writes it (src/payments/webhook/completion.ts, reconcile/ours.ts, webhook/reversal.ts,
    // office/registrations/kept-card-payment.ts), run one after another.
    const db = tdb.db;
    const checks: Array<[string, Knex.QueryBuilder | Knex.Raw, string]> = [
      ['completion: unknown checkout alerted?', db('operations_alerts').where({ kind: 'unknown_checkout', provider_session_id: 'cs_1000' }).first('id'), BY_SESSION],
      [
        'reconcile: which listed sessions are alerted',
        db('operations_alerts').where('kind', 'unknown_checkout').whereIn('provider_session_id', ['cs_5', 'cs_10', 'cs_missing']).select('provider_session_id'),
        BY_SESSION,
      ],
      ['dispute of a cancelled registration alerted?', db('operations_alerts').where({ kind: 'dispute_after_cancellation', payment_intent_id: 'pi_2' }).first('id'), BY_PAYMENT_INTENT],
      [
        'reversal of a kept payment alerted?',
        db('operations_alerts').where({ kind: 'reversal_unfulfilled', payment_intent_id: 'pi_1001' }).whereRaw(`details->>'reversal' = ?`, ['dispute']).first('id'),
        BY_PAYMENT_INTENT,
      ],
      ['reconcile: mismatch already alerted for this checkout?', db('operations_alerts').where({ kind: 'reconcile_mismatch', checkout_session_id: '1003' }).first('id'), BY_CHECKOUT],
      [
        'kept payment: its reversals',
        db('operations_alerts').where({ kind: 'reversal_unfulfilled', payment_intent_id: 'pi_1001' }).select('details'),
        BY_PAYMENT_INTENT,
      ],
    ];
    for (const [what, query, index] of checks) {
      expect(await plan(db, query), what).toContain(`"Index Name":"${index}"`);
    }
  });

  it("reconcile's per-checkout subqueries probe the PaymentIntent index, also with sequential scans off", async () => {
    const subquery = tdb.db.raw(
      `SELECT c.id,
              (SELECT array_agg(DISTINCT a.details->>'reversal') FROM operations_alerts a
                WHERE a.kind = 'reversal_unfulfilled' AND a.payment_intent_id = c.payment_intent_id) AS reversals_alerted
         FROM checkout_sessions c WHERE c.id = ?`,
      ['00000000-0000-0000-0000-000000000000'],
    );
    await tdb.db.transaction(async (trx) => {
      await trx.raw('SET LOCAL enable_seqscan = off');
      expect(await plan(trx, subquery)).toContain(`"Index Name":"${BY_PAYMENT_INTENT}"`);
    });
  });
});
