import fs from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../config/env-file.js';

/** Build version: NEXT_PUBLIC_APP_VERSION (+ NEXT_PUBLIC_GIT_SHA) when set, else the package version. */
export function readVersion(env: NodeJS.ProcessEnv): string {
  const app = env.NEXT_PUBLIC_APP_VERSION?.trim();
  const sha = env.NEXT_PUBLIC_GIT_SHA?.trim();
  const base = app || packageVersion();
  return sha ? `${base} (${sha})` : base;
}

export function packageVersion(): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}
