export type RuntimeEnv = 'production' | 'development' | 'test';

export interface Keyring {
  /** Key material by version id ("v1", "v2", …). v1 always exists. */
  keys: ReadonlyMap<string, Buffer>;
  /** Version used for new writes (ENCRYPTION_KEY_ID, default v1). */
  currentId: string;
}

export interface SmtpConfig {
  host: string;
  port: number;
  secure: boolean;
  user: string;
  password: string;
}

export interface MailApiConfig {
  key: string;
  url: string;
}

export interface ChurchIdentity {
  name?: string;
  address?: string;
  abn?: string;
  website?: string;
}

export interface Theme {
  primary: string;
  primaryDark: string;
  accent: string;
}

export interface AppConfig {
  env: RuntimeEnv;
  isProduction: boolean;
  /** Unset outside production means: start the embedded PostgreSQL. */
  databaseUrl?: string;
  directUrl?: string;
  migrateOnStart: boolean;
  authSecret: string;
  /** Trusted public base URL (AUTH_URL, else NEXTAUTH_URL). */
  authUrl?: string;
  appUrl?: string;
  keyring: Keyring;
  smtp?: SmtpConfig;
  mailApi?: MailApiConfig;
  /** The sender address (MAIL_FROM's address, else SMTP_USER). */
  mailFrom?: string;
  /** The display name MAIL_FROM was written with; the church's name is shown when it has none. */
  mailFromName?: string;
  /** No SMTP and no mail API outside production: mail goes to .eml files here. */
  devOutboxDir?: string;
  disableOtp: boolean;
  setupToken?: string;
  church: ChurchIdentity;
  regional: { fyStartMonth: number; timeZone: string; locale: string; currency: string };
  theme: Theme;
  jobs: {
    inAppCron: boolean;
    clearanceDigest: boolean;
    errorDigest: boolean;
    cronSecret?: string;
  };
  payments?: { secretKey: string; webhookSecret: string; apiBase?: string };
  captcha?: { secretKey: string; siteKey: string; verifyUrl: string };
  membershipSecretaryEmail?: string;
  websiteSync?: { url: string; secret: string };
  tracker?: { token: string; repo: string; owner: string; name: string; apiUrl: string };
  telemetryConnectionString?: string;
  replicaCount: number;
  version: { app?: string; gitSha?: string };
  allowDemoSeed: boolean;
  perfQueryLogFile?: string;
  /**
   * The proxies whose X-Forwarded-For entries are believed, as IPv4/IPv6 CIDR ranges (TRUST_PROXY=true:
   * loopback only), or false: the connecting address is the client.
   */
  http: { port: number; host: string; trustProxy: readonly string[] | false };
  limits: {
    /** Confirmation emails the public form sends for one client (clientKey) in an hour; beyond it, shown on the page only. */
    confirmationEmailsPerClientPerHour: number;
    /**
     * The church's own networks (CHURCH_NETWORKS), as `network/prefix` ranges: posts from them have the form limit
     * below instead of the spec's 10 a minute, and no per-client confirmation or unpaid-place cap (the per-mailbox
     * caps still apply). Empty: none.
     */
    churchNetworks: readonly string[];
    /** Form posts a minute one client on a church network may make (CHURCH_NETWORK_FORM_POSTS_PER_MINUTE). */
    churchNetworkFormPostsPerMinute: number;
  };
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** LOG_FORMAT; undefined: pretty when stderr is a terminal, JSON otherwise (chooseLogFormat). */
  logFormat?: 'json' | 'pretty';
  /** Directory for local state: embedded database, dev outbox. */
  stateDir: string;
}

export interface ConfigProblem {
  variable: string;
  expected: string;
}

export interface LoadedConfig {
  config: AppConfig;
  warnings: string[];
}
