import pg from 'pg';

/**
 * Reference for case 6: the week's errors grouped by fingerprint in one
 * GROUP BY, and everything older than 90 days gone in one DELETE. No samples,
 * no tracker, no batching. Prints "<groups> <rows purged>".
 */
const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
await client.connect();
const groups = await client.query(
  `SELECT fingerprint, count(*) AS count, min(created_at) AS first_seen, max(created_at) AS last_seen
   FROM error_logs WHERE created_at > now() - interval '7 days' GROUP BY fingerprint`,
);
const purged = await client.query(`DELETE FROM error_logs WHERE created_at < now() - interval '90 days'`);
await client.end();
process.stdout.write(`${groups.rowCount ?? 0} ${purged.rowCount ?? 0}\n`);
