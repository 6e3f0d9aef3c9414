import net from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { systemClock } from '../../src/clock.js';
import type { AppContext } from '../../src/context.js';
import type { Db } from '../../src/db/connect.js';
import { buildServer } from '../../src/http/server.js';
import { resolveChromium } from './chromium.js';
import { createTestContext } from './context.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { startFakeProvider, type FakeProvider } from './fake-provider.js';

/** Chromium (see resolveChromium: named, system or packaged), driven headless by playwright-core. */
export async function launchBrowser(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  const executable = await resolveChromium();
  return chromium.launch({
    executablePath: executable.path,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** A phone-sized viewport (iPhone 12-ish), to check the public pages on a phone. */
export const PHONE_VIEWPORT = { width: 390, height: 844 };

/** The pages run on the real clock, and the form closes when the event starts: a start safely ahead. */
export const inAMonth = (): Date => new Date(Date.now() + 30 * 86_400_000);

/** A phone-sized page with or without script, in a context of its own closed after `run`. */
export async function withPhonePage(browser: Browser, javaScriptEnabled: boolean, run: (page: Page) => Promise<void>): Promise<void> {
  const context = await browser.newContext({ javaScriptEnabled, viewport: PHONE_VIEWPORT });
  try {
    await run(await context.newPage());
  } finally {
    await context.close();
  }
}

/** What the browser reports on `page` as Content-Security-Policy violations, collected as they come. */
export function cspViolations(page: Page): string[] {
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
  });
  return violations;
}

export interface BrowserStack {
  readonly db: TestDatabase['db'];
  readonly stack: PaymentStack;
  readonly browser: Browser;
}

/**
 * A browser test file's set-up: a database of its own, the real server on it (startPaymentStack) and a
 * headless Chromium, opened in beforeAll and closed in afterAll.
 */
export function useBrowserStack(): BrowserStack {
  let opened: { tdb: TestDatabase; stack: PaymentStack; browser: Browser } | undefined;
  let tdb: TestDatabase | undefined;
  let stack: PaymentStack | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    tdb = await createTestDatabase();
    stack = await startPaymentStack(tdb.db);
    browser = await launchBrowser();
    opened = { tdb, stack, browser };
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await tdb?.drop();
  });
  const get = () => {
    if (!opened) throw new Error('the browser stack is opened in beforeAll');
    return opened;
  };
  return {
    get db() {
      return get().tdb.db;
    },
    get stack() {
      return get().stack;
    },
    get browser() {
      return get().browser;
    },
  };
}

export interface PaymentStack {
  /** The app's base URL; AUTH_URL is set to it, so provider redirects come back here. */
  url: string;
  ctx: AppContext;
  provider: FakeProvider;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/**
 * The real server with card payments pointed at the local provider, whose
 * hosted page delivers signed webhooks to the server's /api/stripe/webhook.
 * The port is chosen before the config is built because AUTH_URL (the only
 * source of redirect URLs) must name it.
 */
export async function startPaymentStack(db: Db, env: Record<string, string | undefined> = {}): Promise<PaymentStack> {
  const provider = await startFakeProvider({ webhookSecret: 'whsec_browser_test_secret' });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const ctx = createTestContext({ db, clock: systemClock, env: { ...provider.configEnv(), AUTH_URL: url, ...env } });
  const server = await buildServer(ctx, { packageVersion: '0.0.0-test' });
  await server.app.listen({ port, host: '127.0.0.1' });
  provider.setWebhookUrl(`${url}/api/stripe/webhook`);
  return {
    url,
    ctx,
    provider,
    async close() {
      await server.app.close();
      await server.idle();
      await provider.close();
    },
  };
}
