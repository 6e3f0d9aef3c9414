import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { freePort } from '../../src/db/embedded.js';
import { setSetting } from '../../src/settings.js';
import { startFakeProvider, type FakeProvider } from '../../test/support/fake-provider.js';
import { MIGRATED, settle } from '../support/database.js';
import { ratioRow, type BenchEnv, type CaseReport, type CaseResult, type RushSummary } from '../support/harness.js';
import { BENCH_BUILD, BIN, ROOT, reference } from '../support/paths.js';
import { startNode, waitForHttp, waitForPort, type ServerProcess } from '../support/processes.js';
import { seededName, seededUuid } from '../support/seeded.js';
import { measurePageCpu, type PageCpu } from '../support/page-cpu.js';
import { round } from '../support/stats.js';

/**
 * Case 9, the rush: the minute a camp opens. One event (250 places, two tiers, a family waiver, bank and
 * card with the fee passed on, the waiting list on, three questions, one sensitive); 300 families, each
 * from its own loopback address (TRUST_PROXY off), 40 of them from one shared address (the church Wi-Fi,
 * named in CHURCH_NETWORKS as docs/operations.md tells a church to); over 60 s 2,000 page
 * views and 300 form posts (60% bank, 40% card, each card post followed 2–20 s later by its completion
 * from the local provider fake); whoever is told "sold out" joins the waiting list. The same load runs
 * against the same-work floor (references/same-work) on a copy of the same database.
 *
 * BENCH_RUSH_SCALE (default 1) shortens it for quick checks: 0.2 is 12 s, 60 families, 50 places, 400 views.
 */

const DATABASE = 'bench_rush';
const FLOOR_DATABASE = 'bench_rush_floor';
const SLUG = 'summer-camp';
const SHARED_ADDRESS = '127.0.9.1';
const RUSH_EVENT_ID = seededUuid('rush-event');
/** A small event each side serves first, unmeasured (see warmUp). */
const WARM_UP_SLUG = 'leaders-day';
const WARM_UP_CAPACITY = 8;
const TARGETS = { pageP99Ms: 100, postP99Ms: 300, confirmationP95Ms: 5_000, rssMb: 200, ratio: 2 };
const QUESTIONS = [
  { id: 'photos', label: 'May we use photos of your family?', type: 'yesno', appliesTo: 'registration', required: true },
  { id: 'dietary', label: 'Dietary needs', type: 'text', appliesTo: 'attendee' },
  { id: 'medical', label: 'Medical conditions we should know about', type: 'longtext', appliesTo: 'attendee', sensitive: true },
];

/** A seeded generator (mulberry32): the same families, sizes and times on every run and on both sides. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Family {
  index: number;
  address: string;
  size: number;
  card: boolean;
  /** ms from the start: the first view, the post. */
  arrive: number;
  post: number;
  /** 2–20 s after the post's answer: the payer finishes at the provider. */
  payDelay: number;
}

interface Plan {
  families: Family[];
  /** Extra views (refreshes), ms from the start, by family index. */
  views: Array<{ at: number; family: number }>;
  durationMs: number;
  capacity: number;
}

function plan(scale: number): Plan {
  const next = random(20270301);
  const durationMs = 60_000 * scale;
  const count = Math.round(300 * scale);
  const shared = Math.round(40 * scale);
  const sizes = [1, 2, 2, 3, 3, 3, 4, 4, 2, 1];
  const families = Array.from({ length: count }, (_, index) => {
    const arrive = next() * durationMs * 0.6;
    const post = Math.min(durationMs, arrive + 3_000 * scale + next() * 20_000 * scale);
    return {
      index,
      address: index < shared ? SHARED_ADDRESS : `127.1.${Math.floor(index / 250)}.${(index % 250) + 1}`,
      size: sizes[Math.floor(next() * sizes.length)] as number,
      card: index % 5 < 2,
      arrive,
      post,
      payDelay: 2_000 + next() * 18_000,
    };
  });
  const extra = Math.max(0, Math.round(2_000 * scale) - count);
  const views = Array.from({ length: extra }, () => ({ at: next() * durationMs, family: Math.floor(next() * count) }));
  return { families, views, durationMs, capacity: Math.round(250 * scale) };
}

async function buildDatabase(env: BenchEnv, capacity: number): Promise<void> {
  await env.database.create(DATABASE, MIGRATED);
  const db = env.database.connect(DATABASE, 1);
  try {
    // Both events take bank and card (the fee passed on) and the waiting list, and ask the same questions.
    const event = (fields: Record<string, unknown>) => ({
      published: true,
      online_payment: true,
      pass_card_fee: true,
      max_attendees_per_registration: 6,
      waitlist_enabled: true,
      questions: JSON.stringify(QUESTIONS),
      ...fields,
    });
    await db('events').insert(
      event({
        id: seededUuid('warm-up-event'),
        slug: WARM_UP_SLUG,
        title: 'Leaders Day',
        location: 'Church hall',
        starts_at: new Date(Date.now() + 30 * 86_400_000),
        capacity: WARM_UP_CAPACITY,
        pricing: JSON.stringify({ tiers: [{ id: 'adult', label: 'Adult', price: 4000 }, { id: 'child', label: 'Child', price: 2000 }] }),
      }),
    );
    await db('events').insert(
      event({
        id: RUSH_EVENT_ID,
        slug: SLUG,
        title: 'Summer Camp',
        location: 'Camp Wollemi, 12 Ridge Rd',
        starts_at: new Date(Date.now() + 60 * 86_400_000),
        capacity,
        pricing: JSON.stringify({
          tiers: [
            { id: 'adult', label: 'Adult', price: 18000 },
            { id: 'child', label: 'Child', price: 9000 },
          ],
          familyWaiver: { maxChargedTickets: 3 },
        }),
      }),
    );
    for (const [key, value] of [
      ['church.name', 'Grace Community Church'],
      ['bank.accountName', 'Grace Community Church'],
      ['bank.bsb', '062-000'],
      ['bank.accountNumber', '1234 5678'],
    ] as const) {
      await setSetting(db, key, value, new Date());
    }
    await settle(db, ['events', 'app_settings']);
  } finally {
    await db.destroy();
  }
  await env.database.create(FLOOR_DATABASE, DATABASE);
}

interface Answer {
  status: number;
  ms: number;
  location?: string;
  retryAfter?: number;
  at: number;
}

function request(port: number, agent: http.Agent, method: 'GET' | 'POST', target: string, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: target,
        agent,
        headers: body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          const at = performance.now();
          resolve({
            status: res.statusCode ?? 0,
            ms: at - started,
            at,
            location: typeof res.headers.location === 'string' ? res.headers.location : undefined,
            retryAfter: res.headers['retry-after'] ? Number(res.headers['retry-after']) : undefined,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function formBody(family: Family, email: string): string {
  const name = seededName(family.index);
  const contact = `${name.first} ${name.last}`;
  const form = new URLSearchParams({ name: contact, email, payment: family.card ? 'card' : 'bank', 'q.photos': family.index % 3 === 0 ? 'no' : 'yes' });
  if (family.size >= 3) form.set('family', 'on');
  for (let row = 0; row < family.size; row++) {
    form.append('attendee_name', row === 0 ? contact : `${name.first} ${name.last} ${row + 1}`);
    form.append('attendee_tier', row < 2 ? 'adult' : 'child');
    form.set(`q.${row}.dietary`, row % 2 === 0 ? 'none' : 'vegetarian');
    if ((family.index + row) % 4 === 0) form.set(`q.${row}.medical`, 'asthma: inhaler in bag');
  }
  return form.toString();
}

/**
 * Each side first serves a small event of its own, unmeasured, one request at a time: its page, bank and card
 * registrations (each card one paid), a post refused as full and a waiting-list join, from addresses the rush never
 * uses. A church's server has been up for days when a camp opens, and has served such requests: what the rush measures
 * is its minute, not the first requests of a process (the cold start has its own case). Both sides get the same
 * warm-up, and so does this process, whose provider fake and mail sink serve both.
 */
async function warmUp(port: number, provider: FakeProvider): Promise<void> {
  const families: Family[] = Array.from({ length: 6 }, (_, index) => ({
    index: 10_000 + index,
    address: `127.2.0.${index + 1}`,
    size: 2,
    card: index % 2 === 1,
    arrive: 0,
    post: 0,
    payDelay: 0,
  }));
  for (const [step, family] of families.entries()) {
    const agent = new http.Agent({ keepAlive: false, localAddress: family.address });
    try {
      const email = `warm-up${step}@example.org`;
      await request(port, agent, 'GET', `/events/${WARM_UP_SLUG}`);
      const answer = await request(port, agent, 'POST', `/events/${WARM_UP_SLUG}/register`, formBody(family, email));
      const sessionId = /\/pay\/([^/?]+)/.exec(answer.location ?? '')?.[1];
      if (answer.status === 303 && family.card && sessionId) await provider.deliver('checkout.session.completed', sessionId);
      if (answer.status === 409) {
        await request(port, agent, 'POST', `/events/${WARM_UP_SLUG}/waitlist`, new URLSearchParams({ name: 'Warm Up', email, places: '2' }).toString());
      }
    } finally {
      agent.destroy();
    }
  }
}

interface SideRun {
  pages: number[];
  posts: number[];
  /** The same posts by what they were: a bank registration, a card checkout, one refused as sold out (409), a waiting-list join. */
  postsByKind: Record<PostKind, number[]>;
  /** Every post's time, kind and seconds from the rush's start: the tail named by when it came. */
  postLog: Array<{ ms: number; kind: PostKind; atS: number }>;
  confirmations: number[];
  /** The same by what was confirmed: a bank registration (from its post's answer), a card receipt (from the provider's post). */
  confirmationsByKind: { bank: number[]; card: number[] };
  missingConfirmations: number;
  registered: number;
  cardStarted: number;
  waitlisted: number;
  rateLimited: number;
  errors: string[];
}

type PostKind = 'bank' | 'card' | 'refused' | 'join' | 'other';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};

/** Drives one side with the plan; card payments are completed by the provider fake at their delay. */
async function drive(env: BenchEnv, port: number, side: string, load: Plan, provider: FakeProvider): Promise<SideRun> {
  const run: SideRun = { pages: [], posts: [], postsByKind: { bank: [], card: [], refused: [], join: [], other: [] }, postLog: [], confirmations: [], confirmationsByKind: { bank: [], card: [] }, missingConfirmations: 0, registered: 0, cardStarted: 0, waitlisted: 0, rateLimited: 0, errors: [] };
  const agents = new Map<string, http.Agent>();
  const agentFor = (family: Family) => {
    // One connection pool per family (a phone), bound to its address; the Wi-Fi families share the address, not the phone.
    const key = `${family.index}`;
    let agent = agents.get(key);
    if (!agent) agents.set(key, (agent = new http.Agent({ keepAlive: true, maxSockets: 2, localAddress: family.address })));
    return agent;
  };
  const emailOf = (family: Family) => `family${family.index}.${side}@example.org`;
  const answeredAt = new Map<string, number>();
  const cardPayers = new Set<string>();
  const completions: Array<Promise<void>> = [];
  const started = performance.now();
  const at = (ms: number) => pause(started + ms - performance.now());
  const deadline = started + load.durationMs + 120_000;
  const page = async (family: Family) => {
    const answer = await request(port, agentFor(family), 'GET', `/events/${SLUG}`);
    if (answer.status !== 200) run.errors.push(`page ${answer.status}`);
    else run.pages.push(answer.ms);
  };
  /** A post, sent again after Retry-After when a form's rate limit refuses it (a shared address's limit). */
  const post = async (family: Family, target: string, body: string): Promise<Answer> => {
    for (;;) {
      const answer = await request(port, agentFor(family), 'POST', target, body);
      run.posts.push(answer.ms);
      const kind = postKind(target, family, answer.status);
      run.postsByKind[kind].push(answer.ms);
      run.postLog.push({ ms: answer.ms, kind, atS: (answer.at - started) / 1000 });
      if (answer.status !== 429 || performance.now() > deadline) return answer;
      run.rateLimited++;
      await pause((answer.retryAfter ?? 5) * 1000);
    }
  };
  const postKind = (target: string, family: Family, status: number): PostKind =>
    target.endsWith('/waitlist') ? 'join' : status === 409 ? 'refused' : status !== 303 ? 'other' : family.card ? 'card' : 'bank';
  const familyRun = async (family: Family) => {
    await at(family.arrive);
    await page(family);
    await at(family.post);
    const email = emailOf(family);
    const answer = await post(family, `/events/${SLUG}/register`, formBody(family, email));
    if (answer.status === 303 && family.card) {
      run.cardStarted++;
      const sessionId = /\/pay\/([^/?]+)/.exec(answer.location ?? '')?.[1];
      if (!sessionId) return void run.errors.push(`card post answered ${answer.location ?? 'no location'}`);
      completions.push(
        pause(family.payDelay).then(async () => {
          const sent = performance.now();
          const delivered = await provider.deliver('checkout.session.completed', sessionId);
          if (delivered.status !== 200) run.errors.push(`webhook ${delivered.status}`);
          // The card payer's confirmation is the receipt: timed from the provider's post being sent (its handling is part of the wait).
          answeredAt.set(email, sent);
          cardPayers.add(email);
        }),
      );
      return;
    }
    if (answer.status === 303) {
      run.registered++;
      answeredAt.set(email, answer.at);
      return;
    }
    if (answer.status === 409) {
      const joined = await post(family, `/events/${SLUG}/waitlist`, new URLSearchParams({ name: `Family ${family.index}`, email, places: String(family.size) }).toString());
      if (joined.status === 201 || joined.status === 202) run.waitlisted++;
      else run.errors.push(`waitlist ${joined.status}`);
      return;
    }
    run.errors.push(`register ${answer.status}`);
  };
  await Promise.all([
    ...load.families.map((family) => familyRun(family).catch((error: unknown) => void run.errors.push(String(error)))),
    ...load.views.map(async (view) => {
      await at(view.at);
      await page(load.families[view.family] as Family).catch((error: unknown) => void run.errors.push(String(error)));
    }),
  ]);
  await Promise.all(completions);
  // Receipts of completions the event could no longer fit are never sent (ours alerts the office instead): counted as missing.
  const until = performance.now() + 30_000;
  while (performance.now() < until && [...answeredAt.keys()].some((email) => env.sink.acceptedAt(email) === undefined)) await pause(200);
  for (const [email, sent] of answeredAt) {
    const accepted = env.sink.acceptedAt(email);
    if (accepted === undefined || accepted < sent - 1_000) run.missingConfirmations++;
    else {
      run.confirmations.push(Math.max(0, accepted - sent));
      run.confirmationsByKind[cardPayers.has(email) ? 'card' : 'bank'].push(Math.max(0, accepted - sent));
    }
  }
  for (const agent of agents.values()) agent.destroy();
  return run;
}

interface Places {
  registered: number;
  offered: number;
  waiting: number;
  unfulfilled: number;
}

async function placesOf(env: BenchEnv, database: string): Promise<Places> {
  const db = env.database.connect(database, 1);
  try {
    const { rows } = await db.raw<{ rows: Array<Record<keyof Places, string>> }>(
      `SELECT (SELECT COALESCE(sum(attendee_count), 0) FROM registrations WHERE status IN ('PENDING','PAID') AND event_id = :id) AS registered,
              (SELECT COALESCE(sum(places), 0) FROM waitlist_entries WHERE state = 'OFFERED' AND event_id = :id) AS offered,
              (SELECT count(*) FROM waitlist_entries WHERE state = 'WAITING' AND event_id = :id) AS waiting,
              (SELECT count(*) FROM checkout_sessions WHERE status = 'UNFULFILLED' AND event_id = :id) AS unfulfilled`,
      { id: RUSH_EVENT_ID },
    );
    const row = rows[0] as Record<keyof Places, string>;
    return { registered: Number(row.registered), offered: Number(row.offered), waiting: Number(row.waiting), unfulfilled: Number(row.unfulfilled) };
  } finally {
    await db.destroy();
  }
}

/** Both sides offer freed places every 30 s: the places once that pass has run (or 40 s have gone by). */
async function afterOfferPass(env: BenchEnv, database: string, capacity: number): Promise<Places> {
  let places = await placesOf(env, database);
  for (let waited = 0; places.registered + places.offered < capacity && places.waiting > 0 && waited < 40_000; waited += 1_000) {
    await pause(1_000);
    places = await placesOf(env, database);
  }
  return places;
}

/** The page's own cost, measured after each side's rush on its own server: views and connections at a time. */
const PAGE_CPU_VIEWS = 300;
const PAGE_CPU_CONCURRENCY = 10;

function pageCpu(env: BenchEnv, port: number, server: ServerProcess): Promise<PageCpu | undefined> {
  return measurePageCpu({
    port,
    target: `/events/${SLUG}`,
    pid: server.child.pid,
    dataDir: path.join(env.tmpDir, 'pg', 'data'),
    views: PAGE_CPU_VIEWS,
    concurrency: PAGE_CPU_CONCURRENCY,
  });
}

const describeCpu = (cpu: PageCpu | undefined) =>
  cpu ? `server ${round(cpu.serverMs, 2)} ms + database ${round(cpu.databaseMs, 2)} ms` : 'not measured (no /proc)';

export async function rush(env: BenchEnv): Promise<CaseReport> {
  const scale = Number(process.env.BENCH_RUSH_SCALE ?? 1);
  if (!Number.isFinite(scale) || scale <= 0) throw new Error(`BENCH_RUSH_SCALE must be a positive number, got ${process.env.BENCH_RUSH_SCALE}`);
  const load = plan(scale);
  env.log(`case 9: the rush, ${load.families.length} families over ${load.durationMs / 1000} s, ${load.capacity} places (BENCH_RUSH_SCALE=${scale})`);
  await buildDatabase(env, load.capacity);
  const secret = env.appEnv('postgres://unused').PSP_WEBHOOK_SECRET as string;
  // The provider fake reads its example objects from the checkout root as test/support/cli.ts finds it, which for
  // the compiled bench is bench/.build: put them there.
  const fixtures = path.join(path.dirname(BENCH_BUILD), 'test', 'fixtures', 'provider');
  fs.mkdirSync(fixtures, { recursive: true });
  fs.copyFileSync(path.join(ROOT, 'test/fixtures/provider/stripe-objects.json'), path.join(fixtures, 'stripe-objects.json'));
  const provider = await startFakeProvider({ webhookSecret: secret });
  const base = { cwd: env.cwd, tmpDir: env.tmpDir };
  const servers: ServerProcess[] = [];
  try {
    const ourPort = await freePort();
    const sideEnv = {
      ...provider.configEnv(),
      TRUST_PROXY: 'false',
      // The church Wi-Fi (docs/operations.md, "Sign-ups on the church's Wi-Fi"): its families get the church's form limit and no
      // per-connection cap of confirmations or unpaid places; everyone else, and every mailbox, keeps the spec's.
      CHURCH_NETWORKS: `${SHARED_ADDRESS}/32`,
    };
    const ourEnv = env.appEnv(env.database.urlFor(DATABASE), sideEnv);
    const ours = startNode([BIN, 'serve', '--port', String(ourPort), '--host', '127.0.0.1'], { ...base, env: ourEnv, logFile: path.join(env.tmpDir, 'serve-rush.log') });
    servers.push(ours);
    await waitForHttp(`http://127.0.0.1:${ourPort}/healthz`);
    provider.setWebhookUrl(`http://127.0.0.1:${ourPort}/api/stripe/webhook`);
    await warmUp(ourPort, provider);
    env.sink.reset();
    env.log('case 9: ours');
    const oursRun = await drive(env, ourPort, 'ours', load, provider);
    // serve offers freed places every 30 s: wait for the pass before counting places.
    const places = await afterOfferPass(env, DATABASE, load.capacity);
    const ourPageCpu = await pageCpu(env, ourPort, ours);
    const ourExit = await ours.stop();

    const floorPort = await freePort();
    const floor = startNode([reference('same-work/server')], {
      ...base,
      env: { ...env.appEnv(env.database.urlFor(FLOOR_DATABASE), sideEnv), BENCH_PORT: String(floorPort) },
      logFile: path.join(env.tmpDir, 'same-work-rush.log'),
    });
    servers.push(floor);
    await waitForPort(floorPort);
    provider.setWebhookUrl(`http://127.0.0.1:${floorPort}/api/stripe/webhook`);
    await warmUp(floorPort, provider);
    env.sink.reset();
    env.log('case 9: the same-work floor');
    const floorRun = await drive(env, floorPort, 'floor', load, provider);
    const floorPlaces = await afterOfferPass(env, FLOOR_DATABASE, load.capacity);
    const floorPageCpu = await pageCpu(env, floorPort, floor);
    const floorExit = await floor.stop();

    const taken = places.registered + places.offered;
    const summary: RushSummary = {
      pagesP99Ms: percentile(oursRun.pages, 99),
      postsP99Ms: percentile(oursRun.posts, 99),
      confirmationsP95Ms: percentile(oursRun.confirmations, 95),
      placesTaken: taken,
      capacity: load.capacity,
    };
    const rssMb = ourExit.rssMb ?? null;
    const row = (name: string, ours: number, floorValue: number, limitMs: number): CaseResult => {
      const result = ratioRow({ name, scale, ours: [ours], reference: [floorValue], targetRatio: TARGETS.ratio, peakRssMb: rssMb, extraTarget: { text: `≤ ${limitMs} ms`, met: ours <= limitMs } });
      return result;
    };
    const rssOk = rssMb !== null && rssMb <= TARGETS.rssMb;
    const describe = (run: SideRun) =>
      `pages p50 ${round(percentile(run.pages, 50), 1)} / p99 ${round(percentile(run.pages, 99), 1)} ms (${run.pages.length}), ` +
      `posts p50 ${round(percentile(run.posts, 50), 1)} / p99 ${round(percentile(run.posts, 99), 1)} ms (${run.posts.length}, ${run.rateLimited} refused 429 and sent again), ` +
      `by kind p50/p99 ms ${Object.entries(run.postsByKind).filter(([, ms]) => ms.length > 0).map(([kind, ms]) => `${kind} ${round(percentile(ms, 50), 1)}/${round(percentile(ms, 99), 1)} (${ms.length})`).join(', ')}, ` +
      `bank registered ${run.registered}, card checkouts ${run.cardStarted}, joined the waiting list ${run.waitlisted}, ` +
      `confirmations p50 ${round(percentile(run.confirmations, 50), 1)} / p95 ${round(percentile(run.confirmations, 95), 1)} ms (${run.confirmations.length}, ${run.missingConfirmations} never sent; ` +
      `bank ${round(percentile(run.confirmationsByKind.bank, 50), 1)}/${round(percentile(run.confirmationsByKind.bank, 95), 1)}, card ${round(percentile(run.confirmationsByKind.card, 50), 1)}/${round(percentile(run.confirmationsByKind.card, 95), 1)}), ` +
      `slowest posts ${[...run.postLog].sort((a, b) => b.ms - a.ms).slice(0, 6).map((post) => `${post.kind} ${round(post.ms, 1)} ms at ${round(post.atS, 1)} s`).join(', ')}, ` +
      `errors ${run.errors.length}${run.errors.length > 0 ? ` (${[...new Set(run.errors)].slice(0, 5).join('; ')})` : ''}`;
    return {
      results: [
        row('9 rush: page p99', summary.pagesP99Ms, percentile(floorRun.pages, 99), TARGETS.pageP99Ms),
        row('9 rush: post p99', summary.postsP99Ms, percentile(floorRun.posts, 99), TARGETS.postP99Ms),
        row('9 rush: confirmation p95', summary.confirmationsP95Ms, percentile(floorRun.confirmations, 95), TARGETS.confirmationP95Ms),
        ratioRow({
          name: '9 rush: places taken (exact)',
          scale,
          ours: [taken],
          reference: [load.capacity],
          peakRssMb: rssMb,
          extraTarget: { text: `= ${load.capacity}, RSS ≤ ${TARGETS.rssMb} MB`, met: taken === load.capacity && rssOk },
        }),
      ],
      notes: [
        `case 9, the rush (BENCH_RUSH_SCALE=${scale}: ${load.families.length} families, ${load.families.length + load.views.length} page views over ${load.durationMs / 1000} s, ${load.capacity} places):`,
        `  ours: ${describe(oursRun)}`,
        `  ours: places taken ${taken} of ${load.capacity} (registrations ${places.registered}, open offers ${places.offered}), waiting list ${places.waiting}, ` +
          `card payments kept without a place (UNFULFILLED, alerted) ${places.unfulfilled}; serve peak RSS ${Math.round(rssMb ?? 0)} MB, CPU ${round((ourExit.cpuMs ?? 0) / 1000, 1)} s`,
        `  same-work floor: ${describe(floorRun)}`,
        `  same-work floor: places taken ${floorPlaces.registered + floorPlaces.offered} (registrations ${floorPlaces.registered}, open offers ${floorPlaces.offered}), waiting list ${floorPlaces.waiting}, UNFULFILLED ${floorPlaces.unfulfilled}; ` +
          `peak RSS ${Math.round(floorExit.rssMb ?? 0)} MB, CPU ${round((floorExit.cpuMs ?? 0) / 1000, 1)} s`,
        `  CPU per page view after the rush (${PAGE_CPU_VIEWS} views of the sold-out page, ${PAGE_CPU_CONCURRENCY} at a time; the wall clock left out): ` +
          `ours ${describeCpu(ourPageCpu)}; same-work floor ${describeCpu(floorPageCpu)}` +
          (ourPageCpu && floorPageCpu ? `; ratio ${round((ourPageCpu.serverMs + ourPageCpu.databaseMs) / (floorPageCpu.serverMs + floorPageCpu.databaseMs), 2)}×` : ''),
      ],
      rush: summary,
    };
  } finally {
    for (const server of servers) if (server.child.exitCode === null) await server.stop();
    await provider.close();
    await env.database.drop(DATABASE);
    await env.database.drop(FLOOR_DATABASE);
  }
}
