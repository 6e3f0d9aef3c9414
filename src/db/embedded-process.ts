import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { isRoot } from './embedded-runtime.js';

/** Who the server processes run as: the "postgres" account when we are root, else ourselves (undefined). */
export interface ServerAccount {
  uid: number;
  gid: number;
}

/**
 * The only variables initdb and postgres are given. Anything else in our
 * environment (.env's ENCRYPTION_KEY, AUTH_SECRET, CRON_SECRET, a DATABASE_URL)
 * would be readable by the "postgres" account and, with the superuser
 * password, through pg_read_binary_file('/proc/<pid>/environ').
 */
const PASSED_THROUGH = [
  'PATH',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'LC_COLLATE',
  'LC_NUMERIC',
  'LC_MONETARY',
  'LC_TIME',
  'TZ',
  // A faked clock (`faketime -f +400d npm test`) must reach the database as well, or now() there disagrees with ours.
  'LD_PRELOAD',
  'FAKETIME',
  'FAKETIME_DONT_RESET',
];

/** The environment of the server processes: the locale, the time zone and PATH from ours, nothing else. */
export function serverEnvironment(dataDir: string, locale: string, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const scrubbed: NodeJS.ProcessEnv = {};
  for (const name of PASSED_THROUGH) if (env[name] !== undefined) scrubbed[name] = env[name];
  scrubbed.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  // We read initdb's and the server's messages, so they are asked for in a language we know.
  scrubbed.LC_MESSAGES = locale;
  scrubbed.PGDATA = dataDir;
  return scrubbed;
}

/** A locale for the server's messages that every machine has, preferring English ones. */
export function messagesLocale(): string {
  try {
    const available = new Set(execFileSync('locale', ['-a'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split(/\r?\n/).map((l) => l.trim()));
    for (const locale of ['en_US.UTF-8', 'C.UTF-8', 'en_US.utf8']) if (available.has(locale)) return locale;
  } catch {
    // no `locale` program: the POSIX locale below
  }
  return 'C';
}

function idOf(flag: '-u' | '-g', name: string): number {
  return Number(execFileSync('id', [flag, name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
}

/** As root, the "postgres" account (made when missing and `create`); PostgreSQL refuses to run as root. */
export function serverAccount(create: boolean): ServerAccount | undefined {
  if (!isRoot()) return undefined;
  try {
    return { uid: idOf('-u', 'postgres'), gid: idOf('-g', 'postgres') };
  } catch {
    if (!create) throw new Error('PostgreSQL cannot run as root and there is no "postgres" user to run it as');
  }
  try {
    execFileSync('groupadd', ['postgres'], { stdio: 'ignore' });
    execFileSync('useradd', ['-g', 'postgres', 'postgres'], { stdio: 'ignore' });
    return { uid: idOf('-u', 'postgres'), gid: idOf('-g', 'postgres') };
  } catch (error) {
    throw new Error('PostgreSQL cannot run as root, and creating a "postgres" user to run it as failed', { cause: error });
  }
}

/** Runs a server program to its end, its output passed to `onLog`; rejects with its error output when it fails. */
function run(program: string, args: string[], options: { env: NodeJS.ProcessEnv; account?: ServerAccount; onLog(line: string): void }): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { env: options.env, ...options.account, stdio: ['ignore', 'pipe', 'pipe'] });
    let errors = '';
    child.stdout.on('data', (chunk: Buffer) => options.onLog(chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => {
      errors += chunk.toString('utf8');
      options.onLog(chunk.toString('utf8'));
    });
    child.on('error', reject);
    child.on('close', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`${path.basename(program)} failed (code ${String(code)}, signal ${String(signal)}): ${errors.trim()}`)),
    );
  });
}

/**
 * Creates the cluster in `dataDir` with `user` as its superuser. initdb reads
 * the password from a file, which is kept in a fresh 0700 directory beside the
 * data directory (never the shared temporary directory, where anyone watching
 * could read it) and removed once initdb is done.
 */
export async function initialiseCluster(options: {
  initdb: string;
  dataDir: string;
  user: string;
  password: string;
  account?: ServerAccount;
  locale: string;
  onLog(line: string): void;
}): Promise<void> {
  const { dataDir, account } = options;
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const secretDir = fs.mkdtempSync(path.join(path.dirname(dataDir), '.initdb-'));
  try {
    const passwordFile = path.join(secretDir, 'password');
    fs.writeFileSync(passwordFile, `${options.password}\n`, { mode: 0o600, flag: 'wx' });
    if (account) {
      // initdb runs as "postgres": it alone (and root) may read the file, and it owns the data directory.
      for (const owned of [secretDir, passwordFile, dataDir]) fs.chownSync(owned, account.uid, account.gid);
    }
    await run(
      options.initdb,
      [`--pgdata=${dataDir}`, '--auth=password', `--username=${options.user}`, `--pwfile=${passwordFile}`, `--lc-messages=${options.locale}`],
      { env: serverEnvironment(dataDir, options.locale), account, onLog: options.onLog },
    );
  } finally {
    fs.rmSync(secretDir, { recursive: true, force: true });
  }
}

export interface Postmaster {
  pid: number;
  /** Asks the server to stop (fast shutdown) and waits for it to exit; at once when it already has. */
  stop(): Promise<void>;
}

/** Starts `postgres` on `dataDir` with a scrubbed environment and resolves once it accepts connections. */
export async function startPostmaster(options: {
  postgres: string;
  dataDir: string;
  port: number;
  flags: string[];
  account?: ServerAccount;
  locale: string;
  onLog(line: string): void;
}): Promise<Postmaster> {
  const child: ChildProcess = spawn(options.postgres, ['-D', options.dataDir, '-p', String(options.port), ...options.flags], {
    env: serverEnvironment(options.dataDir, options.locale),
    ...options.account,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stdout?.on('data', (chunk: Buffer) => options.onLog(chunk.toString('utf8')));
  await new Promise<void>((resolve, reject) => {
    let output = '';
    let ready = false;
    child.stderr?.on('data', (chunk: Buffer) => {
      const message = chunk.toString('utf8');
      options.onLog(message);
      if (ready) return;
      output += message;
      ready = output.includes('database system is ready to accept connections');
      if (ready) resolve();
    });
    child.once('error', reject);
    void exited.then(() => reject(new Error(`postgres exited before it was ready: ${output.trim()}`)));
  });
  const ended = () => child.exitCode !== null || child.signalCode !== null;
  return {
    pid: child.pid as number,
    async stop() {
      if (!ended()) child.kill('SIGINT');
      await exited;
    },
  };
}
