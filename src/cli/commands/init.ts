import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { AppError } from '../../errors.js';
import { printResult } from '../io.js';

/** A .env for a developer machine: fresh secrets, embedded database, dev outbox. */
export function devEnvFile(): string {
  const secret = () => crypto.randomBytes(32).toString('base64');
  return [
    '# Written by `eventops init` for local use. Not for production: see .env.example.',
    `AUTH_SECRET=${secret()}`,
    `ENCRYPTION_KEY=${secret()}`,
    `CRON_SECRET=${crypto.randomBytes(24).toString('hex')}`,
    'AUTH_URL=http://127.0.0.1:3000',
    'CHURCH_NAME=Grace Community Church',
    '',
  ].join('\n');
}

export function registerInitCommand(program: Command): void {
  program
    .command('init')
    .description('write a .env with freshly generated secrets in the current directory (never overwrites)')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExample:\n  $ eventops init && eventops demo')
    .action((options: { json?: boolean }) => {
      const file = path.resolve(process.cwd(), '.env');
      if (fs.existsSync(file)) {
        printResult(options, { written: false, file }, `${file} already exists; left unchanged`);
        return;
      }
      try {
        fs.writeFileSync(file, devEnvFile(), { mode: 0o600, flag: 'wx' });
      } catch (error) {
        throw new AppError('init_failed', `cannot write ${file}`, { cause: error });
      }
      printResult(options, { written: true, file }, `wrote ${file} with fresh AUTH_SECRET, ENCRYPTION_KEY and CRON_SECRET`);
    });
}
