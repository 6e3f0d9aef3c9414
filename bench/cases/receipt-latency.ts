import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import nodemailer from 'nodemailer';
import { freePort } from '../../src/db/embedded.js';
import { signDeliveries, type SessionToComplete } from '../support/deliveries.js';
import { ratioRow, type BenchEnv, type CaseReport } from '../support/harness.js';
import { BIN } from '../support/paths.js';
import { startNode, waitForHttp } from '../support/processes.js';
import { round } from '../support/stats.js';
import { noDelayConnection } from '../references/tuned-socket.js';
import { stageSessions } from './webhook.js';

const DATABASE = 'bench_receipts';
const PER_SECOND = Number(process.env.BENCH_RECEIPT_RATE ?? 50);
const P95_LIMIT_MS = 2_000;
const COMPLETIONS = 500;
const WEBHOOK_PATH = '/api/stripe/webhook';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};

/** Calls `send(i)` for i < count at `perSecond`, without waiting for one to finish before starting the next. */
async function paced(count: number, perSecond: number, send: (i: number) => Promise<void>): Promise<void> {
  const started = performance.now();
  const inFlight: Array<Promise<void>> = [];
  for (let i = 0; i < count; i++) {
    const due = started + (i * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 0) await pause(wait);
    inFlight.push(send(i));
  }
  await Promise.all(inFlight);
}

async function acceptance(env: BenchEnv, addresses: string[], since: Map<string, number>, timeoutMs = 120_000): Promise<number[]> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const latencies = addresses.map((address) => {
      const accepted = env.sink.acceptedAt(address);
      const start = since.get(address);
      // A receipt can be accepted before the client has read the webhook's answer: that is no wait at all.
      return accepted !== undefined && start !== undefined ? Math.max(0, accepted - start) : undefined;
    });
    if (latencies.every((latency) => latency !== undefined)) return latencies as number[];
    if (performance.now() > deadline) throw new Error(`${latencies.filter((l) => l === undefined).length} receipts never arrived`);
    await pause(20);
  }
}

/**
 * BENCH_RECEIPT_RATE and BENCH_RECEIPT_COUNT change the pace and the number of
 * completions (default 50 a second, 500 at the default scale).
 *
 * Case 8: from the webhook's 200 to the mail server accepting the receipt, at
 * 50 completions a second, through `eventops serve`. Floor: the same rendered
 * receipts sent at the same pace through a pooled nodemailer transport of the
 * product's size, timed from the send call to acceptance.
 */
export async function receiptLatency(env: BenchEnv): Promise<CaseReport> {
  const count = Number(process.env.BENCH_RECEIPT_COUNT ?? Math.max(250, Math.round(COMPLETIONS * env.scale * 10)));
  env.log(`case 8: staging ${count} checkout sessions`);
  const sessions = await stageSessions(env, count, DATABASE);
  const secret = env.appEnv('postgres://unused').PSP_WEBHOOK_SECRET as string;
  const port = await freePort();
  const server = startNode([BIN, 'serve', '--port', String(port), '--host', '127.0.0.1'], {
    cwd: env.cwd,
    tmpDir: env.tmpDir,
    env: env.appEnv(env.database.urlFor(DATABASE)),
    logFile: path.join(env.tmpDir, 'serve-receipts.log'),
  });
  try {
    await waitForHttp(`http://127.0.0.1:${port}/healthz`);
    const deliveries = signDeliveries(sessions, secret, 900_000);
    const answeredAt = new Map<string, number>();
    // Case 2 mails the same seeded addresses: forget its acceptances.
    env.sink.reset();
    env.sink.capture(true);
    await paced(count, PER_SECOND, async (i) => {
      const delivery = deliveries[i] as { body: string; signature: string };
      const response = await fetch(`http://127.0.0.1:${port}${WEBHOOK_PATH}`, {
        method: 'POST',
        body: delivery.body,
        headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': delivery.signature },
      });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`webhook answered ${response.status}`);
      answeredAt.set((sessions[i] as SessionToComplete).email, performance.now());
    });
    const addresses = sessions.map((s) => s.email);
    const ours = await acceptance(env, addresses, answeredAt);
    const receipts = env.sink.captured().filter((m) => m.to.some((to) => answeredAt.has(to)));
    env.sink.capture(false);
    const floor = await pooledFloor(env, receipts);
    const oursP95 = percentile(ours, 95);
    const floorP95 = percentile(floor, 95);
    const serverRun = await server.stop();
    return {
      results: [
        ratioRow({
          name: `8 receipt latency p95 at ${PER_SECOND}/s`,
          scale: env.scale,
          ours: [oursP95],
          reference: [floorP95],
          peakRssMb: serverRun.rssMb ?? null,
          extraTarget: { text: `p95 ≤ ${P95_LIMIT_MS} ms`, met: oursP95 <= P95_LIMIT_MS },
        }),
      ],
      notes: [
        `case 8, ${count} completions at ${PER_SECOND}/s: webhook 200 → receipt accepted p50 ${round(percentile(ours, 50), 1)} ms, ` +
          `p95 ${round(oursP95, 1)} ms, max ${round(Math.max(...ours), 1)} ms; floor (pooled send of the same receipts at the same pace) ` +
          `p50 ${round(percentile(floor, 50), 1)} ms, p95 ${round(floorP95, 1)} ms`,
      ],
    };
  } finally {
    if (server.child.exitCode === null) await server.stop();
    // BENCH_KEEP_LOG=FILE keeps the server's log (when each batch of mail left) for diagnosis.
    if (process.env.BENCH_KEEP_LOG) fs.copyFileSync(path.join(env.tmpDir, 'serve-receipts.log'), process.env.BENCH_KEEP_LOG);
    env.sink.capture(false);
    await env.database.drop(DATABASE);
  }
}

async function pooledFloor(env: BenchEnv, receipts: Array<{ from: string; to: string[]; raw: string }>): Promise<number[]> {
  const smtp = env.sink.env();
  const transport = nodemailer.createTransport({
    pool: true,
    maxConnections: 3,
    host: smtp.SMTP_HOST,
    port: Number(smtp.SMTP_PORT),
    secure: false,
    auth: { user: smtp.SMTP_USER as string, pass: smtp.SMTP_APP_PASSWORD as string },
    getSocket: noDelayConnection,
  });
  try {
    const floorAddress = (address: string) => `floor-${address}`;
    const sentAt = new Map<string, number>();
    await paced(receipts.length, PER_SECOND, async (i) => {
      const message = receipts[i] as { from: string; to: string[]; raw: string };
      const to = message.to.map(floorAddress);
      sentAt.set(to[0] as string, performance.now());
      await transport.sendMail({ envelope: { from: message.from, to }, raw: message.raw });
    });
    return acceptance(env, receipts.map((m) => floorAddress(m.to[0] as string)), sentAt);
  } finally {
    transport.close();
  }
}
