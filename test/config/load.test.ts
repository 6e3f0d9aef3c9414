import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, type EnvSource } from '../../src/config/index.js';
import { ROOT } from '../support/cli.js';
import { TEST_KEYS, testEnv } from '../support/env.js';

function problemsOf(env: EnvSource): Array<{ variable: string; expected: string }> {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}
const variablesOf = (env: EnvSource) => problemsOf(env).map((p) => p.variable);
const warningsOf = (env: EnvSource) => loadConfig(env).warnings;

const production = (overrides: Record<string, string | undefined> = {}) =>
  testEnv({
    NODE_ENV: 'production',
    DATABASE_URL: 'postgres://app:pw@db.example.org:5432/church',
    AUTH_URL: 'https://church.example.org',
    SMTP_USER: 'office@example.org',
    SMTP_APP_PASSWORD: 'app-password',
    CRON_SECRET: 'production-cron-secret-of-32-chars',
    ...overrides,
  });

describe('configuration rules', () => {
  it('a mistyped NODE_ENV stops boot instead of running with the development defaults', () => {
    for (const mistyped of ['Production', 'prod', 'staging']) {
      expect(problemsOf(testEnv({ NODE_ENV: mistyped }))).toContainEqual(expect.objectContaining({ variable: 'NODE_ENV' }));
    }
    for (const exact of ['development', 'test']) expect(variablesOf(testEnv({ NODE_ENV: exact }))).not.toContain('NODE_ENV');
  });

  it('a valid development environment loads with the documented defaults', () => {
    const { config } = loadConfig(testEnv({ NODE_ENV: undefined }));
    expect(config.env).toBe('development');
    expect(config.regional).toEqual({ fyStartMonth: 7, timeZone: 'Australia/Sydney', locale: 'en-AU', currency: 'AUD' });
    expect(config.migrateOnStart).toBe(true);
    expect(config.databaseUrl).toBeUndefined();
    expect(config.devOutboxDir).toMatch(/\.eventops\/outbox$/);
    expect(config.jobs.inAppCron).toBe(false);
    expect(config.smtp).toBeUndefined();
    expect(config.keyring.currentId).toBe('v1');
  });

  it('lists every problem at once, each naming its variable, never echoing a value', () => {
    const secret = 'short-secret-value';
    const problems = problemsOf(
      testEnv({ AUTH_SECRET: secret, APP_FY_START_MONTH: '13', APP_TIMEZONE: 'Mars/Olympus', THEME_ACCENT: 'blue' }),
    );
    expect(problems.map((p) => p.variable).sort()).toEqual(['APP_FY_START_MONTH', 'APP_TIMEZONE', 'AUTH_SECRET', 'THEME_ACCENT']);
    const message = new ConfigError(problems).message;
    expect(message).not.toContain(secret);
    expect(message).toContain('4 problems');
  });

  it('requires AUTH_SECRET and ENCRYPTION_KEY', () => {
    expect(variablesOf(testEnv({ AUTH_SECRET: undefined, ENCRYPTION_KEY: undefined })).sort()).toEqual([
      'AUTH_SECRET',
      'ENCRYPTION_KEY',
    ]);
  });

  it('production requires DATABASE_URL, an https AUTH_URL and mail credentials', () => {
    expect(variablesOf(production())).toEqual([]);
    expect(variablesOf(production({ DATABASE_URL: undefined }))).toEqual(['DATABASE_URL']);
    expect(variablesOf(production({ AUTH_URL: 'http://church.example.org' }))).toEqual(['AUTH_URL']);
    expect(variablesOf(production({ AUTH_URL: undefined }))).toEqual(['AUTH_URL']);
    expect(variablesOf(production({ SMTP_USER: undefined, SMTP_APP_PASSWORD: undefined }))).toEqual(['SMTP_USER']);
  });

  it('DATABASE_URL must be a postgres URL; sslmode=require is accepted', () => {
    expect(variablesOf(testEnv({ DATABASE_URL: 'mysql://x@y/z' }))).toEqual(['DATABASE_URL']);
    expect(variablesOf(testEnv({ DATABASE_URL: 'not a url' }))).toEqual(['DATABASE_URL']);
    expect(variablesOf(testEnv({ DATABASE_URL: 'postgresql://u:p@h:5432/db?sslmode=require' }))).toEqual([]);
    expect(variablesOf(testEnv({ DIRECT_URL: 'http://h/db' }))).toEqual(['DIRECT_URL']);
  });

  it('DATABASE_URL and DIRECT_URL naming a TLS file that is missing or unreadable are refused by variable, before any command connects', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-tls-'));
    fs.writeFileSync(path.join(dir, 'ca.crt'), 'a certificate');
    fs.mkdirSync(path.join(dir, 'client.key'));
    try {
      const url = (query: string) => `postgres://u:p@db.example.org/church?sslmode=verify-full&${query}`;
      expect(variablesOf(testEnv({ DATABASE_URL: url(`sslrootcert=${path.join(dir, 'ca.crt')}`) }))).toEqual([]);
      const [missing] = problemsOf(testEnv({ DATABASE_URL: url(`sslrootcert=${path.join(dir, 'none.crt')}`) }));
      expect(missing).toEqual({ variable: 'DATABASE_URL', expected: expect.stringContaining(`cannot read the sslrootcert file ${path.join(dir, 'none.crt')} (ENOENT)`) });
      const [directory] = problemsOf(testEnv({ DATABASE_URL: url(''), DIRECT_URL: url(`sslcert=/nonexistent/client.crt&sslkey=${path.join(dir, 'client.key')}`) }));
      expect(directory?.variable).toBe('DIRECT_URL');
      expect(directory?.expected).toContain('sslcert file /nonexistent/client.crt (ENOENT), the sslkey file');
      expect(directory?.expected).toContain('(EISDIR)');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('DIRECT_URL falls back to DATABASE_URL', () => {
    const { config } = loadConfig(testEnv({ DATABASE_URL: 'postgres://u:p@h/db' }));
    expect(config.directUrl).toBe('postgres://u:p@h/db');
  });

  it('ENCRYPTION_KEY and ENCRYPTION_KEY_Vn must be base64 of exactly 32 bytes', () => {
    expect(variablesOf(testEnv({ ENCRYPTION_KEY: Buffer.alloc(16).toString('base64') }))).toEqual(['ENCRYPTION_KEY']);
    expect(variablesOf(testEnv({ ENCRYPTION_KEY: 'not base64 !!' }))).toEqual(['ENCRYPTION_KEY']);
    expect(variablesOf(testEnv({ ENCRYPTION_KEY_V2: Buffer.alloc(31).toString('base64') }))).toEqual(['ENCRYPTION_KEY_V2']);
  });

  it('AUTH_SECRET must be at least 32 bytes', () => {
    expect(variablesOf(testEnv({ AUTH_SECRET: 'x'.repeat(31) }))).toEqual(['AUTH_SECRET']);
    expect(variablesOf(testEnv({ AUTH_SECRET: 'x'.repeat(32) }))).toEqual([]);
  });

  it('APP_FY_START_MONTH is an integer from 1 to 12', () => {
    for (const bad of ['0', '13', '7.5', 'July']) expect(variablesOf(testEnv({ APP_FY_START_MONTH: bad }))).toEqual(['APP_FY_START_MONTH']);
    expect(loadConfig(testEnv({ APP_FY_START_MONTH: '1' })).config.regional.fyStartMonth).toBe(1);
  });

  it('APP_TIMEZONE must be a real IANA zone, APP_LOCALE a BCP-47 tag, APP_CURRENCY a known ISO-4217 code', () => {
    expect(variablesOf(testEnv({ APP_TIMEZONE: 'Australia/Narnia' }))).toEqual(['APP_TIMEZONE']);
    expect(variablesOf(testEnv({ APP_TIMEZONE: 'Pacific/Auckland' }))).toEqual([]);
    expect(variablesOf(testEnv({ APP_LOCALE: 'en_AU!' }))).toEqual(['APP_LOCALE']);
    expect(variablesOf(testEnv({ APP_LOCALE: 'fr-CA' }))).toEqual([]);
    expect(variablesOf(testEnv({ APP_CURRENCY: 'XYZ' }))).toEqual(['APP_CURRENCY']);
    expect(variablesOf(testEnv({ APP_CURRENCY: 'aud' }))).toEqual(['APP_CURRENCY']);
    expect(variablesOf(testEnv({ APP_CURRENCY: 'JPY' }))).toEqual([]);
  });

  it('card payments are refused in a currency the card provider counts differently (ISK, HUF, UGX in hundredths; three-decimal ones only in tens): bank transfer still works', () => {
    const card = { PSP_SECRET_KEY: 'sk_test_currency', PSP_WEBHOOK_SECRET: 'whsec_currency' };
    for (const currency of ['ISK', 'HUF', 'UGX']) {
      const [problem] = problemsOf(testEnv({ ...card, APP_CURRENCY: currency }));
      expect(problem?.variable).toBe('APP_CURRENCY');
      expect(problem?.expected).toMatch(new RegExp(`card payments cannot be taken in ${currency}: the card provider counts it in hundredths.*leave PSP_SECRET_KEY and PSP_WEBHOOK_SECRET unset`));
      expect(variablesOf(testEnv({ APP_CURRENCY: currency }))).toEqual([]);
    }
    for (const currency of ['KWD', 'BHD', 'JOD', 'OMR', 'TND']) {
      expect(problemsOf(testEnv({ ...card, APP_CURRENCY: currency }))).toEqual([
        { variable: 'APP_CURRENCY', expected: expect.stringMatching(/only amounts ending in 0/) },
      ]);
    }
    for (const currency of ['AUD', 'JPY', 'KRW', 'TWD', 'EUR']) expect(variablesOf(testEnv({ ...card, APP_CURRENCY: currency }))).toEqual([]);
  });

  it('THEME_* colours are #RRGGBB and THEME_PRIMARY_DARK falls back to THEME_PRIMARY', () => {
    expect(variablesOf(testEnv({ THEME_PRIMARY: '#12345' }))).toEqual(['THEME_PRIMARY']);
    expect(variablesOf(testEnv({ THEME_PRIMARY_DARK: 'navy' }))).toEqual(['THEME_PRIMARY_DARK']);
    const { config } = loadConfig(testEnv({ THEME_PRIMARY: '#1E40AF' }));
    expect(config.theme.primaryDark).toBe('#1E40AF');
  });

  it('booleans accept only true or false', () => {
    for (const name of ['MIGRATE_ON_START', 'IN_APP_CRON', 'CLEARANCE_DIGEST', 'ERROR_DIGEST', 'DISABLE_OTP', 'ALLOW_DEMO_SEED', 'TRUST_PROXY']) {
      expect(variablesOf(testEnv({ [name]: 'yes' }))).toEqual([name]);
      expect(variablesOf(testEnv({ [name]: '1' }))).toEqual([name]);
    }
    expect(loadConfig(testEnv({ MIGRATE_ON_START: 'false' })).config.migrateOnStart).toBe(false);
  });

  it('TRUST_PROXY is true (loopback proxies only), false, or a list of proxy addresses and CIDR ranges; anything else stops boot naming it', () => {
    expect(loadConfig(testEnv({ TRUST_PROXY: 'true' })).config.http.trustProxy).toEqual(['127.0.0.0/8', '::1/128']);
    expect(loadConfig(testEnv({ TRUST_PROXY: 'false' })).config.http.trustProxy).toBe(false);
    expect(loadConfig(testEnv({ TRUST_PROXY: undefined })).config.http.trustProxy).toBe(false);
    expect(loadConfig(testEnv({ TRUST_PROXY: '10.0.0.7, 172.18.0.0/16,fd00::/8 , 2001:db8::1' })).config.http.trustProxy).toEqual([
      '10.0.0.7/32',
      '172.18.0.0/16',
      'fd00::/8',
      '2001:db8::1/128',
    ]);
    for (const garbage of ['yes', '1', '0x7f.1', '10.0.0.0/33', '::1/129', '10.0.0.0/-1', '10.0.0.0/8/8', 'fe80::1%eth0', '10.0.0.1,', '10.0.0.1 10.0.0.2', '10.0.0.1:80', 'loopback', 'proxy.internal', '*']) {
      expect(variablesOf(testEnv({ TRUST_PROXY: garbage })), garbage).toEqual(['TRUST_PROXY']);
    }
    expect(() => loadConfig(testEnv({ TRUST_PROXY: '10.0.0.0/33' }))).toThrow(/TRUST_PROXY: true \(trust a proxy on this machine/);
  });

  it('CONFIRMATION_EMAILS_PER_CLIENT_PER_HOUR is a whole number from 1 to 10000, 20 when unset', () => {
    expect(loadConfig(testEnv({})).config.limits.confirmationEmailsPerClientPerHour).toBe(20);
    expect(loadConfig(testEnv({ CONFIRMATION_EMAILS_PER_CLIENT_PER_HOUR: '50' })).config.limits.confirmationEmailsPerClientPerHour).toBe(50);
    for (const garbage of ['0', '-1', '2.5', 'many', '10001', '1e3']) {
      expect(variablesOf(testEnv({ CONFIRMATION_EMAILS_PER_CLIENT_PER_HOUR: garbage })), garbage).toEqual(['CONFIRMATION_EMAILS_PER_CLIENT_PER_HOUR']);
    }
  });

  it("CHURCH_NETWORKS lists the church's own networks in CIDR form, strictly; anything else stops boot naming it, never echoing the value", () => {
    expect(loadConfig(testEnv({})).config.limits).toMatchObject({ churchNetworks: [], churchNetworkFormPostsPerMinute: 120 });
    expect(loadConfig(testEnv({ CHURCH_NETWORKS: '203.0.113.7/32, 2001:db8:5::/48,198.51.100.0/24 , 2001:db8:7::1' })).config.limits.churchNetworks).toEqual([
      '203.0.113.7/32',
      '2001:db8:5::/48',
      '198.51.100.0/24',
      '2001:db8:7::1/128',
    ]);
    const garbage = [
      '203.0.113.7/24', // host bits set: a typo for /32?
      '2001:db8:5::1/48',
      '0.0.0.0/0', // everyone
      '10.0.0.0/8', // wider than a church's network
      '2001:db8::/31',
      '203.0.113.0/33',
      '::ffff:203.0.113.0/120', // IPv4-mapped: never matches
      'fe80::1%eth0',
      '203.0.113.7,',
      '203.0.113.7 198.51.100.1',
      '203.0.113.7:80',
      'church.example.org',
      '0x7f.1',
      'true',
    ];
    for (const value of garbage) {
      expect(variablesOf(testEnv({ CHURCH_NETWORKS: value })), value).toEqual(['CHURCH_NETWORKS']);
    }
    expect(() => loadConfig(testEnv({ CHURCH_NETWORKS: '203.0.113.7/24' }))).toThrow(/CHURCH_NETWORKS: comma-separated IPv4 or IPv6 networks of the church itself in CIDR form/);
    try {
      loadConfig(testEnv({ CHURCH_NETWORKS: '198.51.100.77/24' }));
    } catch (error) {
      expect(String(error)).not.toContain('198.51.100.77');
    }
  });

  it('CHURCH_NETWORK_FORM_POSTS_PER_MINUTE is a whole number from 1 to 10000, 120 when unset; set without CHURCH_NETWORKS it warns that it applies to nobody', () => {
    expect(loadConfig(testEnv({ CHURCH_NETWORKS: '203.0.113.7', CHURCH_NETWORK_FORM_POSTS_PER_MINUTE: '200' })).config.limits.churchNetworkFormPostsPerMinute).toBe(200);
    for (const garbage of ['0', '-1', '2.5', 'lots', '10001']) {
      expect(variablesOf(testEnv({ CHURCH_NETWORKS: '203.0.113.7', CHURCH_NETWORK_FORM_POSTS_PER_MINUTE: garbage })), garbage).toEqual(['CHURCH_NETWORK_FORM_POSTS_PER_MINUTE']);
    }
    expect(loadConfig(testEnv({ CHURCH_NETWORK_FORM_POSTS_PER_MINUTE: '200' })).warnings).toContain(
      'CHURCH_NETWORK_FORM_POSTS_PER_MINUTE is set while CHURCH_NETWORKS is not: it applies to nobody',
    );
  });

  it('TRACKER_REPO must be owner/repo', () => {
    expect(variablesOf(testEnv({ TRACKER_REPO: 'just-a-name' }))).toEqual(['TRACKER_REPO']);
    const { config } = loadConfig(testEnv({ TRACKER_REPO: 'grace/ops', TRACKER_TOKEN: 'tok' }));
    expect(config.tracker).toMatchObject({ owner: 'grace', name: 'ops', apiUrl: 'https://api.github.com' });
  });

  it('pairs are set both or neither: captcha keys, query log', () => {
    expect(variablesOf(testEnv({ CAPTCHA_SECRET_KEY: 's' }))).toEqual(['CAPTCHA_SITE_KEY']);
    expect(variablesOf(testEnv({ CAPTCHA_SITE_KEY: 's' }))).toEqual(['CAPTCHA_SECRET_KEY']);
    expect(variablesOf(testEnv({ PERF_QUERY_LOG: 'true' }))).toEqual(['PERF_QUERY_LOG_FILE']);
    expect(variablesOf(testEnv({ PERF_QUERY_LOG_FILE: 'q.jsonl' }))).toEqual(['PERF_QUERY_LOG']);
  });

  it('website sync is on with both WEBSITE_SYNC_URL and WEBSITE_SYNC_SECRET; with one of them it is off, with a warning naming the other', () => {
    const { config } = loadConfig(testEnv({ WEBSITE_SYNC_URL: 'https://site.example.org/hook', WEBSITE_SYNC_SECRET: 's' }));
    expect(config.websiteSync?.url).toBe('https://site.example.org/hook');
    const urlOnly = loadConfig(production({ WEBSITE_SYNC_URL: 'https://site.example.org/hook' }));
    expect(urlOnly.config.websiteSync).toBeUndefined();
    expect(urlOnly.warnings).toEqual(['WEBSITE_SYNC_SECRET is unset while WEBSITE_SYNC_URL is set: website sync is off']);
    const secretOnly = loadConfig(production({ WEBSITE_SYNC_SECRET: 'w'.repeat(32) }));
    expect(secretOnly.config.websiteSync).toBeUndefined();
    expect(secretOnly.warnings).toEqual(['WEBSITE_SYNC_URL is unset while WEBSITE_SYNC_SECRET is set: website sync is off']);
  });

  it('card payments are on only when both provider keys are set; with one of them they are off (bank transfer), with a warning naming the other', () => {
    expect(loadConfig(testEnv()).config.payments).toBeUndefined();
    const { config } = loadConfig(testEnv({ PSP_SECRET_KEY: 'sk_test_x', PSP_WEBHOOK_SECRET: 'whsec_x', PSP_API_BASE: 'http://127.0.0.1:9/' }));
    expect(config.payments).toEqual({ secretKey: 'sk_test_x', webhookSecret: 'whsec_x', apiBase: 'http://127.0.0.1:9' });
    const keyOnly = loadConfig(production({ PSP_SECRET_KEY: 'sk_live_x' }));
    expect(keyOnly.config.payments).toBeUndefined();
    expect(keyOnly.warnings).toEqual([
      'PSP_WEBHOOK_SECRET is unset while PSP_SECRET_KEY is set: card payments are off, registrations fall back to bank transfer',
    ]);
    const secretOnly = loadConfig(production({ PSP_WEBHOOK_SECRET: 'whsec_x' }));
    expect(secretOnly.config.payments).toBeUndefined();
    expect(secretOnly.warnings.join('\n')).toMatch(/^PSP_SECRET_KEY is unset while PSP_WEBHOOK_SECRET is set: card payments are off/);
  });

  it("PSP_WEBHOOK_SECRET must have the provider's whsec_ form", () => {
    const both = { PSP_SECRET_KEY: 'sk_test_x' };
    for (const wrong of ['sk_test_x', 'whsec_', 'WHSEC_abc', 'whsec abc', 'abc']) {
      expect(variablesOf(testEnv({ ...both, PSP_WEBHOOK_SECRET: wrong }))).toEqual(['PSP_WEBHOOK_SECRET']);
    }
    const [problem] = problemsOf(testEnv({ ...both, PSP_WEBHOOK_SECRET: 'sk_test_x' }));
    expect(problem?.expected).toMatch(/whsec_/);
    expect(variablesOf(testEnv({ ...both, PSP_WEBHOOK_SECRET: 'whsec_Ab12cd34Ef56' }))).toEqual([]);
  });

  it('in production CRON_SECRET, SETUP_TOKEN and WEBSITE_SYNC_SECRET need at least 32 characters, each named', () => {
    const weak = { CRON_SECRET: 'abc', SETUP_TOKEN: 'abc', WEBSITE_SYNC_URL: 'https://site.example.org/hook', WEBSITE_SYNC_SECRET: 'abc' };
    expect(variablesOf(production(weak)).sort()).toEqual(['CRON_SECRET', 'SETUP_TOKEN', 'WEBSITE_SYNC_SECRET']);
    const [problem] = problemsOf(production({ CRON_SECRET: 'x'.repeat(31) }));
    expect(problem).toEqual({ variable: 'CRON_SECRET', expected: expect.stringMatching(/at least 32 characters/) as unknown as string });
    const strong = { CRON_SECRET: 'c'.repeat(32), SETUP_TOKEN: 's'.repeat(32), WEBSITE_SYNC_URL: 'https://site.example.org/hook', WEBSITE_SYNC_SECRET: 'w'.repeat(32) };
    expect(variablesOf(production(strong))).toEqual([]);
    // Outside production a short secret is a developer's choice.
    expect(variablesOf(testEnv(weak))).toEqual([]);
  });

  it('in production each secret has a value of its own: a reused one is named, never shown', () => {
    const shared = 'one-value-used-for-two-secrets-of-32-chars';
    const problems = problemsOf(production({ AUTH_SECRET: shared, CRON_SECRET: shared }));
    expect(problems).toEqual([{ variable: 'CRON_SECRET', expected: 'a value of its own, not the same as AUTH_SECRET' }]);
    expect(variablesOf(production({ SETUP_TOKEN: production().CRON_SECRET }))).toEqual(['SETUP_TOKEN']);
    expect(variablesOf(production({ CRON_SECRET: TEST_KEYS.v1 }))).toEqual(['CRON_SECRET']);
    expect(variablesOf(production({ SETUP_TOKEN: 's'.repeat(32) }))).toEqual([]);
    // Outside production, as with their length, that is a developer's choice.
    expect(variablesOf(testEnv({ SETUP_TOKEN: testEnv().CRON_SECRET }))).toEqual([]);
  });

  it('in production the providers\' API URLs are https, or plain http only to a loopback address', () => {
    const apis = ['MAILAPI_URL', 'PSP_API_BASE', 'TRACKER_API_URL', 'CAPTCHA_VERIFY_URL'];
    const plain = Object.fromEntries(apis.map((name) => [name, 'http://proxy.example.org:8080']));
    expect(variablesOf(production(plain)).sort()).toEqual([...apis].sort());
    for (const loopback of ['http://127.0.0.1:12111', 'http://localhost:8080', 'http://[::1]:8080']) {
      expect(variablesOf(production(Object.fromEntries(apis.map((name) => [name, loopback]))))).toEqual([]);
    }
    expect(variablesOf(production(Object.fromEntries(apis.map((name) => [name, 'https://proxy.example.org']))))).toEqual([]);
    // Outside production a local fake speaks plain http wherever it runs.
    expect(variablesOf(testEnv(plain))).toEqual([]);
  });

  it('AUTH_URL, NEXTAUTH_URL and APP_URL carry no credentials, query or fragment: every link is built on them', () => {
    for (const bad of ['https://user:pw@church.example.org', 'https://church.example.org/?ref=1', 'https://church.example.org/#top', 'ftp://church.example.org']) {
      expect(variablesOf(production({ AUTH_URL: bad }))).toEqual(['AUTH_URL']);
      expect(variablesOf(testEnv({ APP_URL: bad }))).toEqual(['APP_URL']);
      expect(variablesOf(testEnv({ AUTH_URL: undefined, NEXTAUTH_URL: bad }))).toEqual(['NEXTAUTH_URL']);
    }
    expect(loadConfig(production({ AUTH_URL: 'https://church.example.org/events/' })).config.authUrl).toBe('https://church.example.org/events');
  });

  it('HOST and SMTP_HOST are a DNS name, an IPv4 or an IPv6 address: a port goes in PORT or SMTP_PORT', () => {
    for (const good of ['smtp.gmail.com', 'mail-relay', 'mail_relay', 'localhost', '127.0.0.1', '0.0.0.0', '::', '::1', 'fe80::1']) {
      expect(variablesOf(testEnv({ HOST: good, SMTP_HOST: good }))).toEqual([]);
    }
    for (const bad of ['127.0.0.1:3000', 'smtp.gmail.com:587', '[::1]:3000', '300.1.1.1', 'smtp..gmail.com', '-relay', 'smtp/gmail']) {
      expect(variablesOf(testEnv({ HOST: bad, SMTP_HOST: bad }))).toEqual(['SMTP_HOST', 'HOST']);
    }
    const problems = problemsOf(testEnv({ HOST: '127.0.0.1:3000', SMTP_HOST: 'smtp.gmail.com:587' }));
    expect(problems.find((p) => p.variable === 'HOST')?.expected).toMatch(/no port here: use PORT\)/);
    expect(problems.find((p) => p.variable === 'SMTP_HOST')?.expected).toMatch(/no port here: use SMTP_PORT\)/);
  });

  it('AUTH_URL, NEXTAUTH_URL and APP_URL ending in a bare "?" or "#" are refused: every link would be built after it', () => {
    for (const bad of ['https://church.example.org?', 'https://church.example.org/#', 'https://church.example.org/events?#']) {
      expect(variablesOf(production({ AUTH_URL: bad }))).toEqual(['AUTH_URL']);
      expect(variablesOf(testEnv({ APP_URL: bad }))).toEqual(['APP_URL']);
      expect(variablesOf(testEnv({ AUTH_URL: undefined, NEXTAUTH_URL: bad }))).toEqual(['NEXTAUTH_URL']);
    }
  });

  it('CHURCH_WEBSITE is an http(s) URL: it becomes a link in every email', () => {
    for (const bad of ['javascript:alert(1)', 'data:text/html,hi', 'gracechurch']) {
      expect(variablesOf(testEnv({ CHURCH_WEBSITE: bad }))).toEqual(['CHURCH_WEBSITE']);
    }
    expect(loadConfig(testEnv({ CHURCH_WEBSITE: 'https://grace.example.org' })).config.church.website).toBe('https://grace.example.org');
  });
  it('TELEMETRY_CONNECTION_STRING is an Application Insights connection string with InstrumentationKey=<GUID>, else exit 78 before serve fails on it', () => {
    const guid = '0a1b2c3d-1111-2222-3333-444444444444';
    const bare = problemsOf(testEnv({ TELEMETRY_CONNECTION_STRING: guid }));
    expect(bare).toEqual([{ variable: 'TELEMETRY_CONNECTION_STRING', expected: expect.stringContaining('InstrumentationKey=<GUID') }]);
    expect(new ConfigError(bare).message).not.toContain(guid);
    for (const bad of [
      `InstrumentationKey=${guid.toUpperCase()}`, // the exporter's GUID rule is lowercase only
      `InstrumentationKey= ${guid}`,
      `IngestionEndpoint=https://westeurope-5.in.applicationinsights.azure.com/; InstrumentationKey=${guid}`, // " InstrumentationKey" is not the key
      `InstrumentationKey=${guid};IngestionEndpoint=https://in.example.org/?a=b`, // the exporter drops a pair with two "="
      'IngestionEndpoint=https://westeurope-5.in.applicationinsights.azure.com/',
      'https://westeurope-5.in.applicationinsights.azure.com/',
    ]) {
      expect(variablesOf(testEnv({ TELEMETRY_CONNECTION_STRING: bad }))).toEqual(['TELEMETRY_CONNECTION_STRING']);
    }
    const portal = `InstrumentationKey=${guid};IngestionEndpoint=https://westeurope-5.in.applicationinsights.azure.com/;LiveEndpoint=https://westeurope.livediagnostics.monitor.azure.com/;ApplicationId=9f8e7d6c-0000-1111-2222-333344445555`;
    expect(loadConfig(testEnv({ TELEMETRY_CONNECTION_STRING: portal })).config.telemetryConnectionString).toBe(portal);
    expect(variablesOf(testEnv({ TELEMETRY_CONNECTION_STRING: `instrumentationkey=${guid};` }))).toEqual([]);
  });


  it('NEXT_PUBLIC_CAPTCHA_SITE_KEY is accepted as a deprecated alias with a warning', () => {
    const loaded = loadConfig(testEnv({ CAPTCHA_SECRET_KEY: 'secret', NEXT_PUBLIC_CAPTCHA_SITE_KEY: 'site' }));
    expect(loaded.config.captcha?.siteKey).toBe('site');
    expect(loaded.warnings.join('\n')).toMatch(/NEXT_PUBLIC_CAPTCHA_SITE_KEY is deprecated/);
  });

  it('NEXTAUTH_SECRET and NEXTAUTH_URL are legacy fallbacks; differing secrets stop boot', () => {
    const secret = 'legacy-secret-that-is-long-enough-32b';
    const fallback = loadConfig(testEnv({ AUTH_SECRET: undefined, NEXTAUTH_SECRET: secret, AUTH_URL: undefined, NEXTAUTH_URL: 'https://legacy.example.org/' }));
    expect(fallback.config.authSecret).toBe(secret);
    expect(fallback.config.authUrl).toBe('https://legacy.example.org');
    expect(variablesOf(testEnv({ NEXTAUTH_SECRET: secret }))).toEqual(['AUTH_SECRET']);
    expect(variablesOf(testEnv({ NEXTAUTH_SECRET: testEnv().AUTH_SECRET }))).toEqual([]);
    expect(variablesOf(production({ AUTH_URL: undefined, NEXTAUTH_URL: 'http://legacy.example.org' }))).toEqual(['NEXTAUTH_URL']);
  });

  it('DISABLE_OTP is refused in production and waives the SMTP requirement elsewhere', () => {
    expect(variablesOf(production({ DISABLE_OTP: 'true' }))).toEqual(['DISABLE_OTP']);
    expect(variablesOf(testEnv({ DISABLE_OTP: 'true' }))).toEqual([]);
  });

  it('SMTP credentials are required unless the mail API is configured; MAILAPI_KEY needs MAIL_FROM', () => {
    expect(variablesOf(production({ SMTP_USER: undefined, SMTP_APP_PASSWORD: undefined, MAILAPI_KEY: 're_x', MAIL_FROM: 'office@example.org' }))).toEqual([]);
    expect(variablesOf(production({ SMTP_USER: undefined, SMTP_APP_PASSWORD: undefined, MAILAPI_KEY: 're_x' }))).toEqual(['MAIL_FROM']);
    expect(variablesOf(testEnv({ SMTP_USER: 'office@example.org' }))).toEqual(['SMTP_APP_PASSWORD']);
    const { config } = loadConfig(production());
    expect(config.smtp).toMatchObject({ host: 'smtp.gmail.com', port: 465, secure: true });
    expect(config.devOutboxDir).toBeUndefined();
  });

  it('MAIL_FROM is required when SMTP_USER is not an email address (an SES or SendGrid login): it would be the From of every email', () => {
    for (const login of ['AKIAIOSFODNN7EXAMPLE', 'apikey']) {
      const [problem] = problemsOf(production({ SMTP_USER: login }));
      expect(problem).toEqual({ variable: 'MAIL_FROM', expected: expect.stringMatching(/^required when SMTP_USER is not an email address/) });
      expect(loadConfig(production({ SMTP_USER: login, MAIL_FROM: 'office@example.org' })).config.mailFrom).toBe('office@example.org');
    }
    expect(loadConfig(production()).config.mailFrom).toBe('office@example.org');
  });

  it('MAIL_FROM may carry a display name of its own, quoted or not; the address alone is the sender address', () => {
    const from = (value: string) => {
      const { config } = loadConfig(production({ MAIL_FROM: value }));
      return { address: config.mailFrom, name: config.mailFromName };
    };
    expect(from('office@example.org')).toEqual({ address: 'office@example.org', name: undefined });
    expect(from('"Parish Office" <office@example.org>')).toEqual({ address: 'office@example.org', name: 'Parish Office' });
    expect(from('Parish Office <office@example.org>')).toEqual({ address: 'office@example.org', name: 'Parish Office' });
    expect(from('"St Mark\'s, \\"Old\\" Parish" <office@example.org>')).toEqual({ address: 'office@example.org', name: 'St Mark\'s, "Old" Parish' });
    expect(from('José María <jm@example.org>')).toEqual({ address: 'jm@example.org', name: 'José María' });
    expect(from('<office@example.org>')).toEqual({ address: 'office@example.org', name: undefined });
    for (const bad of ['Parish Office', 'Parish <office>', 'a@example.org, b@example.org', 'Office <a@example.org> x', 'Of<fice <a@example.org>', '"Office\u0007" <a@example.org>']) {
      expect(problemsOf(production({ MAIL_FROM: bad }))).toEqual([
        { variable: 'MAIL_FROM', expected: 'an email address, or a name and address such as "Parish Office" <office@church.org>' },
      ]);
    }
  });

  it('the mail API switches all mail to it and the outbox is only a development default', () => {
    const { config } = loadConfig(testEnv({ MAILAPI_KEY: 're_x', MAIL_FROM: 'office@example.org', MAILAPI_URL: 'http://127.0.0.1:1/' }));
    expect(config.mailApi).toEqual({ key: 're_x', url: 'http://127.0.0.1:1' });
    expect(config.devOutboxDir).toBeUndefined();
  });

  it('a value carrying a trailing comment is rejected by name', () => {
    expect(variablesOf(testEnv({ APP_TIMEZONE: 'Australia/Sydney # local time' }))).toEqual(['APP_TIMEZONE']);
    const [problem] = problemsOf(testEnv({ CRON_SECRET: 'abc #comment' }));
    expect(problem?.variable).toBe('CRON_SECRET');
    expect(problem?.expected).toMatch(/trailing comment/);
    expect(problem?.expected).not.toContain('abc');
  });

  it('CONTAINER_APP_REPLICA_COUNT above 1 is no longer a warning: every limit and claim is shared through PostgreSQL', () => {
    expect(warningsOf(testEnv({ CONTAINER_APP_REPLICA_COUNT: '3' }))).toEqual([]);
    expect(loadConfig(testEnv({ CONTAINER_APP_REPLICA_COUNT: '3' })).config.replicaCount).toBe(3);
  });

  it('IN_APP_CRON defaults on in production only', () => {
    expect(loadConfig(production()).config.jobs.inAppCron).toBe(true);
    expect(loadConfig(production({ IN_APP_CRON: 'false' })).config.jobs.inAppCron).toBe(false);
    expect(loadConfig(testEnv()).config.jobs.inAppCron).toBe(false);
  });
});

describe('encryption keyring rules (spec section 9)', () => {
  it('ENCRYPTION_KEY alone acts as key v1', () => {
    const { keyring } = loadConfig(testEnv()).config;
    expect([...keyring.keys.keys()]).toEqual(['v1']);
    expect(keyring.keys.get('v1')?.toString('base64')).toBe(TEST_KEYS.v1);
  });

  it('ENCRYPTION_KEY_ID other than v1 is refused while v1 exists only as the ENCRYPTION_KEY alias', () => {
    const problems = problemsOf(testEnv({ ENCRYPTION_KEY_V2: TEST_KEYS.v2, ENCRYPTION_KEY_ID: 'v2' }));
    expect(problems.map((p) => p.variable)).toEqual(['ENCRYPTION_KEY_ID']);
    expect(problems[0]?.expected).toMatch(/ENCRYPTION_KEY_V1/);
  });

  it('a versioned keyring with ENCRYPTION_KEY_V1 equal to ENCRYPTION_KEY writes with ENCRYPTION_KEY_ID', () => {
    const { keyring } = loadConfig(
      testEnv({ ENCRYPTION_KEY_V1: TEST_KEYS.v1, ENCRYPTION_KEY_V2: TEST_KEYS.v2, ENCRYPTION_KEY_ID: 'v2' }),
    ).config;
    expect(keyring.currentId).toBe('v2');
    expect([...keyring.keys.keys()]).toEqual(['v1', 'v2']);
  });

  it('ENCRYPTION_KEY_V1 must equal ENCRYPTION_KEY (lookup hashes derive from v1)', () => {
    expect(variablesOf(testEnv({ ENCRYPTION_KEY_V1: TEST_KEYS.v2 }))).toEqual(['ENCRYPTION_KEY_V1']);
  });

  it('ENCRYPTION_KEY_ID must name a version that has a key', () => {
    expect(variablesOf(testEnv({ ENCRYPTION_KEY_V1: TEST_KEYS.v1, ENCRYPTION_KEY_ID: 'v3' }))).toEqual(['ENCRYPTION_KEY_ID']);
    expect(variablesOf(testEnv({ ENCRYPTION_KEY_ID: 'two' }))).toEqual(['ENCRYPTION_KEY_ID']);
  });
});

describe('.env.example', () => {
  it('documents every variable the loader reads, NODE_ENV (production on a church\'s server) included', () => {
    const read = new Set<string>();
    const env = new Proxy(testEnv(), {
      get: (target, name) => {
        if (typeof name === 'string') read.add(name);
        return target[name as string];
      },
    });
    loadConfig(env);
    const documented = new Set([...fs.readFileSync(path.join(ROOT, '.env.example'), 'utf8').matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]));
    expect([...read].filter((name) => !documented.has(name))).toEqual([]);
    expect(read).toContain('NODE_ENV');
  });
});
