import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The compiled bench runs from bench/.build/bench/…: find the repository by its package.json, not by depth. */
function findRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest) && (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: string }).name === 'eventops') {
      return dir;
    }
    if (path.dirname(dir) === dir) throw new Error(`no eventops package.json above ${start}`);
  }
}

const HERE = path.dirname(fileURLToPath(import.meta.url));

export const ROOT = findRoot(HERE);
/** The compiled bench directory (bench/.build/bench). */
export const BENCH_BUILD = path.resolve(HERE, '..');
/** bench/.build: laid out like an installed package, bin/eventops beside dist/cli (the bench's bundle of its compilation of src/). */
const BUILD_ROOT = path.resolve(BENCH_BUILD, '..');
/**
 * The command under test: a copy of bin/eventops in bench/.build/bin, so it is launched exactly as
 * installed (the same launcher, with its compile cache) but runs the bench's own bundle: a concurrent
 * `npm run build` rewriting dist/ cannot change the code halfway through a run.
 * BENCH_BIN=bin/eventops measures the installed build instead.
 */
export const BIN = process.env.BENCH_BIN ? path.resolve(process.env.BENCH_BIN) : path.join(BUILD_ROOT, 'bin', 'eventops');

/** Copies the launcher beside the bench's bundle (bench/.build/dist/cli, made by scripts/bundle-cli.mjs). */
export function installLauncher(): void {
  if (process.env.BENCH_BIN) return;
  fs.mkdirSync(path.dirname(BIN), { recursive: true });
  fs.copyFileSync(path.join(ROOT, 'bin', 'eventops'), BIN);
}
export const RESULTS_FILE = path.join(ROOT, 'bench/results.json');

/** A compiled reference script, e.g. reference('sweep-pg') → bench/.build/bench/references/sweep-pg.js. */
export function reference(name: string): string {
  return path.join(BENCH_BUILD, 'references', `${name}.js`);
}

/** The preload that reports a process's peak RSS (see rss-probe.ts). */
export const RSS_PROBE_URL = pathToFileURL(path.join(BENCH_BUILD, 'support', 'rss-probe.js')).href;
