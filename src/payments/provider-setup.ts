import type { AppConfig } from '../config/types.js';
import { publicBaseUrl } from './links.js';
import { createProviderClient, providerErrorDetails, PROVIDER_API_VERSION, WEBHOOK_PATH } from './provider.js';
import { HANDLED_EVENT_TYPES } from './webhook/map.js';

/**
 * What the card provider's account says about our set-up: whether the secret key works, and whether
 * a webhook endpoint points at this server, enabled, on the API version this code is written for,
 * subscribed to every event we act on. The signing secret cannot be read back from the provider, so
 * only a delivery proves it (the webhook answers 400 to a wrong one).
 */

export interface ProviderSetupProblem {
  problem: string;
  suggestion: string;
}

export interface ProviderSetupReport {
  ok: boolean;
  /** From the key: `live` takes real money, `test` does not. */
  mode: 'live' | 'test';
  /** The address the provider must deliver to. */
  webhookUrl: string;
  endpoint?: { id: string; status: string; apiVersion: string | null; events: string[] };
  problems: ProviderSetupProblem[];
}

interface EndpointView {
  id: string;
  url: string;
  status: string;
  api_version: string | null;
  enabled_events: string[];
}

export async function checkProviderSetup(config: Pick<AppConfig, 'payments' | 'authUrl' | 'appUrl' | 'env'>): Promise<ProviderSetupReport> {
  const provider = await createProviderClient(config);
  const mode = /^(sk|rk)_live_/.test(config.payments?.secretKey ?? '') ? 'live' : 'test';
  const webhookUrl = `${publicBaseUrl(config)}${WEBHOOK_PATH}`;
  const problems: ProviderSetupProblem[] = [];
  if (config.env === 'production' && mode === 'test') {
    problems.push({ problem: 'PSP_SECRET_KEY is a test-mode key in production: no card payment takes real money', suggestion: "use the live secret key from the provider's dashboard" });
  }
  let endpoints: EndpointView[];
  try {
    endpoints = [];
    for await (const endpoint of provider.webhookEndpoints.list({ limit: 100 })) endpoints.push(endpoint);
  } catch (error) {
    const { statusCode, message } = providerErrorDetails(error);
    problems.push(
      statusCode === 401
        ? { problem: `the provider refused PSP_SECRET_KEY (${String(message)})`, suggestion: 'copy the secret key again from the dashboard' }
        : statusCode === 403
          ? {
              problem: `PSP_SECRET_KEY may not read the webhook endpoints (${String(message)}), so they could not be checked`,
              suggestion: 'give the restricted key read access to Webhook Endpoints, or check the endpoint by hand in the dashboard',
            }
          : { problem: `the provider could not be asked (${String(message)})`, suggestion: 'check the network, PSP_API_BASE if set, and try again' },
    );
    return { ok: false, mode, webhookUrl, problems };
  }
  const ours = endpoints.filter((endpoint) => sameAddress(endpoint.url, webhookUrl));
  const endpoint = ours.find((candidate) => candidate.status === 'enabled') ?? ours[0];
  if (!endpoint) {
    problems.push({
      problem: `no webhook endpoint delivers to ${webhookUrl}${endpoints.length > 0 ? ` (the account has ${endpoints.length} for other addresses)` : ''}`,
      suggestion: `add one in the dashboard (Developers → Webhooks) for ${webhookUrl}, API version ${PROVIDER_API_VERSION}, with the events ${HANDLED_EVENT_TYPES.join(', ')}; copy its signing secret into PSP_WEBHOOK_SECRET`,
    });
    return { ok: false, mode, webhookUrl, problems };
  }
  if (ours.length > 1) {
    problems.push({
      problem: `${ours.length} webhook endpoints deliver to ${webhookUrl}; every event arrives once per endpoint, each signed with its own secret, and only one secret is PSP_WEBHOOK_SECRET`,
      suggestion: 'delete the extra endpoints in the dashboard, keeping the one whose signing secret is PSP_WEBHOOK_SECRET',
    });
  }
  if (endpoint.status !== 'enabled') {
    problems.push({ problem: `the webhook endpoint ${endpoint.id} is ${endpoint.status}: nothing is delivered`, suggestion: 'enable it in the dashboard (Developers → Webhooks)' });
  }
  if (endpoint.api_version !== PROVIDER_API_VERSION) {
    problems.push({
      problem: `the webhook endpoint ${endpoint.id} sends events in API version ${endpoint.api_version ?? "the account's default"}, not ${PROVIDER_API_VERSION}, the version this code reads`,
      suggestion: `create the endpoint again with API version ${PROVIDER_API_VERSION} (an endpoint's version cannot be changed), then update PSP_WEBHOOK_SECRET`,
    });
  }
  const missing = endpoint.enabled_events.includes('*') ? [] : HANDLED_EVENT_TYPES.filter((type) => !endpoint.enabled_events.includes(type));
  if (missing.length > 0) {
    problems.push({
      problem: `the webhook endpoint ${endpoint.id} is not subscribed to ${missing.join(', ')}`,
      suggestion: 'add them to the endpoint in the dashboard; until then `eventops reconcile` repairs what they would have told us, within the hour',
    });
  }
  return {
    ok: problems.length === 0,
    mode,
    webhookUrl,
    endpoint: { id: endpoint.id, status: endpoint.status, apiVersion: endpoint.api_version, events: endpoint.enabled_events },
    problems,
  };
}

/**
 * The provider keeps the address as it was typed: compared as a URL (the host's case, a default port and a
 * query string do not matter), but the path exactly: the server answers 404 to the path with a trailing slash.
 */
function sameAddress(a: string, b: string): boolean {
  const normal = (url: string) => {
    try {
      const parsed = new URL(url);
      return `${parsed.origin}${parsed.pathname}`;
    } catch {
      return url;
    }
  };
  return normal(a) === normal(b);
}
