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
    pool.query('INSERT INTO processed_webhook_events (event_id, type) VALUES ($1, $2)', [event.id, event.type]).then(
      () => response.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}'),
      () => response.writeHead(500).end(),
    );
  });
});

server.listen(Number(process.env.BENCH_PORT), '127.0.0.1');
process.once('SIGTERM', () => {
  server.close(() => void pool.end());
});
