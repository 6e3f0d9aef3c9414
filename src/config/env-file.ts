import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { ConfigProblem } from './types.js';

const require = createRequire(import.meta.url);

interface MissingEnvVarsErrorShape extends Error {
  missing: string[];
}
interface DotenvSafe {
  config(options: { path: string; example: string; allowEmptyValues?: boolean; quiet?: boolean }): unknown;
  MissingEnvVarsError: new (...args: never[]) => MissingEnvVarsErrorShape;
}

/** The package root, wherever the command was started from. */
export function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('eventops package root not found');
    dir = parent;
  }
  return dir;
}

/**
 * Loads `.env` from the working directory into process.env with dotenv-safe
 * (variables already in the environment win). Returns the always-required
 * variables that are missing, so they join the one list of problems.
 */
export function loadEnvFile(cwd: string, envFile = '.env'): ConfigProblem[] {
  const dotenvSafe = require('dotenv-safe') as DotenvSafe;
  try {
    dotenvSafe.config({
      path: path.resolve(cwd, envFile),
      example: path.join(packageRoot(), '.env.required'),
      allowEmptyValues: false,
      quiet: true,
    });
    return [];
  } catch (error) {
    if (error instanceof dotenvSafe.MissingEnvVarsError) {
      return error.missing.map((variable) => ({ variable, expected: 'a value; required in every environment' }));
    }
    throw error;
  }
}
