import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PROVIDER_API_VERSION } from '../../src/payments/provider.js';
import { HANDLED_EVENT_TYPES } from '../../src/payments/webhook/map.js';
import { runCli } from '../support/cli.js';
import { testEnv } from '../support/env.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { providerFixture, providerId } from '../support/provider-fixtures.js';
import { TEST_WEBHOOK_SECRET } from '../support/webhook-events.js';

// eventops config check-provider, built, in a subprocess, against the local provider's webhook endpoint list.
const WEBHOOK_URL = 'http://127.0.0.1:3000/api/stripe/webhook';
let provider: FakeProvider;
let env: Record<string, string | undefined>;
beforeAll(async () => {
  provider = await startFakeProvider({ webhookSecret: TEST_WEBHOOK_SECRET });
  env = testEnv({ ...provider.configEnv() });
});
afterAll(async () => {
  await provider.close();
});
beforeEach(() => {
  provider.webhookEndpoints.length = 0;
});

function endpoint(overrides: Record<string, unknown>) {
  provider.webhookEndpoints.push({ ...providerFixture('webhook_endpoint'), id: providerId('we'), ...overrides });
}

describe('eventops config check-provider', () => {
  it('a webhook endpoint at our address, enabled, on our API version, with every event we act on: exit 0', async () => {
    endpoint({ url: 'https://example.org/other-app/webhook', api_version: null });
    endpoint({ url: 'HTTP://127.0.0.1:3000/api/stripe/webhook?from=stripe', api_version: PROVIDER_API_VERSION, enabled_events: [...HANDLED_EVENT_TYPES, 'charge.succeeded'] });

    const result = await runCli(['config', 'check-provider', '--json'], { env });

    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, mode: 'test', webhookUrl: WEBHOOK_URL, problems: [], endpoint: { status: 'enabled', apiVersion: PROVIDER_API_VERSION } });
    expect(provider.requests.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('no endpoint for our address (one with a trailing slash gets 404 from the server, so it is not ours): exit 1, saying where to add it and with which events', async () => {
    endpoint({ url: 'https://example.org/other-app/webhook' });
    endpoint({ url: `${WEBHOOK_URL}/`, api_version: PROVIDER_API_VERSION, enabled_events: [...HANDLED_EVENT_TYPES] });

    const result = await runCli(['config', 'check-provider'], { env });

    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`problem: no webhook endpoint delivers to ${WEBHOOK_URL} (the account has 2 for other addresses)`);
    expect(result.stdout).toContain(`API version ${PROVIDER_API_VERSION}, with the events checkout.session.completed`);
  });

  it("the account's default API version and a missing charge.dispute.funds_withdrawn are named with their fix; a disabled endpoint too", async () => {
    const events = HANDLED_EVENT_TYPES.filter((type) => type !== 'charge.dispute.funds_withdrawn');
    endpoint({ url: WEBHOOK_URL, api_version: null, enabled_events: events, status: 'disabled' });

    const result = await runCli(['config', 'check-provider', '--json'], { env });

    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as { ok: boolean; problems: Array<{ problem: string; suggestion: string }> };
    expect(report.ok).toBe(false);
    expect(report.problems.map((p) => p.problem)).toEqual([
      expect.stringMatching(/is disabled: nothing is delivered$/),
      expect.stringContaining(`sends events in API version the account's default, not ${PROVIDER_API_VERSION}`),
      expect.stringMatching(/is not subscribed to charge\.dispute\.funds_withdrawn$/),
    ]);
  });

  it('a key the provider refuses: exit 1 naming PSP_SECRET_KEY, without printing it; no card payments configured: exit 78', async () => {
    const refused = await runCli(['config', 'check-provider'], { env: { ...env, PSP_SECRET_KEY: 'sk_test_not_this_one' } });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('the provider refused PSP_SECRET_KEY');
    expect(refused.stdout + refused.stderr).not.toContain('sk_test_not_this_one');

    provider.failPath('/v1/webhook_endpoints', 403);
    try {
      const restricted = await runCli(['config', 'check-provider'], { env });
      expect(restricted.code).toBe(1);
      expect(restricted.stdout).toContain('PSP_SECRET_KEY may not read the webhook endpoints');
    } finally {
      provider.failPath('/v1/webhook_endpoints', undefined);
    }

    const unconfigured = await runCli(['config', 'check-provider'], { env: testEnv() });
    expect(unconfigured.code).toBe(78);
    expect(unconfigured.stderr).toContain('PSP_SECRET_KEY');
  });
});
