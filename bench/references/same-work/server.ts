import http from 'node:http';
import type Stripe from 'stripe';
import { createProviderClient } from '../../../src/payments/provider.js';
import { completeDelivery } from './completion.js';
import { startFloorContext } from './floor-context.js';
import { startOfferPass } from './offer-pass.js';
import { joinWaitlist, register, showEvent } from './rush.js';

/**
 * The same-work floor server (bare node:http): the webhook's completion (case 2, completion.ts), and the
 * event page, the registration post and the waiting list's join (case 9, rush.ts), and serve's offer pass
 * every 30 s (offer-pass.ts).
 * BENCH_PORT: where it listens.
 */
const ctx = startFloorContext(process.env);
const offers = startOfferPass(ctx);
const WEBHOOK_PATH = '/api/stripe/webhook';
let provider: Stripe | undefined;
const EVENT_ROUTE = /^\/events\/([^/]+)(\/register|\/waitlist)?$/;

function send(response: http.ServerResponse, reply: { status: number; headers?: Record<string, string>; body: string }): void {
  response.writeHead(reply.status, { 'content-type': 'text/html; charset=utf-8', ...reply.headers }).end(reply.body);
}

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
  const event = EVENT_ROUTE.exec(path);
  if (event) {
    const slug = decodeURIComponent(event[1] as string);
    if (request.method === 'GET' && !event[2]) return send(response, await showEvent(ctx, slug));
    if (request.method === 'POST' && event[2] === '/register') {
      provider ??= await createProviderClient(ctx.config);
      return send(response, await register(ctx, slug, await readBody(request), provider, request.socket.remoteAddress ?? ""));
    }
    if (request.method === 'POST' && event[2] === '/waitlist') return send(response, await joinWaitlist(ctx, slug, await readBody(request), request.socket.remoteAddress ?? ""));
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
  server.close(() => void offers.stop().then(() => ctx.close()));
  server.closeIdleConnections();
});
