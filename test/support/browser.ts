import net from 'node:net';
import type { Browser } from 'playwright-core';
import { systemClock } from '../../src/clock.js';
import type { AppContext } from '../../src/context.js';
import type { Db } from '../../src/db/connect.js';
import { buildServer } from '../../src/http/server.js';
import { resolveChromium } from './chromium.js';
import { createTestContext } from './context.js';
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
