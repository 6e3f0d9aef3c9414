import { ConfigError, envFilePermissionWarning, loadConfig, loadEnvFile, quotedValuesWithHash, type AppConfig } from '../config/index.js';
import { systemClock, type Clock } from '../clock.js';
import { connectDb, type Db } from '../db/connect.js';
import { startDevDatabase } from '../db/embedded.js';
import { migrateLatest } from '../db/migrate.js';
import { createFieldCipher } from '../crypto/field-cipher.js';
import { chooseLogFormat, createLogger, type Logger } from '../logger.js';
import type { AppContext } from '../context.js';
import type { Mailer } from '../mail/types.js';
import { AppError } from '../errors.js';
import { stopEmbeddedOnSignal, type SignalGuard } from './embedded-signals.js';

export interface LoadedRuntimeConfig {
  config: AppConfig;
  logger: Logger;
  /** What the configuration switched off or deprecated, already logged. */
  warnings?: string[];
}

/** Reads .env and the environment, validates everything, and logs the warnings (a .env others may read among them). Throws ConfigError. */
export function loadRuntimeConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): LoadedRuntimeConfig {
  const missing = loadEnvFile(cwd);
  try {
    const { config, warnings: configWarnings } = loadConfig(env, { cwd, quotedWithHash: quotedValuesWithHash(cwd) });
    if (missing.length > 0) throw new ConfigError(missing);
    const envFileWarning = envFilePermissionWarning(cwd);
    const warnings = envFileWarning ? [...configWarnings, envFileWarning] : configWarnings;
    const terminal = Boolean(process.stderr.isTTY);
    const logger = createLogger({
      level: config.logLevel,
      format: chooseLogFormat(config.logFormat, terminal),
      colour: terminal && process.env.NO_COLOR === undefined,
    });
    for (const warning of warnings) logger.warn(warning);
    return { config, logger, warnings };
  } catch (error) {
    if (error instanceof ConfigError && missing.length > 0) {
      // The file's own problems (a value cut at "#") come first: they explain what the rules then saw.
      const named = new Set(missing.map((p) => p.variable));
      throw new ConfigError([...missing, ...error.problems.filter((p) => !named.has(p.variable))]);
    }
    throw error;
  }
}

export interface OpenContext extends AppContext {
  close(): Promise<void>;
  /**
   * The command stops gracefully on SIGINT or SIGTERM itself and then closes
   * the context (serve). Until it says so, a signal stops an embedded
   * PostgreSQL this process started and exits. Returns the function that gives
   * the signals back, for a command whose handler goes away before the context
   * closes (a job's): from then on a signal stops the server and exits again.
   */
  takeOverSignals(): () => void;
}

/**
 * Opens the database (the embedded server when DATABASE_URL is unset outside
 * production), migrates when MIGRATE_ON_START allows, and builds the context.
 */
export async function openContext(
  loaded: LoadedRuntimeConfig,
  options: { clock?: Clock; migrate?: boolean; poolMax?: number } = {},
): Promise<OpenContext> {
  const { config, logger } = loaded;
  let stopEmbedded: (() => Promise<void>) | undefined;
  let signals: SignalGuard | undefined;
  let url = config.databaseUrl;
  if (!url) {
    if (config.isProduction) throw new AppError('config_invalid', 'DATABASE_URL is required in production', { exitCode: 78 });
    const dev = await startDevDatabase(config.stateDir, logger);
    url = dev.url;
    stopEmbedded = dev.stop;
    if (dev.startedHere) signals = stopEmbeddedOnSignal(dev.stop, logger);
  }
  const db: Db = connectDb({ url, poolMax: options.poolMax, queryLogFile: config.perfQueryLogFile });
  try {
    if (options.migrate ?? config.migrateOnStart) {
      const migrationDb = config.directUrl && config.directUrl !== url ? connectDb({ url: config.directUrl, poolMax: 1 }) : db;
      try {
        const applied = await migrateLatest(migrationDb);
        if (applied.length > 0) logger.info({ applied }, 'database migrated');
      } finally {
        if (migrationDb !== db) await migrationDb.destroy();
      }
    }
  } catch (error) {
    await db.destroy();
    await stopEmbedded?.();
    signals?.remove();
    if (error instanceof AppError && error.code === 'database_tls_file') throw error; // already says what to fix
    throw new AppError('database_unavailable', `cannot prepare the database: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
      suggestion: 'check DATABASE_URL and that the server is running',
    });
  }
  let mailer: Promise<Mailer> | undefined;
  const clock = options.clock ?? systemClock;
  return {
    config,
    db,
    clock,
    logger,
    cipher: createFieldCipher(config.keyring),
    mailer: () => {
      mailer ??= import('../mail/create.js').then((m) => m.createMailer(config, logger, { clock }));
      return mailer;
    },
    async close() {
      if (mailer) await (await mailer).close();
      await db.destroy();
      await stopEmbedded?.();
      signals?.remove();
    },
    takeOverSignals() {
      signals?.takeOver();
      return () => signals?.giveBack();
    },
  };
}
