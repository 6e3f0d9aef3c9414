import pg from 'pg';
import { createProviderClient } from '../../src/payments/provider.js';
import { loadConfig } from '../../src/config/index.js';

/**
 * Case 3's same-work floor: the one set-based UPDATE (as sweep-pg), then what ours must also do each run: ask
 * the card provider about each expired checkout still awaiting its word (at most 100 a run, oldest first, as
 * PROVIDER_CONFIRMS_PER_SWEEP), one session read each with the product's provider client, and record the
 * unpaid ones as unpaid and scrub them. No knex, no job_runs row, no logger. Prints the number it expired.
 */
const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
await client.connect();
const now = new Date();
const result = await client.query(
  `UPDATE checkout_sessions SET status = 'EXPIRED', payload_enc = NULL, updated_at = now()
   WHERE status = 'OPEN' AND expires_at <= now()`,
);
const awaiting = await client.query<{ id: string; provider_session_id: string }>(
  `SELECT id, provider_session_id FROM checkout_sessions
    WHERE status = 'EXPIRED' AND scrubbed_at IS NULL AND unpaid_confirmed_at IS NULL AND provider_session_id IS NOT NULL AND expires_at <= $1
    ORDER BY expires_at, id LIMIT 100`,
  [now],
);
if (awaiting.rows.length > 0) {
  const { config } = loadConfig(process.env as Record<string, string>, { cwd: process.cwd() });
  const provider = await createProviderClient(config);
  for (const row of awaiting.rows) {
    let session;
    try {
      session = await provider.checkout.sessions.retrieve(row.provider_session_id, { expand: ['payment_intent.latest_charge'] });
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) continue;
      break;
    }
    if (session.status === 'expired' && session.payment_status === 'unpaid') {
      await client.query(`UPDATE checkout_sessions SET unpaid_confirmed_at = $2, payload_enc = NULL, scrubbed_at = $2, updated_at = $2 WHERE id = $1`, [row.id, now]);
    }
  }
}
await client.end();
process.stdout.write(`${result.rowCount ?? 0}\n`);
