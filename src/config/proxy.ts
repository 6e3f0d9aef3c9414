import ipaddr from 'ipaddr.js';
import type { AppConfig } from './types.js';

/** TRUST_PROXY=true: a proxy on this machine, whatever loopback address it connects from. */
export const LOOPBACK_PROXIES: readonly string[] = ['127.0.0.0/8', '::1/128'];

/**
 * TRUST_PROXY as the server uses it: `true` → the loopback ranges, `false` → false, otherwise a comma-separated
 * list of IPv4/IPv6 addresses or CIDR ranges, each written out as a range (`10.0.0.7` → `10.0.0.7/32`).
 * Undefined when any entry is not one: the whole value is refused, never half taken.
 */
export function trustedProxies(value: string): readonly string[] | false | undefined {
  if (value === 'true') return LOOPBACK_PROXIES;
  if (value === 'false') return false;
  const ranges = value.split(',').map((entry) => proxyRange(entry.trim()));
  return ranges.every((range): range is string => range !== undefined) ? ranges : undefined;
}

/**
 * One address or CIDR range as `network/prefix`. IPv4 only in its usual four-part form (ipaddr.js would read "1"
 * or "0x7f.1" as addresses too), IPv6 without a zone (`%eth0`): nothing a reader of the .env would misjudge.
 */
function proxyRange(entry: string): string | undefined {
  const [address = '', prefix, ...rest] = entry.split('/');
  if (rest.length > 0 || entry.includes('%')) return undefined;
  const ipv4 = ipaddr.IPv4.isValidFourPartDecimal(address);
  if (!ipv4 && !(address.includes(':') && ipaddr.IPv6.isValid(address))) return undefined;
  const maxBits = ipv4 ? 32 : 128;
  if (prefix !== undefined && !/^\d{1,3}$/.test(prefix)) return undefined;
  const bits = prefix === undefined ? maxBits : Number(prefix);
  if (bits > maxBits) return undefined;
  const network = ipv4 ? ipaddr.IPv4.networkAddressFromCIDR(`${address}/${bits}`) : ipaddr.IPv6.networkAddressFromCIDR(`${address}/${bits}`);
  return `${network.toString()}/${bits}`;
}

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

/**
 * HOST open beyond this machine with TRUST_PROXY on: whoever connects from a trusted address may write the client
 * address it likes, and a proxy connecting from an address not trusted (another container or machine) is taken for
 * the client, so every member shares its limit. Either way the set-up deserves a second look.
 */
export function exposedProxyWarning(config: Pick<AppConfig, 'http'>, host = config.http.host): string | undefined {
  if (!config.http.trustProxy || isLoopbackHost(host)) return undefined;
  return (
    `HOST is ${host}, not a loopback address, while TRUST_PROXY is on (trusted: ${config.http.trustProxy.join(', ')}): ` +
    "a request from a trusted address names its own client in X-Forwarded-For, and a proxy connecting from any other address is itself taken for the client (every member then shares its rate limit). " +
    "List exactly your proxies' addresses in TRUST_PROXY (TRUST_PROXY=true trusts loopback only) and let nothing but them reach PORT"
  );
}

/** Both proxy warnings that apply, for `config check` and `serve` (which may bind another host with --host). */
export function proxyWarnings(config: Pick<AppConfig, 'isProduction' | 'authUrl' | 'http'>, host?: string): string[] {
  return [trustProxyWarning(config), exposedProxyWarning(config, host)].filter((warning): warning is string => warning !== undefined);
}

function isLoopbackHost(host: string): boolean {
  if (host.toLowerCase() === 'localhost') return true;
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (!ipaddr.isValid(bare)) return false;
  return ipaddr.process(bare).range() === 'loopback';
}
