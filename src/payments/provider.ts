import type Stripe from 'stripe';
import type { AppConfig } from '../config/types.js';
import { AppError, errorMessage } from '../errors.js';

/**
 * The card payment provider (Stripe) client. The API version is pinned to the
 * one this code and the webhook handlers were written against; the webhook
 * endpoint registered at the provider must use the same version (docs/money.md).
 */
export const PROVIDER_API_VERSION = '2026-10-28.endive' as const;

export type ProviderClient = Stripe;

/** Where `eventops serve` takes the provider's webhook deliveries. */
export const WEBHOOK_PATH = '/api/stripe/webhook';

/** Provider errors are retried twice by the package; a hung request is abandoned after 20 s. */
const MAX_NETWORK_RETRIES = 2;
const REQUEST_TIMEOUT_MS = 20_000;

export async function createProviderClient(config: Pick<AppConfig, 'payments'>): Promise<ProviderClient> {
  const payments = config.payments;
  if (!payments) {
    throw new AppError('payment_unavailable', 'card payments are not configured', {
      httpStatus: 409,
      suggestion: 'set PSP_SECRET_KEY and PSP_WEBHOOK_SECRET to take card payments',
    });
  }
  // One client per configuration: building one sets up every resource of the API, a cost each checkout paid before.
  const made = clientsByConfig.get(payments);
  if (made) return made;
  const { default: StripeClient } = await import('stripe');
  const client = new StripeClient(payments.secretKey, {
    apiVersion: PROVIDER_API_VERSION,
    maxNetworkRetries: MAX_NETWORK_RETRIES,
    timeout: REQUEST_TIMEOUT_MS,
    telemetry: false,
    ...apiAddress(payments.apiBase),
  });
  clientsByConfig.set(payments, client);
  return client;
}

const clientsByConfig = new WeakMap<NonNullable<AppConfig['payments']>, ProviderClient>();

/** host/port/protocol for PSP_API_BASE (tests point it at the local provider); the package default otherwise. */
export function apiAddress(apiBase: string | undefined): Pick<Stripe.StripeConfig, 'host' | 'port' | 'protocol'> {
  if (!apiBase) return {};
  const url = new URL(apiBase);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return { host: url.hostname, port: url.port || (protocol === 'http' ? 80 : 443), protocol };
}

/**
 * A failed provider call as our error: 502 with the provider's request id and
 * error type for the log, never the request body (it holds the payer's email).
 */
export function providerUnavailable(error: unknown): AppError {
  return new AppError('provider_unavailable', 'the card payment provider could not be reached; no payment was taken', {
    httpStatus: 502,
    suggestion: 'try again in a minute, or choose bank transfer',
    cause: error,
  });
}

/** Fields of a provider error that are safe and useful in a log line. */
export function providerErrorDetails(error: unknown): Record<string, unknown> {
  if (error && typeof error === 'object' && 'type' in error) {
    const e = error as { type?: unknown; code?: unknown; statusCode?: unknown; requestId?: unknown; message?: unknown };
    return { type: e.type, code: e.code, statusCode: e.statusCode, requestId: e.requestId, message: e.message };
  }
  return { message: errorMessage(error) };
}
