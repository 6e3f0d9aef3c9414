import type { AppConfig } from './types.js';

export const TRUST_PROXY_WARNING =
  "TRUST_PROXY is off while AUTH_URL is https (a proxy in front): behind a proxy every member shares the proxy's address and its rate limit: set TRUST_PROXY=true";

/**
 * serve speaks plain HTTP only, so an https AUTH_URL in production means a proxy in front of it.
 * Without TRUST_PROXY every request then comes from the proxy's address. A warning for `config
 * check` and `serve` only: the cron commands serve no requests.
 */
export function trustProxyWarning(config: Pick<AppConfig, 'isProduction' | 'authUrl' | 'http'>): string | undefined {
  const behindProxy = config.isProduction && config.authUrl?.startsWith('https://') === true;
  return behindProxy && !config.http.trustProxy ? TRUST_PROXY_WARNING : undefined;
}
