import type { AppConfig } from './types.js';

const HIDDEN = '•••••• (set)';

function maskUrlPassword(url: string | undefined): string | undefined {
  if (!url) return url;
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '******';
    return parsed.toString();
  } catch {
    return HIDDEN;
  }
}

/**
 * The resolved configuration as plain data for `config check`, with every secret
 * replaced by a marker saying only whether it is set.
 */
export function describeConfig(config: AppConfig): Record<string, unknown> {
  const set = (value: unknown) => (value ? HIDDEN : 'unset');
  return {
    environment: config.env,
    database: config.databaseUrl ? maskUrlPassword(config.databaseUrl) : 'embedded PostgreSQL (.eventops/pg)',
    directUrl: config.directUrl ? maskUrlPassword(config.directUrl) : 'same as database',
    migrateOnStart: config.migrateOnStart,
    authSecret: set(config.authSecret),
    authUrl: config.authUrl ?? 'unset',
    appUrl: config.appUrl ?? 'unset',
    encryption: {
      versions: [...config.keyring.keys.keys()],
      writesWith: config.keyring.currentId,
    },
    mail: config.mailApi
      ? { transport: 'mail API', url: config.mailApi.url, key: HIDDEN, from: config.mailFrom }
      : config.smtp
        ? {
            transport: 'SMTP',
            host: config.smtp.host,
            port: config.smtp.port,
            secure: config.smtp.secure,
            user: config.smtp.user,
            password: HIDDEN,
            from: config.mailFrom,
          }
        : { transport: 'dev outbox', directory: config.devOutboxDir ?? 'none (no mail transport)' },
    disableOtp: config.disableOtp,
    setupToken: set(config.setupToken),
    church: config.church,
    regional: config.regional,
    theme: config.theme,
    jobs: { ...config.jobs, cronSecret: set(config.jobs.cronSecret) },
    cardPayments: config.payments
      ? { enabled: true, secretKey: HIDDEN, webhookSecret: HIDDEN, apiBase: config.payments.apiBase ?? 'provider default' }
      : { enabled: false },
    captcha: config.captcha
      ? { enabled: true, siteKey: config.captcha.siteKey, secretKey: HIDDEN, verifyUrl: config.captcha.verifyUrl }
      : { enabled: false },
    membershipSecretaryEmail: config.membershipSecretaryEmail ?? 'unset',
    websiteSync: config.websiteSync ? { url: config.websiteSync.url, secret: HIDDEN } : 'off',
    tracker: config.tracker
      ? { repo: config.tracker.repo, apiUrl: config.tracker.apiUrl, token: HIDDEN }
      : 'off',
    telemetry: set(config.telemetryConnectionString),
    replicaCount: config.replicaCount,
    version: config.version,
    allowDemoSeed: config.allowDemoSeed,
    perfQueryLogFile: config.perfQueryLogFile ?? 'off',
    http: config.http,
  };
}
