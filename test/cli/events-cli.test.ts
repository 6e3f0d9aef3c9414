import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebsiteSignature } from '../../src/office/website-sync.js';
import { ROOT, runCli } from '../support/cli.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testEnv } from '../support/env.js';
import { insertRegistration } from '../support/factories.js';
import { startTestServer } from '../support/http.js';
import { startWebsiteReceiver, type WebsiteReceiver } from '../support/website-receiver.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures');
const SECRET = 'website-sync-cli-secret';

let tdb: TestDatabase;
let receiver: WebsiteReceiver;
let workDir: string;

// The global setup builds the command once per run; rebuilding here would rewrite dist/ under other CLI tests.
beforeAll(async () => {
  if (!fs.existsSync(path.join(ROOT, 'dist/src/cli/commands/events.js'))) {
    throw new Error('dist/ has no events command: the build in test/support/global-setup.ts did not emit it');
  }
  tdb = await createTestDatabase();
  receiver = await startWebsiteReceiver();
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-events-cli-'));
});
afterAll(async () => {
  await receiver?.close();
  await tdb?.drop();
});

function env(overrides: Record<string, string | undefined> = {}) {
  return {
    ...testEnv(),
    DATABASE_URL: tdb.url,
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    WEBSITE_SYNC_URL: receiver.url,
    WEBSITE_SYNC_SECRET: SECRET,
    ...overrides,
  };
}

function writeEventFile(name: string, content: Record<string, unknown>): string {
  const file = path.join(workDir, name);
  fs.writeFileSync(file, JSON.stringify(content, null, 2));
  return file;
}

function fixture(name: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8')) as Record<string, unknown>;
}

function eventFile(slug: string): string {
  return writeEventFile(`${slug}.json`, {
    slug,
    title: 'Youth Night',
    startsAt: '2027-02-05T19:00:00+11:00',
    capacity: null,
    pricing: { tiers: [{ id: 'free', label: 'Free', price: 0 }] },
  });
}

/**
 * Runs `events create --json` while the test holds the website-sync claim lock,
 * and meanwhile does to the new row what a server's delivery loop would have
 * done first (claim it, or deliver it), so the command finds it so.
 */
async function createWhileAnotherProcessClaims(slug: string, serverDid: Record<string, unknown>) {
  let running: ReturnType<typeof runCli> | undefined;
  await tdb.db.transaction(async (trx) => {
    await trx.raw(`SELECT pg_advisory_xact_lock(hashtext('eventops:website-sync-claim'))`);
    running = runCli(['events', 'create', eventFile(slug), '--json'], { env: env(), cwd: workDir });
    const deadline = Date.now() + 10_000;
    while (!(await trx('website_sync_outbox').where({ event_slug: slug }).first())) {
      if (Date.now() > deadline) throw new Error(`events create queued nothing for ${slug}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await trx('website_sync_outbox').where({ event_slug: slug }).update(serverDid);
  });
  const result = await running!;
  expect(result.code).toBe(0);
  return { output: JSON.parse(result.stdout) as { deliveryId: string; websiteSync: unknown } };
}

describe('eventops events', () => {
  it('create exits 0 and the website receiver gets one signed POST for it', async () => {
    const before = receiver.requests.length;
    const file = writeEventFile('camp.json', { ...fixture('event-family-camp.json'), slug: 'cli-family-camp' });
    const result = await runCli(['events', 'create', file], { env: env(), cwd: workDir });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('created: cli-family-camp');
    expect(result.stdout).toContain('website sync: delivered');

    const received = receiver.requests.slice(before);
    expect(received).toHaveLength(1);
    const [request] = received;
    const body = request?.body ?? '';
    const header = String(request?.headers['x-eventops-signature']);
    expect(verifyWebsiteSignature(SECRET, header, body, Math.floor(Date.now() / 1000), 300)).toBe(true);
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header) ?? [];
    expect(v1).toBe(crypto.createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex'));
    expect(JSON.parse(body)).toMatchObject({ type: 'event.created', event: { slug: 'cli-family-camp', capacity: 120 } });

    const row = await tdb.db('website_sync_outbox').where({ id: (JSON.parse(body) as { id: string }).id }).first();
    expect(row.status).toBe('DELIVERED');
  });

  it('create of an event whose attendee consent no tier can give as a guardian prints a warning naming the question and exits 0; marking the Child tier silences it', async () => {
    const content = {
      slug: 'cli-photo-consent',
      title: 'Family Camp',
      startsAt: `${new Date().getUTCFullYear() + 2}-02-05T19:00:00+11:00`,
      capacity: null,
      questions: [{ id: 'photos', label: 'Photos of my child may be taken.', type: 'consent', appliesTo: 'attendee' }],
      pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 0 }, { id: 'child', label: 'Child', price: 0 }] },
    };
    const created = await runCli(['events', 'create', writeEventFile('photos.json', content)], { env: env(), cwd: workDir });
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^warning: questions\.0 \("photos"\): a consent asked of each attendee, and no tier it is asked of \(adult, child\) can be a child/m);
    const marked = { ...content, pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 0 }, { id: 'child', label: 'Child', price: 0, child: true }] } };
    const updated = await runCli(['events', 'update', writeEventFile('photos.json', marked)], { env: env(), cwd: workDir });
    expect(updated.code).toBe(0);
    expect(updated.stdout).not.toContain('warning');
    await tdb.db('website_sync_outbox').where({ event_slug: 'cli-photo-consent' }).delete();
    await tdb.db('events').where({ slug: 'cli-photo-consent' }).delete();
  });

  it('create and update of a card-payable event with a ticket below the card provider\'s minimum print a warning and still exit 0; --json lists it', async () => {
    const cardEnv = env({ PSP_SECRET_KEY: 'sk_test_cli', PSP_WEBHOOK_SECRET: 'whsec_cli' });
    const content = {
      slug: 'cli-candle-night',
      title: 'Candle Night',
      // Always ahead (a start in the past is warned about too); February is summer time in Sydney.
      startsAt: `${new Date().getUTCFullYear() + 2}-02-05T19:00:00+11:00`,
      capacity: null,
      onlinePayment: true,
      pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 1500 }, { id: 'candle', label: 'Candle', price: 40 }] },
    };
    const expected =
      'one "Candle" ticket alone comes to $0.40 by card, below the card provider\'s minimum of $0.50: ' +
      'a registration of just that ticket cannot be paid by card, and the member is asked to choose bank transfer';
    const file = writeEventFile('candle.json', content);
    const created = await runCli(['events', 'create', file], { env: cardEnv, cwd: workDir });
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('created: cli-candle-night');
    expect(created.stdout).toContain(`warning: ${expected}`);

    const updated = await runCli(['events', 'update', file, '--json'], { env: cardEnv, cwd: workDir });
    expect(updated.code).toBe(0);
    expect((JSON.parse(updated.stdout) as { change: string; warnings: string[] })).toMatchObject({ change: 'updated', warnings: [expected] });

    const fixed = writeEventFile('candle.json', { ...content, pricing: { tiers: [{ id: 'candle', label: 'Candle', price: 50 }] } });
    const clean = await runCli(['events', 'update', fixed], { env: cardEnv, cwd: workDir });
    expect(clean.code).toBe(0);
    expect(clean.stdout).not.toContain('warning');
    // Out of the way of the listing tests, which expect their own events only.
    await tdb.db('website_sync_outbox').where({ event_slug: 'cli-candle-night' }).delete();
    await tdb.db('events').where({ slug: 'cli-candle-night' }).delete();
  });

  it('an invalid event file exits 2 naming the unknown key, and creates nothing', async () => {
    const result = await runCli(['events', 'create', path.join(FIXTURES, 'event-unknown-key.json')], { env: env(), cwd: workDir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('"colour"');
    expect(await tdb.db('events').where({ slug: 'youth-night' }).first()).toBeUndefined();
  });

  it('a start time written with an offset APP_TIMEZONE does not have that day exits 2 naming the right one, and creates nothing', async () => {
    const file = writeEventFile('autumn-fair.json', {
      slug: 'autumn-fair',
      title: 'Autumn Fair',
      startsAt: '2027-04-10T10:00:00+11:00',
      capacity: null,
      pricing: { tiers: [{ id: 'free', label: 'Free', price: 0 }] },
    });
    const result = await runCli(['events', 'create', file], { env: env({ APP_TIMEZONE: 'Australia/Sydney' }), cwd: workDir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('for 10:00 there write 2027-04-10T10:00:00+10:00');
    expect(await tdb.db('events').where({ slug: 'autumn-fair' }).first()).toBeUndefined();
  });

  it('a receiver that answers 500 does not fail the command: it reports "queued, will retry" and exits 0', async () => {
    receiver.answerWith(500);
    try {
      const result = await runCli(['events', 'publish', 'cli-family-camp', '--json'], { env: env(), cwd: workDir });
      expect(result.code).toBe(0);
      const output = JSON.parse(result.stdout) as { change: string; websiteSync: { status: string } };
      expect(output).toMatchObject({ change: 'published', websiteSync: { status: 'queued' } });
      const human = await runCli(['events', 'delete', 'cli-family-camp'], { env: env(), cwd: workDir });
      expect(human.code).toBe(0);
      expect(human.stdout).toContain('queued, will retry');
    } finally {
      receiver.answerWith(200);
    }
    const pending = await tdb.db('website_sync_outbox').where({ status: 'PENDING' }).select('type');
    expect(pending.map((r: { type: string }) => r.type).sort()).toEqual(['event.deleted', 'event.published']);
  });

  it('sync-website exits 1 while deliveries fail and 0 with the counts once the receiver takes them', async () => {
    await tdb.db('website_sync_outbox').where({ status: 'PENDING' }).update({ next_attempt_at: new Date(Date.now() - 1000) });
    receiver.answerWith(503);
    const failing = await runCli(['sync-website', '--json'], { env: env(), cwd: workDir });
    expect(failing.code).toBe(1);
    expect(JSON.parse(failing.stdout)).toMatchObject({ delivered: 0, failed: 1, pending: 2 });

    receiver.answerWith(200);
    await tdb.db('website_sync_outbox').where({ status: 'PENDING' }).update({ next_attempt_at: new Date(Date.now() - 1000) });
    const ok = await runCli(['sync-website', '--json'], { env: env(), cwd: workDir });
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ delivered: 2, failed: 0, pending: 0 });
  });

  it('list --json parses and --all includes deleted events', async () => {
    const file = writeEventFile('picnic.json', {
      slug: 'cli-picnic',
      title: 'Church Picnic',
      startsAt: '2027-01-20T11:00:00+11:00',
      capacity: null,
      // Written out: holds until the event. The family camp's file leaves it out: 7 days.
      unpaidHoldDays: null,
      pricing: { tiers: [{ id: 'free', label: 'Free', price: 0 }] },
    });
    expect((await runCli(['events', 'create', file], { env: env({ WEBSITE_SYNC_URL: undefined, WEBSITE_SYNC_SECRET: undefined }), cwd: workDir })).code).toBe(0);

    const live = await runCli(['events', 'list', '--json'], { env: env(), cwd: workDir });
    expect(live.code).toBe(0);
    const parsed = JSON.parse(live.stdout) as { events: Array<{ slug: string; capacity: number | null; startsAt: string }> };
    expect(parsed.events.map((e) => e.slug)).toEqual(['cli-picnic']);
    expect(parsed.events[0]).toMatchObject({ capacity: null, startsAt: '2027-01-20T00:00:00.000Z' });

    const all = await runCli(['events', 'list', '--all', '--json'], { env: env(), cwd: workDir });
    expect((JSON.parse(all.stdout) as { events: Array<{ slug: string }> }).events.map((e) => e.slug).sort()).toEqual([
      'cli-family-camp',
      'cli-picnic',
    ]);

    const human = await runCli(['events', 'list'], { env: env(), cwd: workDir });
    expect(human.stdout).toContain('cli-picnic  2027-01-20 11:00  draft  unlimited  holds until the event  Church Picnic');

    // Slugs of different lengths: every column starts at the same place on every line.
    const humanAll = await runCli(['events', 'list', '--all'], { env: env(), cwd: workDir });
    const lines = humanAll.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines.find((line) => line.startsWith('cli-picnic '))).toMatch(/^cli-picnic {7}2027-01-20 11:00  draft {4}unlimited {5}holds until the event  Church Picnic$/);
    expect(lines.find((line) => line.startsWith('cli-family-camp '))).toMatch(/ {2}capacity 120 {2}holds 7 days {11}Family Camp$/);
    expect(new Set(lines.map((line) => line.search(/\d{4}-\d{2}-\d{2}/)))).toEqual(new Set([17]));
  });

  it('publish of an unknown slug exits 1 and a malformed slug exits 2', async () => {
    expect((await runCli(['events', 'publish', 'no-such-event'], { env: env(), cwd: workDir })).code).toBe(1);
    expect((await runCli(['events', 'publish', 'Not A Slug'], { env: env(), cwd: workDir })).code).toBe(2);
  });

  it("reports this command's own notification as delivered while another event's notification backs off", async () => {
    receiver.answerWith(500);
    try {
      expect((await runCli(['events', 'create', eventFile('cli-backing-off')], { env: env(), cwd: workDir })).code).toBe(0);
    } finally {
      receiver.answerWith(200);
    }
    const result = await runCli(['events', 'create', eventFile('cli-own-delivered'), '--json'], { env: env(), cwd: workDir });
    expect(result.code).toBe(0);
    const output = JSON.parse(result.stdout) as { deliveryId: string; websiteSync: unknown };
    expect(output.websiteSync).toEqual({ status: 'delivered', delivered: 1, othersPending: 1 });
    expect((await tdb.db('website_sync_outbox').where({ id: output.deliveryId }).first()).status).toBe('DELIVERED');

    const human = await runCli(['events', 'publish', 'cli-own-delivered'], { env: env(), cwd: workDir });
    expect(human.stdout).toContain('website sync: delivered; 1 other notification still queued');
    expect(human.stdout).not.toContain('will retry');
    await tdb.db('website_sync_outbox').where({ status: 'PENDING' }).update({ status: 'DELIVERED' });
  });

  it('a notification a server claimed first is reported as being delivered by the server, not queued', async () => {
    const { output } = await createWhileAnotherProcessClaims('cli-claimed-by-server', { claimed_until: new Date(Date.now() + 2 * 60_000) });
    expect(output.websiteSync).toEqual({ status: 'delivering' });
    await tdb.db('website_sync_outbox').where({ id: output.deliveryId }).update({ status: 'DELIVERED', claimed_until: null });
  });

  it('a notification a server delivered first is reported as delivered, not queued', async () => {
    const { output } = await createWhileAnotherProcessClaims('cli-delivered-by-server', { status: 'DELIVERED', delivered_at: new Date() });
    expect(output.websiteSync).toMatchObject({ status: 'delivered', delivered: 0 });
  });

  it('a failed notification is reported as queued with its own error', async () => {
    receiver.answerWith(503);
    try {
      const result = await runCli(['events', 'create', eventFile('cli-own-failure'), '--json'], { env: env(), cwd: workDir });
      const output = JSON.parse(result.stdout) as { websiteSync: unknown };
      expect(output.websiteSync).toMatchObject({ status: 'queued', error: expect.stringContaining('HTTP 503') });
    } finally {
      receiver.answerWith(200);
    }
    await tdb.db('website_sync_outbox').where({ status: 'PENDING' }).update({ status: 'DELIVERED' });
  });

  it('publish of a deleted event exits 1 saying it was deleted and its slug stays reserved, not to create it', async () => {
    const result = await runCli(['events', 'publish', 'cli-family-camp'], { env: env(), cwd: workDir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('event "cli-family-camp" was deleted; deleted events cannot be changed');
    expect(result.stderr).toContain('slug stays reserved');
    expect(result.stderr).not.toContain('events create');
  });

  it('--help shows an example', async () => {
    const result = await runCli(['events', 'create', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('$ eventops events create family-camp.json');
  });

  it('list shows an event that ends from its start to its end, in the church zone', async () => {
    const file = writeEventFile('retreat.json', {
      slug: 'cli-retreat',
      title: 'Men\'s Retreat',
      startsAt: '2027-02-05T18:00:00+11:00',
      endsAt: '2027-02-07T15:00:00+11:00',
      capacity: 30,
      pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 9000 }] },
    });
    expect((await runCli(['events', 'create', file], { env: env({ WEBSITE_SYNC_URL: undefined, WEBSITE_SYNC_SECRET: undefined }), cwd: workDir })).code).toBe(0);

    const human = await runCli(['events', 'list'], { env: env(), cwd: workDir });
    expect(human.stdout).toMatch(/^cli-retreat +2027-02-05 18:00 – 2027-02-07 15:00 +draft +capacity 30 +holds 7 days +Men's Retreat$/m);
    const json = JSON.parse((await runCli(['events', 'list', '--json'], { env: env(), cwd: workDir })).stdout) as { events: Array<{ slug: string; endsAt: string | null }> };
    expect(json.events.find((e) => e.slug === 'cli-retreat')?.endsAt).toBe('2027-02-07T04:00:00.000Z');
  });
});

describe('eventops events, as the office uses them', () => {
  const SYDNEY = { APP_TIMEZONE: 'Australia/Sydney', APP_LOCALE: 'en-AU', WEBSITE_SYNC_URL: undefined, WEBSITE_SYNC_SECRET: undefined };
  const nextYear = new Date().getUTCFullYear() + 1;

  async function pageStatus(slug: string): Promise<number> {
    const server = await startTestServer(createTestContext({ db: tdb.db }));
    try {
      return (await fetch(`${server.url}/events/${slug}`)).status;
    } finally {
      await server.close();
    }
  }

  it('the office guide\'s round (docs/office.md, Events) then an edit: update keeps a published event published although the file says "published": false, and says so', async () => {
    const content = {
      slug: 'cli-camp-edit',
      title: 'Family Camp',
      startsAt: `${nextYear}-03-12T18:00:00+11:00`,
      capacity: 120,
      published: false,
      pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 12000 }] },
    };
    const file = writeEventFile('camp-edit.json', content);
    const created = await runCli(['events', 'create', file], { env: env(SYDNEY), cwd: workDir });
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('draft: not on the website; `eventops events publish cli-camp-edit` puts it on the website');
    expect((await runCli(['events', 'publish', 'cli-camp-edit'], { env: env(SYDNEY), cwd: workDir })).code).toBe(0);
    expect(await pageStatus('cli-camp-edit')).toBe(200);

    writeEventFile('camp-edit.json', { ...content, title: 'Family Camp (updated)' });
    const updated = await runCli(['events', 'update', file], { env: env(SYDNEY), cwd: workDir });
    expect(updated.stderr).toBe('');
    expect(updated.code).toBe(0);
    expect(updated.stdout).toContain('updated: cli-camp-edit (Family Camp (updated))');
    expect(updated.stdout).toContain(
      'still published: the file says "published": false, which update does not apply; `eventops events unpublish cli-camp-edit` takes it off the website',
    );
    expect(await tdb.db('events').where({ slug: 'cli-camp-edit' }).first()).toMatchObject({ published: true, title: 'Family Camp (updated)' });
    expect(await pageStatus('cli-camp-edit')).toBe(200);
    const json = JSON.parse((await runCli(['events', 'update', file, '--json'], { env: env(SYDNEY), cwd: workDir })).stdout) as Record<string, unknown>;
    expect(json).toMatchObject({ change: 'updated', ignored: { published: false }, event: { published: true } });

    // unpublish is the command that takes it off the website.
    const unpublished = await runCli(['events', 'unpublish', 'cli-camp-edit'], { env: env(SYDNEY), cwd: workDir });
    expect(unpublished.code).toBe(0);
    expect(unpublished.stdout).toContain('unpublished: cli-camp-edit');
    expect(await pageStatus('cli-camp-edit')).toBe(404);
    // And update leaves a draft a draft, whatever the file says.
    writeEventFile('camp-edit.json', { ...content, published: true });
    const kept = await runCli(['events', 'update', file], { env: env(SYDNEY), cwd: workDir });
    expect(kept.stdout).toContain('still a draft: the file says "published": true, which update does not apply; `eventops events publish cli-camp-edit`');
    expect(await pageStatus('cli-camp-edit')).toBe(404);
  });

  it('create and update print the start and end in APP_TIMEZONE, and a time written in UTC is warned about with the offset to write', async () => {
    const file = writeEventFile('utc-night.json', {
      slug: 'cli-utc-night',
      title: 'Youth Night',
      startsAt: '2031-02-05T19:00:00Z',
      endsAt: '2031-02-05T21:00:00Z',
      capacity: null,
      pricing: { tiers: [{ id: 'free', label: 'Free', price: 0 }] },
    });
    const created = await runCli(['events', 'create', file], { env: env(SYDNEY), cwd: workDir });
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('starts: Thursday 6 February 2031 at 6:00 am AEDT (Australia/Sydney)');
    expect(created.stdout).toContain('ends: Thursday 6 February 2031 at 8:00 am AEDT');
    expect(created.stdout).toContain(
      'warning: startsAt: 2031-02-05T19:00:00Z is written in UTC (Z), which is 2031-02-06 06:00 in Australia/Sydney; ' +
        'if 19:00 there was meant, write 2031-02-05T19:00:00+11:00',
    );
    const fixed = writeEventFile('utc-night.json', {
      slug: 'cli-utc-night',
      title: 'Youth Night',
      startsAt: '2031-02-05T19:00:00+11:00',
      endsAt: null,
      capacity: null,
      pricing: { tiers: [{ id: 'free', label: 'Free', price: 0 }] },
    });
    const updated = await runCli(['events', 'update', fixed], { env: env(SYDNEY), cwd: workDir });
    expect(updated.code).toBe(0);
    expect(updated.stdout).toContain('starts: Wednesday 5 February 2031 at 7:00 pm AEDT (Australia/Sydney)');
    expect(updated.stdout).not.toContain('ends:');
    expect(updated.stdout).not.toContain('warning');
  });

  it('a start in the past is saved with a warning naming it, exit 0', async () => {
    const yesterday = new Date(Date.now() - 24 * 3600_000);
    const file = writeEventFile('past.json', {
      slug: 'cli-past-night',
      title: 'Past Night',
      startsAt: yesterday.toISOString().replace(/\.\d{3}Z$/, '+00:00'),
      capacity: null,
      published: true,
      pricing: { tiers: [{ id: 'free', label: 'Free', price: 0 }] },
    });
    const created = await runCli(['events', 'create', file], { env: env({ ...SYDNEY, APP_TIMEZONE: 'UTC' }), cwd: workDir });
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^warning: the start, .* UTC, is in the past: the public form is closed already/m);
    expect(await tdb.db('events').where({ slug: 'cli-past-night' }).first()).toBeDefined();
  });

  it('update setting a capacity below the seats taken warns naming both, saves it, and cancels nobody', async () => {
    const content = {
      slug: 'cli-small-room',
      title: 'Small Room',
      startsAt: `${nextYear}-03-12T18:00:00+11:00`,
      capacity: 10,
      pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 1000 }] },
    };
    const file = writeEventFile('small-room.json', content);
    expect((await runCli(['events', 'create', file], { env: env(SYDNEY), cwd: workDir })).code).toBe(0);
    const event = await tdb.db('events').where({ slug: 'cli-small-room' }).first<{ id: string }>('id');
    const { cipher } = createTestContext({ db: tdb.db });
    await insertRegistration(tdb.db, cipher, event.id, { status: 'PENDING', attendee_count: 2 });
    await insertRegistration(tdb.db, cipher, event.id, { status: 'PAID', attendee_count: 2 });

    writeEventFile('small-room.json', { ...content, capacity: 2 });
    const updated = await runCli(['events', 'update', file], { env: env(SYDNEY), cwd: workDir });
    expect(updated.code).toBe(0);
    expect(updated.stdout).toContain(
      'warning: capacity 2 is below the 4 seats already taken by PENDING and PAID registrations: nobody was cancelled',
    );
    expect((await tdb.db('events').where({ id: event.id }).first()).capacity).toBe(2);
    expect((await tdb.db('registrations').where({ event_id: event.id }).pluck('status')).sort()).toEqual(['PAID', 'PENDING']);
  });

  it('delete of an event with a PENDING registration exits 1 naming it and what to do, and deletes nothing; --force deletes it and says what was left', async () => {
    const file = writeEventFile('youth-night.json', {
      slug: 'cli-youth-night',
      title: 'Youth Night',
      startsAt: `${nextYear}-02-05T19:00:00+11:00`,
      capacity: 40,
      published: true,
      pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 1000 }] },
    });
    expect((await runCli(['events', 'create', file], { env: env(SYDNEY), cwd: workDir })).code).toBe(0);
    const event = await tdb.db('events').where({ slug: 'cli-youth-night' }).first<{ id: string }>('id');
    const registration = await insertRegistration(tdb.db, createTestContext({ db: tdb.db }).cipher, event.id, { status: 'PENDING', attendee_count: 1 });

    const refused = await runCli(['events', 'delete', 'cli-youth-night'], { env: env(SYDNEY), cwd: workDir });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain(
      'event "cli-youth-night" has 1 live registration (1 PENDING, 0 PAID; 1 seat): deleting the event would tell none of their registrants',
    );
    expect(refused.stderr).toContain('eventops registrations cancel REFERENCE --notify');
    expect(refused.stderr).toContain('eventops events delete cli-youth-night --force');
    expect((await tdb.db('events').where({ id: event.id }).first()).deleted_at).toBeNull();
    expect(await pageStatus('cli-youth-night')).toBe(200);

    const forced = await runCli(['events', 'delete', 'cli-youth-night', '--force'], { env: env(SYDNEY), cwd: workDir });
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain('deleted: cli-youth-night (Youth Night)');
    expect(forced.stdout).toContain('left: 1 live registration (1 PENDING, 0 PAID; 1 seat) on the deleted event; their registrants were not told');
    expect((await tdb.db('events').where({ id: event.id }).first()).deleted_at).not.toBeNull();
    expect((await tdb.db('registrations').where({ id: registration.id }).first()).status).toBe('PENDING');
    expect(await pageStatus('cli-youth-night')).toBe(404);
  });

  it('delete --force --json reports the registrations left', async () => {
    const file = writeEventFile('quiz-night.json', {
      slug: 'cli-quiz-night',
      title: 'Quiz Night',
      startsAt: `${nextYear}-02-05T19:00:00+11:00`,
      capacity: null,
      pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 1000 }] },
    });
    expect((await runCli(['events', 'create', file], { env: env(SYDNEY), cwd: workDir })).code).toBe(0);
    const event = await tdb.db('events').where({ slug: 'cli-quiz-night' }).first<{ id: string }>('id');
    await insertRegistration(tdb.db, createTestContext({ db: tdb.db }).cipher, event.id, { status: 'PAID', attendee_count: 3 });
    const forced = await runCli(['events', 'delete', 'cli-quiz-night', '--force', '--json'], { env: env(SYDNEY), cwd: workDir });
    expect(forced.code).toBe(0);
    expect(JSON.parse(forced.stdout)).toMatchObject({ change: 'deleted', left: { pending: 0, paid: 1, seats: 3 } });
  });
});
