import pg from 'pg';

/**
 * Reference for cases 1 and 3: the least a sweep can be: one connection, the
 * one set-based UPDATE, exit. Prints the number of rows it expired.
 */
const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
await client.connect();
const result = await client.query(
  `UPDATE checkout_sessions SET status = 'EXPIRED', payload_enc = NULL, updated_at = now()
   WHERE status = 'OPEN' AND expires_at <= now()`,
);
await client.end();
process.stdout.write(`${result.rowCount ?? 0}\n`);
