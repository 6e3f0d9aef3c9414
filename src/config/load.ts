import path from 'node:path';
import { unreadableTlsFiles } from '../db/ssl.js';
import { cardCurrencyProblem } from './card-currencies.js';
import { DEFAULT_CHURCH_NETWORK_FORM_POSTS_PER_MINUTE } from './church-networks.js';
import { fields, hostField, isEmailAddress, isLoopbackUrl, type FieldRule } from './fields.js';
import type { AppConfig, ConfigProblem, Keyring, LoadedConfig, RuntimeEnv } from './types.js';

export type EnvSource = Readonly<Record<string, string | undefined>>;

export class ConfigError extends Error {
  readonly code = 'config_invalid';
  constructor(readonly problems: ConfigProblem[]) {
    super(
      `Configuration is invalid (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n` +
        problems.map((p) => `  - ${p.variable}: ${p.expected}`).join('\n'),
    );
    this.name = 'ConfigError';
  }
}

export const DEFAULTS = {
  smtpHost: 'smtp.gmail.com',
  smtpPort: 465,
  pspApiBase: 'https://api.stripe.com',
  mailApiUrl: 'https://api.resend.com',
  trackerApiUrl: 'https://api.github.com',
  captchaVerifyUrl: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
  theme: { primary: '#475569', accent: '#0EA5E9' },
  confirmationEmailsPerClientPerHour: 20,
} as const;

/** Variables whose values are never printed, not even in `config check`. */
export const SECRET_VARIABLES = new Set([
  'DATABASE_URL',
  'DIRECT_URL',
  'AUTH_SECRET',
  'NEXTAUTH_SECRET',
  'ENCRYPTION_KEY',
  'SMTP_APP_PASSWORD',
  'MAILAPI_KEY',
  'SETUP_TOKEN',
  'CRON_SECRET',
  'PSP_SECRET_KEY',
  'PSP_WEBHOOK_SECRET',
  'CAPTCHA_SECRET_KEY',
  'WEBSITE_SYNC_SECRET',
  'TRACKER_TOKEN',
  'TELEMETRY_CONNECTION_STRING',
]);

export function isSecretVariable(name: string): boolean {
  return SECRET_VARIABLES.has(name) || /^ENCRYPTION_KEY_V\d+$/.test(name);
}

/**
 * Validates the whole environment in one pass and either returns the typed
 * configuration or throws one ConfigError listing every problem. Messages name
 * the variable and what is expected; they never contain the value.
 */
export function loadConfig(
  env: EnvSource,
  options: { cwd?: string; /** Variables quoted in .env around a "#": not a trailing comment. */ quotedWithHash?: ReadonlySet<string> } = {},
): LoadedConfig {
  const problems: ConfigProblem[] = [];
  const warnings: string[] = [];
  const problem = (variable: string, expected: string) => problems.push({ variable, expected });

  const raw = (name: string): string | undefined => {
    const value = env[name];
    if (value === undefined || value.trim() === '') return undefined;
    if (/\s#/.test(value) && !options.quotedWithHash?.has(name)) {
      problem(name, 'no trailing comment on the line (remove the " #…" part)');
      return undefined;
    }
    return value.trim();
  };
  const read = <T>(name: string, fieldRule: FieldRule<T>): T | undefined => {
    const value = raw(name);
    if (value === undefined) return undefined;
    const parsed = fieldRule.schema.safeParse(value);
    if (!parsed.success) {
      problem(name, fieldRule.expected);
      return undefined;
    }
    return parsed.data;
  };
  const pair = (a: string, b: string) => {
    const hasA = raw(a) !== undefined;
    const hasB = raw(b) !== undefined;
    if (hasA !== hasB) problem(hasA ? b : a, `must be set together with ${hasA ? a : b} (set both or neither)`);
    return hasA && hasB;
  };
  /** A pair that switches a feature on: with only one half set the feature is off, with a warning naming the other. */
  const featurePair = (a: string, b: string, feature: string) => {
    const hasA = raw(a) !== undefined;
    const hasB = raw(b) !== undefined;
    if (hasA !== hasB) warnings.push(`${hasA ? b : a} is unset while ${hasA ? a : b} is set: ${feature}`);
    return hasA && hasB;
  };
  /** Shared secrets that guard an endpoint or a signature: long enough in production not to be guessed. */
  const sharedSecret = (name: string): string | undefined => {
    const value = raw(name);
    if (value !== undefined && isProduction && value.length < 32) {
      problem(name, 'at least 32 characters in production (openssl rand -hex 32)');
    }
    return value;
  };

  const nodeEnv = raw('NODE_ENV');
  // A mistyped "Production" or "prod" would otherwise run with the development defaults (embedded database, outbox).
  if (nodeEnv !== undefined && !['production', 'development', 'test'].includes(nodeEnv)) {
    problem('NODE_ENV', 'production, development or test (exactly, in lowercase), or unset for development');
  }
  const runtimeEnv: RuntimeEnv =
    nodeEnv === 'production' ? 'production' : nodeEnv === 'test' ? 'test' : 'development';
  const isProduction = runtimeEnv === 'production';
  const stateDir = path.resolve(options.cwd ?? process.cwd(), '.eventops');

  // Database
  const databaseUrl = read('DATABASE_URL', fields.postgresUrl);
  if (raw('DATABASE_URL') === undefined && isProduction) {
    problem('DATABASE_URL', 'a postgres:// connection URL (required in production)');
  }
  const ownDirectUrl = read('DIRECT_URL', fields.postgresUrl);
  const directUrl = ownDirectUrl ?? databaseUrl;
  for (const [name, url] of [['DATABASE_URL', databaseUrl], ['DIRECT_URL', ownDirectUrl]] as const) {
    const unreadable = url ? unreadableTlsFiles(url, options.cwd ?? process.cwd()) : [];
    if (unreadable.length > 0) problem(name, `TLS files that exist and this user may read: cannot read the ${unreadable.join(', the ')}`);
  }
  const migrateOnStart = read('MIGRATE_ON_START', fields.boolean) ?? true;

  // Auth secret and URL, with the NEXTAUTH_* legacy fallbacks
  const authSecretNew = read('AUTH_SECRET', fields.secret32);
  const authSecretLegacy = read('NEXTAUTH_SECRET', fields.secret32);
  if (authSecretNew && authSecretLegacy && authSecretNew !== authSecretLegacy) {
    problem('AUTH_SECRET', 'the same value as NEXTAUTH_SECRET when both are set (or unset NEXTAUTH_SECRET)');
  }
  const authSecret = authSecretNew ?? authSecretLegacy;
  if (!authSecret && raw('AUTH_SECRET') === undefined && raw('NEXTAUTH_SECRET') === undefined) {
    problem('AUTH_SECRET', 'at least 32 bytes (openssl rand -base64 32); required');
  }
  if (!raw('AUTH_SECRET') && authSecretLegacy) warnings.push('NEXTAUTH_SECRET is a legacy name: rename it to AUTH_SECRET');

  const authUrlNew = read('AUTH_URL', fields.baseUrl);
  const authUrlLegacy = read('NEXTAUTH_URL', fields.baseUrl);
  const authUrl = stripTrailingSlash(authUrlNew ?? authUrlLegacy);
  if (authUrlNew && authUrlLegacy && stripTrailingSlash(authUrlNew) !== stripTrailingSlash(authUrlLegacy)) {
    warnings.push('AUTH_URL and NEXTAUTH_URL differ: AUTH_URL is used');
  }
  if (isProduction) {
    if (!authUrl) problem('AUTH_URL', 'the public https:// URL of the app (required in production)');
    else if (!authUrl.startsWith('https://')) problem(authUrlNew ? 'AUTH_URL' : 'NEXTAUTH_URL', 'an https:// URL in production');
  }
  const appUrl = stripTrailingSlash(read('APP_URL', fields.baseUrl));
  /** A provider's API, called with a key: in production over TLS unless it stays on this machine. */
  const apiUrl = (name: string): string | undefined => {
    const value = read(name, fields.httpUrl);
    if (value !== undefined && isProduction && !value.startsWith('https://') && !isLoopbackUrl(value)) {
      problem(name, 'an https:// URL in production (plain http:// only to a loopback address, such as a local proxy)');
    }
    return value;
  };

  const keyring = readKeyring(env, raw, problem);

  // Mail
  const disableOtp = read('DISABLE_OTP', fields.boolean) ?? false;
  if (disableOtp && isProduction) problem('DISABLE_OTP', 'unset in production (the app refuses to boot with it)');
  const mailApiKey = raw('MAILAPI_KEY');
  const mailFrom = read('MAIL_FROM', fields.mailbox);
  if (mailApiKey && !raw('MAIL_FROM')) problem('MAIL_FROM', 'a sender address on a verified domain (required with MAILAPI_KEY)');
  const mailApiUrl = stripTrailingSlash(apiUrl('MAILAPI_URL')) ?? DEFAULTS.mailApiUrl;
  const smtpUser = raw('SMTP_USER');
  const smtpPassword = raw('SMTP_APP_PASSWORD');
  // An SES or SendGrid login (AKIA…, "apikey") is no sender address: it would become the From of every email.
  const smtpUserAddress = smtpUser !== undefined && isEmailAddress(smtpUser) ? smtpUser : undefined;
  if (smtpUser !== undefined && !smtpUserAddress && !raw('MAIL_FROM')) {
    problem('MAIL_FROM', 'required when SMTP_USER is not an email address (a provider login): the sender address of every email');
  }
  const smtpHost = read('SMTP_HOST', hostField('SMTP_PORT')) ?? DEFAULTS.smtpHost;
  const smtpPort = read('SMTP_PORT', fields.port) ?? DEFAULTS.smtpPort;
  const smtpSecure = read('SMTP_SECURE', fields.boolean) ?? smtpPort === 465;
  const hasSmtp = Boolean(smtpUser && smtpPassword);
  if ((smtpUser === undefined) !== (smtpPassword === undefined)) {
    problem(smtpUser ? 'SMTP_APP_PASSWORD' : 'SMTP_USER', 'must be set together with the other SMTP credential');
  } else if (!hasSmtp && !mailApiKey && !disableOtp && isProduction) {
    problem('SMTP_USER', 'SMTP_USER and SMTP_APP_PASSWORD are required unless DISABLE_OTP is set or MAILAPI_KEY and MAIL_FROM are');
  }

  // Regional and theme
  const fyStartMonth = read('APP_FY_START_MONTH', fields.month) ?? 7;
  const timeZone = read('APP_TIMEZONE', fields.timeZone) ?? 'Australia/Sydney';
  const locale = read('APP_LOCALE', fields.locale) ?? 'en-AU';
  const currency = read('APP_CURRENCY', fields.currency) ?? 'AUD';
  const primary = read('THEME_PRIMARY', fields.colour) ?? DEFAULTS.theme.primary;
  const primaryDark = read('THEME_PRIMARY_DARK', fields.colour) ?? primary;
  const accent = read('THEME_ACCENT', fields.colour) ?? DEFAULTS.theme.accent;

  // Jobs
  const inAppCron = read('IN_APP_CRON', fields.boolean) ?? isProduction;
  const clearanceDigest = read('CLEARANCE_DIGEST', fields.boolean) ?? false;
  const errorDigest = read('ERROR_DIGEST', fields.boolean) ?? false;
  const cronSecret = sharedSecret('CRON_SECRET');

  // Card payments: on only when both keys are set; with one of them, off (bank transfer) with a warning
  const paymentsOn = featurePair('PSP_SECRET_KEY', 'PSP_WEBHOOK_SECRET', 'card payments are off, registrations fall back to bank transfer');
  const webhookSecret = read('PSP_WEBHOOK_SECRET', fields.webhookSecret);
  const cardCurrency = paymentsOn ? cardCurrencyProblem(currency) : undefined;
  if (cardCurrency) problem('APP_CURRENCY', cardCurrency);
  const pspApiBase = stripTrailingSlash(apiUrl('PSP_API_BASE'));

  // Captcha, with the deprecated public alias
  let siteKey = raw('CAPTCHA_SITE_KEY');
  const legacySiteKey = raw('NEXT_PUBLIC_CAPTCHA_SITE_KEY');
  if (legacySiteKey) {
    warnings.push('NEXT_PUBLIC_CAPTCHA_SITE_KEY is deprecated: rename it to CAPTCHA_SITE_KEY');
    siteKey ??= legacySiteKey;
  }
  const captchaSecret = raw('CAPTCHA_SECRET_KEY');
  if (Boolean(captchaSecret) !== Boolean(siteKey)) {
    problem(captchaSecret ? 'CAPTCHA_SITE_KEY' : 'CAPTCHA_SECRET_KEY', 'must be set together with the other captcha key (set both or neither)');
  }
  const captchaVerifyUrl = apiUrl('CAPTCHA_VERIFY_URL') ?? DEFAULTS.captchaVerifyUrl;

  // Other
  const setupToken = sharedSecret('SETUP_TOKEN');
  const membershipSecretaryEmail = read('MEMBERSHIP_SECRETARY_EMAIL', fields.email);
  const websiteSyncOn = featurePair('WEBSITE_SYNC_URL', 'WEBSITE_SYNC_SECRET', 'website sync is off');
  const websiteSyncSecret = sharedSecret('WEBSITE_SYNC_SECRET');
  const websiteSyncUrl = read('WEBSITE_SYNC_URL', fields.httpUrl);
  if (websiteSyncUrl && isProduction && !websiteSyncUrl.startsWith('https://')) {
    problem('WEBSITE_SYNC_URL', 'a public https:// URL in production');
  }
  const trackerToken = raw('TRACKER_TOKEN');
  const trackerRepo = read('TRACKER_REPO', fields.repo);
  const trackerApiUrl = stripTrailingSlash(apiUrl('TRACKER_API_URL')) ?? DEFAULTS.trackerApiUrl;
  const replicaCount = read('CONTAINER_APP_REPLICA_COUNT', fields.nonNegativeInt) ?? 1;
  const allowDemoSeed = read('ALLOW_DEMO_SEED', fields.boolean) ?? false;
  const perfOn = pair('PERF_QUERY_LOG', 'PERF_QUERY_LOG_FILE');
  const perfEnabled = read('PERF_QUERY_LOG', fields.boolean);
  const perfFile = raw('PERF_QUERY_LOG_FILE');
  const port = read('PORT', fields.port) ?? 3000;
  const host = read('HOST', hostField('PORT')) ?? '127.0.0.1';
  const trustProxy = read('TRUST_PROXY', fields.trustProxy) ?? false;
  const confirmationEmailsPerClientPerHour = read('CONFIRMATION_EMAILS_PER_CLIENT_PER_HOUR', fields.hourlyCount) ?? DEFAULTS.confirmationEmailsPerClientPerHour;
  const churchNetworks = read('CHURCH_NETWORKS', fields.churchNetworks) ?? [];
  const churchNetworkFormPostsPerMinute = read('CHURCH_NETWORK_FORM_POSTS_PER_MINUTE', fields.hourlyCount) ?? DEFAULT_CHURCH_NETWORK_FORM_POSTS_PER_MINUTE;
  if (raw('CHURCH_NETWORK_FORM_POSTS_PER_MINUTE') !== undefined && raw('CHURCH_NETWORKS') === undefined) {
    warnings.push('CHURCH_NETWORK_FORM_POSTS_PER_MINUTE is set while CHURCH_NETWORKS is not: it applies to nobody');
  }
  const logLevel = read('LOG_LEVEL', fields.logLevel) ?? 'info';
  const logFormat = read('LOG_FORMAT', fields.logFormat);
  const churchWebsite = read('CHURCH_WEBSITE', fields.httpUrl);
  const telemetryConnectionString = read('TELEMETRY_CONNECTION_STRING', fields.azureMonitorConnectionString);
  if (isProduction) requireDistinct(['AUTH_SECRET', 'ENCRYPTION_KEY', 'CRON_SECRET', 'SETUP_TOKEN', 'WEBSITE_SYNC_SECRET'], raw, problem);

  if (problems.length > 0) throw new ConfigError(dedupe(problems));

  const config: AppConfig = {
    env: runtimeEnv,
    isProduction,
    databaseUrl,
    directUrl,
    migrateOnStart,
    authSecret: authSecret as string,
    authUrl,
    appUrl,
    keyring,
    smtp: hasSmtp
      ? { host: smtpHost, port: smtpPort, secure: smtpSecure, user: smtpUser as string, password: smtpPassword as string }
      : undefined,
    mailApi: mailApiKey ? { key: mailApiKey, url: mailApiUrl } : undefined,
    mailFrom: mailFrom?.address ?? smtpUserAddress,
    mailFromName: mailFrom?.name,
    devOutboxDir: !isProduction && !hasSmtp && !mailApiKey ? path.join(stateDir, 'outbox') : undefined,
    disableOtp,
    setupToken,
    church: {
      name: raw('CHURCH_NAME'),
      address: raw('CHURCH_ADDRESS'),
      abn: raw('CHURCH_ABN'),
      website: churchWebsite,
    },
    regional: { fyStartMonth, timeZone, locale, currency },
    theme: { primary, primaryDark, accent },
    jobs: { inAppCron, clearanceDigest, errorDigest, cronSecret },
    payments: paymentsOn
      ? { secretKey: raw('PSP_SECRET_KEY') as string, webhookSecret: webhookSecret as string, apiBase: pspApiBase }
      : undefined,
    captcha:
      captchaSecret && siteKey ? { secretKey: captchaSecret, siteKey, verifyUrl: captchaVerifyUrl } : undefined,
    membershipSecretaryEmail,
    websiteSync: websiteSyncOn && websiteSyncUrl && websiteSyncSecret ? { url: websiteSyncUrl, secret: websiteSyncSecret } : undefined,
    tracker:
      trackerToken && trackerRepo
        ? {
            token: trackerToken,
            repo: trackerRepo,
            owner: trackerRepo.split('/')[0] as string,
            name: trackerRepo.split('/')[1] as string,
            apiUrl: trackerApiUrl,
          }
        : undefined,
    telemetryConnectionString,
    replicaCount,
    version: { app: raw('NEXT_PUBLIC_APP_VERSION'), gitSha: raw('NEXT_PUBLIC_GIT_SHA') },
    allowDemoSeed,
    perfQueryLogFile: perfOn && perfEnabled && perfFile ? path.resolve(options.cwd ?? process.cwd(), perfFile) : undefined,
    http: { port, host, trustProxy },
    limits: { confirmationEmailsPerClientPerHour, churchNetworks, churchNetworkFormPostsPerMinute },
    logLevel,
    logFormat,
    stateDir,
  };
  return { config, warnings };
}

function readKeyring(
  env: EnvSource,
  raw: (name: string) => string | undefined,
  problem: (variable: string, expected: string) => void,
): Keyring {
  const keys = new Map<string, Buffer>();
  const decode = (name: string): Buffer | undefined => {
    const value = raw(name);
    if (value === undefined) return undefined;
    if (!fields.key32.schema.safeParse(value).success) {
      problem(name, fields.key32.expected);
      return undefined;
    }
    return Buffer.from(value, 'base64');
  };

  const alias = decode('ENCRYPTION_KEY');
  if (raw('ENCRYPTION_KEY') === undefined) problem('ENCRYPTION_KEY', `${fields.key32.expected}; required`);
  const versioned = Object.keys(env)
    .map((name) => /^ENCRYPTION_KEY_V([1-9]\d*)$/.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .sort((a, b) => Number(a[1]) - Number(b[1]));
  for (const match of versioned) {
    const key = decode(match[0]);
    if (key) keys.set(`v${match[1]}`, key);
  }
  const explicitV1 = keys.get('v1');
  if (alias && explicitV1 && !alias.equals(explicitV1)) {
    problem('ENCRYPTION_KEY_V1', 'the same key as ENCRYPTION_KEY (key v1 never changes: lookup hashes derive from it)');
  }
  if (alias && !explicitV1) keys.set('v1', alias);

  const currentId = raw('ENCRYPTION_KEY_ID') ?? 'v1';
  if (!fields.keyId.schema.safeParse(currentId).success) {
    problem('ENCRYPTION_KEY_ID', fields.keyId.expected);
  } else if (!keys.has('v1')) {
    // Key v1 is missing or malformed and already reported; a keyring problem on top would only confuse.
  } else if (currentId !== 'v1' && raw('ENCRYPTION_KEY_V1') === undefined) {
    problem(
      'ENCRYPTION_KEY_ID',
      `v1 while key v1 exists only as ENCRYPTION_KEY; first set ENCRYPTION_KEY_V1 to the same value as ENCRYPTION_KEY`,
    );
  } else if (!keys.has(currentId) && raw(`ENCRYPTION_KEY_${currentId.toUpperCase()}`) === undefined) {
    problem('ENCRYPTION_KEY_ID', `a version that has a key: set ENCRYPTION_KEY_${currentId.toUpperCase()}`);
  }
  return { keys, currentId };
}

/** Each secret guards something else: one leaked value (the scheduler's bearer, say) must not open the others. */
function requireDistinct(
  names: string[],
  raw: (name: string) => string | undefined,
  problem: (variable: string, expected: string) => void,
): void {
  const seen = new Map<string, string>();
  for (const name of names) {
    const value = raw(name);
    if (value === undefined) continue;
    const earlier = seen.get(value);
    if (earlier) problem(name, `a value of its own, not the same as ${earlier}`);
    else seen.set(value, name);
  }
}

function stripTrailingSlash(url: string | undefined): string | undefined {
  return url?.replace(/\/+$/, '');
}

function dedupe(problems: ConfigProblem[]): ConfigProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    if (seen.has(p.variable)) return false;
    seen.add(p.variable);
    return true;
  });
}
