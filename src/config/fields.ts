import net from 'node:net';
import { z } from 'zod';
import { SSL_MODES } from '../db/ssl.js';
import { CHURCH_NETWORKS_EXPECTED, churchNetworks } from './church-networks.js';
import { trustedProxies } from './proxy.js';
import { parseMailbox, type Mailbox } from './mailbox.js';

/** Each field rule is a zod schema over the raw string plus the sentence shown when it fails. */
export interface FieldRule<T> {
  schema: z.ZodType<T>;
  expected: string;
}

const rule = <T>(schema: z.ZodType<T>, expected: string): FieldRule<T> => ({ schema, expected });

function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

function isLocale(value: string): boolean {
  try {
    return Intl.getCanonicalLocales(value).length === 1;
  } catch {
    return false;
  }
}

const knownCurrencies = (): Set<string> => new Set(Intl.supportedValuesOf('currency'));

function parsedUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

const isWebUrl = (url: URL | undefined): url is URL =>
  url !== undefined && (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';

/** A loopback host: plain http to it never leaves the machine (a local proxy, a test server). */
export function isLoopbackUrl(value: string): boolean {
  const host = parsedUrl(value)?.hostname;
  return host === 'localhost' || host === '[::1]' || (host !== undefined && /^127\.\d+\.\d+\.\d+$/.test(host));
}

/**
 * An Application Insights connection string as the Azure Monitor exporter reads it: ";"-separated key=value
 * pairs (keys in any case) with an InstrumentationKey that is a GUID in lowercase, or the exporter throws when
 * the server starts. A pair it cannot read (a key with a space, a value holding "=") it drops without a word,
 * so an IngestionEndpoint would be lost: refused too. Empty parts (a trailing ";") are harmless.
 */
function isAzureMonitorConnectionString(value: string): boolean {
  const pairs = value.split(';').filter((part) => part !== '').map((part) => part.split('='));
  if (!pairs.every((kv) => kv.length === 2 && /^[A-Za-z]+$/.test(kv[0] ?? ''))) return false;
  const key = pairs.findLast(([name]) => name?.toLowerCase() === 'instrumentationkey')?.[1];
  return key !== undefined && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(key);
}

/**
 * A DNS name (labels of letters, digits, hyphens and underscores, which container and compose service names
 * use), an IPv4 address or an IPv6 address, and nothing else: `host:port` would otherwise pass as a name
 * (":" is there for IPv6) and fail only when the server listens or mails.
 */
function isHost(value: string): boolean {
  // Only an IPv6 address has a ":" here; asking net first would compile its large IPv6 pattern (about 4 ms) on every start.
  if (value.includes(':')) return net.isIPv6(value);
  if (/^[\d.]+$/.test(value)) return net.isIPv4(value);
  return /^[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?)*\.?$/.test(value);
}

function isBase64Of32Bytes(value: string): boolean {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value)) return false;
  return Buffer.from(value, 'base64').length === 32;
}

export const fields = {
  boolean: rule(
    z.enum(['true', 'false']).transform((v) => v === 'true'),
    'true or false',
  ),
  postgresUrl: rule(
    z.string().refine((v) => {
      try {
        const url = new URL(v);
        const sslmode = url.searchParams.get('sslmode');
        if (sslmode !== null && !(SSL_MODES as readonly string[]).includes(sslmode)) return false;
        if (sslmode === 'verify-ca' && !url.searchParams.get('sslrootcert')) return false;
        // A host, or the directory of a local server's Unix socket (`postgresql:///eventops?host=/var/run/postgresql`).
        const socketDirectory = url.searchParams.get('host')?.startsWith('/') === true;
        return (url.protocol === 'postgres:' || url.protocol === 'postgresql:') && (url.hostname !== '' || socketDirectory);
      } catch {
        return false;
      }
    }),
    `a postgres:// or postgresql:// connection URL with a host (or ?host=/socket/directory); sslmode one of ${SSL_MODES.join(', ')} (verify-ca with sslrootcert=<CA file>)`,
  ),
  httpUrl: rule(
    z.string().refine((v) => isWebUrl(parsedUrl(v))),
    'an http:// or https:// URL',
  ),
  /**
   * A base the app builds links and redirects on: credentials, a query or a fragment would end up inside every link.
   * The raw "?" and "#" are checked too: a bare one at the end parses to an empty search or hash.
   */
  baseUrl: rule(
    z.string().refine((v) => {
      const url = parsedUrl(v);
      return isWebUrl(url) && url.username === '' && url.password === '' && !/[?#]/.test(v);
    }),
    'an http:// or https:// URL without credentials, query or fragment',
  ),
  key32: rule(z.string().refine(isBase64Of32Bytes), 'base64 of exactly 32 bytes (openssl rand -base64 32)'),
  secret32: rule(
    z.string().refine((v) => Buffer.byteLength(v, 'utf8') >= 32),
    'at least 32 bytes (openssl rand -base64 32)',
  ),
  webhookSecret: rule(
    z.string().regex(/^whsec_[A-Za-z0-9_+/=-]+$/),
    "the provider's webhook signing secret, whsec_… (from the provider's webhook settings)",
  ),
  month: rule(
    z.string().regex(/^\d{1,2}$/).transform(Number).refine((n) => n >= 1 && n <= 12),
    'an integer month from 1 to 12',
  ),
  // As Intl names it: an alias Intl still knows but the tz database dropped (US/Pacific-New)
  // becomes the zone PostgreSQL also knows, so both sides compute in the same zone.
  timeZone: rule(
    z.string().refine(isTimeZone).transform((v) => new Intl.DateTimeFormat('en', { timeZone: v }).resolvedOptions().timeZone),
    'an IANA time zone such as Australia/Sydney',
  ),
  locale: rule(z.string().refine(isLocale), 'a BCP-47 locale tag such as en-AU'),
  currency: rule(
    z.string().refine((v) => /^[A-Z]{3}$/.test(v) && knownCurrencies().has(v)),
    'an ISO-4217 currency code such as AUD',
  ),
  colour: rule(z.string().regex(/^#[0-9A-Fa-f]{6}$/), 'a hex colour #RRGGBB'),
  repo: rule(
    z.string().regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/),
    'owner/repo, for example my-church/eventops-issues',
  ),
  email: rule(z.email(), 'an email address'),
  mailbox: rule(
    z.string().transform(parseMailbox).pipe(z.custom<Mailbox>((mailbox) => mailbox !== undefined)),
    'an email address, or a name and address such as "Parish Office" <office@church.org>',
  ),
  port: rule(
    z.string().regex(/^\d{1,5}$/).transform(Number).refine((n) => n >= 1 && n <= 65535),
    'a TCP port from 1 to 65535',
  ),
  trustProxy: rule(
    z.string().transform(trustedProxies).pipe(z.custom<readonly string[] | false>((value) => value !== undefined)),
    "true (trust a proxy on this machine: loopback addresses only), false, or the proxies' addresses or CIDR ranges separated by commas, IPv4 or IPv6, such as 172.18.0.0/16,fd00::/8",
  ),
  churchNetworks: rule(
    z.string().transform(churchNetworks).pipe(z.custom<readonly string[]>((value) => value !== undefined)),
    CHURCH_NETWORKS_EXPECTED,
  ),
  hourlyCount: rule(
    z.string().regex(/^\d{1,5}$/).transform(Number).refine((n) => n >= 1 && n <= 10_000),
    'a whole number from 1 to 10000',
  ),
  nonNegativeInt: rule(z.string().regex(/^\d+$/).transform(Number), 'a whole number'),
  keyId: rule(z.string().regex(/^v[1-9]\d*$/), 'a key version such as v1 or v2'),
  logLevel: rule(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), 'one of fatal, error, warn, info, debug, trace, silent'),
  logFormat: rule(z.enum(['json', 'pretty']), 'json or pretty (or unset: pretty at a terminal, JSON otherwise)'),
  azureMonitorConnectionString: rule(
    z.string().refine(isAzureMonitorConnectionString),
    'an Application Insights connection string as the Azure portal shows it: InstrumentationKey=<GUID in lowercase>;IngestionEndpoint=https://… (key=value pairs separated by ";")',
  ),
  text: rule(z.string().min(1), 'a non-empty value'),
} as const;

export const isEmailAddress = (value: string): boolean => fields.email.schema.safeParse(value).success;

/** A host without a port; `portVariable` is where the port goes instead. */
export const hostField = (portVariable: string): FieldRule<string> =>
  rule(z.string().refine(isHost), `a host name, IPv4 or IPv6 address (no port here: use ${portVariable})`);

export type FieldName = keyof typeof fields;
