import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fromZonedTime, formatInTimeZone } from 'date-fns-tz';
import { parse } from 'date-fns';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, PHONE_VIEWPORT } from '../support/browser.js';
import { ROOT, runCli, startCli, type RunningCli } from '../support/cli.js';
import { keepScreenshot } from '../support/screenshots.js';

/**
 * The README's first hour, walked as a newcomer walks it: every `npx eventops` command of "Start here" and
 * "Your first event", in the README's order, run from a fresh directory with nothing but what `init` writes
 * (embedded PostgreSQL, mail to the outbox), and the family's part done in a phone-sized browser. Two things
 * differ from a reader's machine, and only these: the sample event's dates move to a week from the clock the
 * test runs on (a fixed date would pass one day), and the server takes a free port (`AUTH_URL` and `PORT` in
 * the `.env`), as a second checkout on one machine would.
 */

const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const SAMPLE = 'docs/examples/first-event.json';
const ZONE = 'Australia/Sydney';
const DAY = 86_400_000;

/** The `npx eventops …` commands of a README section's shell blocks, in order, comments dropped. */
function sectionCommands(heading: string): string[][] {
  const start = README.indexOf(`\n## ${heading}\n`);
  expect(start, `README has "## ${heading}"`).toBeGreaterThan(-1);
  const end = README.indexOf('\n## ', start + 1);
  const section = README.slice(start, end === -1 ? undefined : end);
  const commands: string[][] = [];
  for (const block of section.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const line of (block[1] ?? '').split('\n')) {
      for (const part of line.replace(/\s+#.*$/, '').split('&&')) {
        const words = part.trim().match(/"[^"]*"|\S+/g)?.map((word) => word.replace(/^"|"$/g, '')) ?? [];
        if (words[0] === 'npx' && words[1] === 'eventops') commands.push(words.slice(2));
        else if (words.length > 0) commands.push(words);
      }
    }
  }
  return commands;
}

/** The sample's times moved so that it starts a week from now, at the same local time, each offset right for its day. */
function sampleStartingInAWeek(): string {
  const sample = JSON.parse(fs.readFileSync(path.join(ROOT, SAMPLE), 'utf8')) as Record<string, unknown>;
  const starts = new Date(sample.startsAt as string);
  const localTime = formatInTimeZone(starts, ZONE, 'HH:mm:ss');
  const newDay = formatInTimeZone(new Date(Date.now() + 7 * DAY), ZONE, 'yyyy-MM-dd');
  const newStart = fromZonedTime(`${newDay}T${localTime}`, ZONE);
  const shift = newStart.getTime() - starts.getTime();
  const moved = (value: unknown) => formatInTimeZone(new Date(new Date(value as string).getTime() + shift), ZONE, "yyyy-MM-dd'T'HH:mm:ssXXX");
  for (const key of ['startsAt', 'endsAt', 'reminderAt', 'changesCloseAt']) if (typeof sample[key] === 'string') sample[key] = moved(sample[key]);
  return `${JSON.stringify(sample, null, 2)}\n`;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function waitFor<T>(probe: () => T | undefined, what: string, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let cwd: string;
let browser: Browser;
let serve: RunningCli | undefined;
beforeAll(async () => {
  cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-first-hour-'));
  // As root the embedded server runs as "postgres", which must reach .eventops/pg (as in a checkout under /home).
  fs.chmodSync(cwd, 0o755);
  fs.mkdirSync(path.join(cwd, 'docs/examples'), { recursive: true });
  fs.writeFileSync(path.join(cwd, SAMPLE), sampleStartingInAWeek());
  browser = await launchBrowser();
});
afterAll(async () => {
  if (serve) {
    serve.child.kill('SIGTERM');
    await serve.result;
  }
  await browser?.close();
  fs.rmSync(cwd, { recursive: true, force: true });
});

describe("the README's first hour, from a fresh directory to the door", () => {
  it('init, demo, serve; the sample event created and published at its printed address; a family registers; its confirmation read with outbox show; a check-in link that lasts through the event', async () => {
    const steps = [...sectionCommands('Start here'), ...sectionCommands('Your first event')];
    expect(steps[0]).toEqual(['npm', 'ci']);
    const eventops = steps.slice(1);
    expect(eventops.map((words) => words.filter((word) => !word.startsWith('-') && !/^[A-Z]$/.test(word)).slice(0, 2).join(' '))).toEqual([
      'init',
      'demo',
      'serve',
      `events create`,
      'events publish',
      'registrations list',
      'outbox list',
      'outbox show',
      'checkin link',
    ]);

    const port = await freePort();
    const address = `http://127.0.0.1:${port}`;
    const run = async (args: string[]) => {
      const result = await runCli(args, { cwd, timeoutMs: 120_000 });
      expect(result.code, `eventops ${args.join(' ')}:\n${result.stderr}`).toBe(0);
      return result.stdout;
    };
    let publicPage: string | undefined;
    let familyMessage: string | undefined;
    for (const args of eventops) {
      const command = args.slice(0, 2).join(' ');
      if (args[0] === 'init') {
        await run(args);
        const env = fs.readFileSync(path.join(cwd, '.env'), 'utf8');
        expect(env).toContain('AUTH_URL=http://127.0.0.1:3000');
        fs.writeFileSync(path.join(cwd, '.env'), `${env.replace('AUTH_URL=http://127.0.0.1:3000', `AUTH_URL=${address}`)}PORT=${port}\n`);
      } else if (args[0] === 'serve') {
        const started = startCli(args, { cwd, timeoutMs: 600_000 });
        serve = started;
        // serve says where it listens and where the events page is, on stdout for the person who started it.
        const eventsPage = await waitFor(() => /events page[^\n]*?(http:\/\/\S+)/i.exec(started.stdout)?.[1], `serve to print the events page:\n${started.stderr}`);
        expect(eventsPage.replace(/\/$/, '')).toBe(address);
      } else if (command === 'events create' || command === 'events publish') {
        const out = await run(args);
        publicPage = /public page[^:]*: (\S+)/.exec(out)?.[1];
        if (command === 'events create') expect(out).toMatch(/starts: \w+ \d+ \w+ \d{4} at /);
      } else if (command === 'registrations list') {
        await registerAFamily(publicPage);
        expect(await run(args)).toContain('Ruth Baker');
      } else if (command === 'outbox list') {
        const out = await run(args);
        const line = out.split('\n').find((row) => row.includes('ruth.baker@example.org'));
        expect(line, out).toBeDefined();
        familyMessage = /^(\d+)\s/.exec(line ?? '')?.[1];
      } else if (command === 'outbox show') {
        const out = await run(['outbox', 'show', familyMessage as string]);
        expect(out).toContain('ruth.baker@example.org');
        expect(out).toContain('Family Camp');
        const manageLink = out.match(/https?:\/\/\S+/g)?.find((link) => link.startsWith(`${address}/`) && /manage/.test(link));
        expect(manageLink, out).toBeDefined();
        const page = await browser.newPage({ viewport: PHONE_VIEWPORT });
        const opened = await page.goto(manageLink as string);
        expect(opened?.status()).toBe(200);
        expect(await page.locator('main').innerText()).toContain('Mia Baker');
        await page.close();
      } else if (command === 'checkin link') {
        const out = await run(args);
        const link = out.match(/https?:\/\/\S+/)?.[0];
        const until = /Works until (.+) \(([^)]+)\)\./.exec(out);
        expect(until?.[2]).toBe(ZONE);
        const worksUntil = fromZonedTime(parse(until?.[1] as string, 'EEE d MMM yyyy, HH:mm', new Date()), ZONE);
        const sample = JSON.parse(fs.readFileSync(path.join(cwd, SAMPLE), 'utf8')) as { endsAt: string };
        expect(worksUntil.getTime()).toBeGreaterThanOrEqual(new Date(sample.endsAt).getTime());
        const page = await browser.newPage({ viewport: PHONE_VIEWPORT });
        expect((await page.goto(link as string))?.status()).toBe(200);
        expect(await page.locator('body').innerText()).toContain('Mia Baker');
        await keepScreenshot(page, 'first-hour-checkin');
        await page.close();
      } else {
        await run(args);
      }
    }
    expect(publicPage).toBe(`${address}/events/family-camp`);
  }, 600_000);
});

/** The family's part: the printed address opened on a phone, an adult and a child registered, paying by bank transfer. */
async function registerAFamily(publicPage: string | undefined): Promise<void> {
  expect(publicPage).toBeDefined();
  const page = await browser.newPage({ viewport: PHONE_VIEWPORT });
  try {
    await page.goto(publicPage as string);
    await page.getByLabel('Your name').fill('Ruth Baker');
    await page.getByLabel('Email').fill('ruth.baker@example.org');
    await page.getByRole('button', { name: 'Add another person' }).click();
    await page.getByLabel('Attendee 2 name', { exact: true }).fill('Mia Baker');
    await page.getByLabel('Attendee 2 ticket', { exact: true }).selectOption('child');
    const starts = new Date();
    await page.locator('#q-2-dateOfBirth').fill(`${starts.getUTCFullYear() - 9}-03-15`);
    await page.locator('#q-2-allergies').fill('Peanuts');
    const bank = page.locator('#payment-bank');
    if ((await bank.count()) > 0) await bank.check();
    await page.getByRole('button', { name: 'Register' }).click();
    await page.waitForLoadState();
    await keepScreenshot(page, 'first-hour-registered');
    const shown = await page.locator('main').innerText();
    expect(shown).toContain('Child (5 to 17) — Mia Baker');
    expect(shown).toMatch(/Reference\s+[0-9A-F]{8}/);
  } finally {
    await page.close();
  }
}
