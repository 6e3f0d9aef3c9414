import http from 'node:http';
import pg from 'pg';
import Stripe from 'stripe';

/**
 * Reference for case 2: bare node:http, the signature verified with the
 * provider's package over the raw body (as ours does), one INSERT through a
 * pg pool of ours' size, 200. Nothing else: no framework, no transaction, no
 * staging row, no registration, no receipt.
 */
const secret = process.env.PSP_WEBHOOK_SECRET as string;
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
/**
 * BENCH_WEBHOOK_REFERENCE_ROUND_TRIPS=5 (diagnosis only): the same INSERT inside BEGIN … COMMIT with trivial
 * statements added up to that many round trips to the database, ours' count per completion, to show what the
 * round trips alone cost on this machine.
 */
const roundTrips = Math.max(1, Number(process.env.BENCH_WEBHOOK_REFERENCE_ROUND_TRIPS ?? 1));

async function record(event: { id: string; type: string }): Promise<void> {
  const insert = 'INSERT INTO processed_webhook_events (event_id, type) VALUES ($1, $2)';
  const values = [event.id, event.type];
  if (roundTrips === 1) {
    await pool.query(insert, values);
    return;
  }
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(insert, values);
    for (let i = 3; i < roundTrips; i++) await client.query('SELECT 1');
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

const server = http.createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    let event: { id: string; type: string };
    try {
      event = Stripe.webhooks.constructEvent(Buffer.concat(chunks), request.headers['stripe-signature'] ?? '', secret);
    } catch {
      response.writeHead(400).end();
      return;
    }
    record(event).then(
      () => response.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}'),
      () => response.writeHead(500).end(),
    );
  });
});

server.listen(Number(process.env.BENCH_PORT), '127.0.0.1');
process.once('SIGTERM', () => {
  server.close(() => void pool.end());
});
