import http from 'node:http';
import { completeDelivery } from './completion.js';
import { startFloorContext } from './floor-context.js';

/**
 * The same-work floor server (bare node:http): the webhook's completion (case 2); see completion.ts.
 * BENCH_PORT: where it listens.
 */
const ctx = startFloorContext(process.env);
const WEBHOOK_PATH = '/api/stripe/webhook';

function readBody(request: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

async function route(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  const path = (request.url ?? '/').split('?')[0] ?? '/';
  if (request.method === 'POST' && path === WEBHOOK_PATH) {
    const outcome = await completeDelivery(ctx, await readBody(request), String(request.headers['stripe-signature'] ?? ''));
    if (outcome === 'bad_signature') response.writeHead(400).end();
    else response.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
    return;
  }
  response.writeHead(404).end();
}

const server = http.createServer((request, response) => {
  route(request, response).catch((error: unknown) => {
    process.stderr.write(`floor: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    if (!response.headersSent) response.writeHead(500).end();
  });
});
server.keepAliveTimeout = 72_000;
server.listen(Number(process.env.BENCH_PORT), '127.0.0.1');
process.once('SIGTERM', () => {
  server.close(() => void ctx.close());
  server.closeIdleConnections();
});
