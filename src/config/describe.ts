import type { AppConfig } from './types.js';

const HIDDEN = '•••••• (set)';

/** Query parameters whose values are settings, not credentials: shown as they are. */
const PLAIN_QUERY_KEYS = new Set([
  'sslmode',
  'sslrootcert',
  'application_name',
  'connect_timeout',
  'target_session_attrs',
  'options',
  'schema',
]);

/**
 * A URL as it may be shown: the password replaced, and every query value
 * replaced unless its key is a known setting (a receiver's `?key=` or a
 * database's `?password=` is a secret whatever its name).
 */
export function maskUrl(url: string | undefined): string | undefined {
  if (!url) return url;
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '******';
    const masked = new URLSearchParams();
    for (const [key, value] of parsed.searchParams) masked.append(key, PLAIN_QUERY_KEYS.has(key.toLowerCase()) ? value : '******');
    parsed.search = masked.toString();
    return parsed.toString();
  } catch {
    return HIDDEN;
  }
}

/** The display name MAIL_FROM gives, when it gives one (else emails show the church's name). */
const fromName = (config: AppConfig) => (config.mailFromName === undefined ? {} : { fromName: config.mailFromName });

/**
 * The resolved configuration as plain data for `config check`, with every secret
 * replaced by a marker saying only whether it is set.
 */
export function describeConfig(config: AppConfig): Record<string, unknown> {
  const set = (value: unknown) => (value ? HIDDEN : 'unset');
  return {
    environment: config.env,
    database: config.databaseUrl ? maskUrl(config.databaseUrl) : 'embedded PostgreSQL (.eventops/pg)',
    directUrl: config.directUrl ? maskUrl(config.directUrl) : 'same as database',
    migrateOnStart: config.migrateOnStart,
    authSecret: set(config.authSecret),
    authUrl: config.authUrl ?? 'unset',
    appUrl: config.appUrl ?? 'unset',
    encryption: {
      versions: [...config.keyring.keys.keys()],
      writesWith: config.keyring.currentId,
    },
    mail: config.mailApi
      ? { transport: 'mail API', url: maskUrl(config.mailApi.url), key: HIDDEN, from: config.mailFrom, ...fromName(config) }
      : config.smtp
        ? {
            transport: 'SMTP',
            host: config.smtp.host,
            port: config.smtp.port,
            secure: config.smtp.secure,
            user: config.smtp.user,
            password: HIDDEN,
            from: config.mailFrom,
            ...fromName(config),
          }
        : { transport: 'dev outbox', directory: config.devOutboxDir ?? 'none (no mail transport)' },
    disableOtp: config.disableOtp,
    setupToken: set(config.setupToken),
    church: config.church,
    regional: config.regional,
    theme: config.theme,
    jobs: { ...config.jobs, cronSecret: set(config.jobs.cronSecret) },
    cardPayments: config.payments
      ? { enabled: true, secretKey: HIDDEN, webhookSecret: HIDDEN, apiBase: maskUrl(config.payments.apiBase) ?? 'provider default' }
      : { enabled: false },
    captcha: config.captcha
      ? { enabled: true, siteKey: config.captcha.siteKey, secretKey: HIDDEN, verifyUrl: maskUrl(config.captcha.verifyUrl) }
      : { enabled: false },
    membershipSecretaryEmail: config.membershipSecretaryEmail ?? 'unset',
    websiteSync: config.websiteSync ? { url: maskUrl(config.websiteSync.url), secret: HIDDEN } : 'off',
    tracker: config.tracker
      ? { repo: config.tracker.repo, apiUrl: maskUrl(config.tracker.apiUrl), token: HIDDEN }
      : 'off',
    telemetry: set(config.telemetryConnectionString),
    replicaCount: config.replicaCount,
    version: config.version,
    allowDemoSeed: config.allowDemoSeed,
    perfQueryLogFile: config.perfQueryLogFile ?? 'off',
    http: config.http,
    limits: config.limits,
    log: { level: config.logLevel, format: config.logFormat ?? 'pretty at a terminal, else json' },
  };
}
