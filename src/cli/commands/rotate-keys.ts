import type { Command } from 'commander';
import { z } from 'zod';
import { planRotation, rotateKeys, type RotationPlan, type RotationResult } from '../../crypto/rotate.js';
import { EXIT, UsageError } from '../../errors.js';
import { isInteractive, printResult, withContext } from '../io.js';
import { createProgress } from '../progress.js';

const optionsSchema = z.object({
  apply: z.boolean().default(false),
  confirm: z.boolean().default(false),
  batchSize: z.coerce.number().int().min(1).max(10_000).default(500),
  json: z.boolean().default(false),
});

type RawOptions = { apply?: boolean; confirm?: boolean; batchSize?: string; json?: boolean };

const HELP = `
Rotation order (no process may write with a key another process cannot read yet):
  1. everywhere: set ENCRYPTION_KEY_V1 to the same value as ENCRYPTION_KEY and add
     ENCRYPTION_KEY_V2 with the new key, keeping ENCRYPTION_KEY_ID at v1; restart every
     process, eventops serve included, so all of them can read v2
  2. then set ENCRYPTION_KEY_ID=v2 everywhere and restart every process again
     (new values use v2; values under v1 stay readable)
  3. run this command: first without flags to see the plan, then with --apply --confirm
Keep key v1 permanently: the email and mobile lookup hashes derive from it.
A key other than v1 may be removed once a dry run shows no values under it.

Each batch is written in one statement, so the run is safe to interrupt: rerun it
and it continues with what is left. A second run finds nothing to do.

Examples:
  $ eventops rotate-keys                                  dry run: what would be re-encrypted
  $ eventops rotate-keys --apply --confirm --batch-size 200
  $ eventops rotate-keys --json

Exit codes: 0 ok (after --apply: nothing is left under another key), 1 failure (a value
no key in the keyring can decrypt, the dry run included, or values still under another
key after --apply: run again before removing any key), 2 --apply without --confirm,
78 configuration.`;

const KEEP_V1 = 'keep v1: the lookup hashes derive from it';

function versionList(byVersion: Record<string, number>): string {
  return Object.entries(byVersion)
    .map(([version, count]) => `${version}: ${count}`)
    .join(', ');
}

function planLines(plan: RotationPlan): string[] {
  if (plan.total === 0) {
    return [
      `Every encrypted value is already under key ${plan.targetVersion}; nothing to re-encrypt.`,
      `No value needs a key other than ${plan.targetVersion}: an older key may be removed everywhere (${KEEP_V1}).`,
    ];
  }
  const width = Math.max(...plan.columns.map((c) => `${c.table}.${c.column}`.length));
  return [
    `Dry run: ${plan.total} values would be re-encrypted to key ${plan.targetVersion} (nothing changed).`,
    ...plan.columns.map((c) => {
      const from = Object.entries(c.byVersion).map(([version, count]) => `${version}: ${count}`);
      return `  ${`${c.table}.${c.column}`.padEnd(width)}  ${String(c.pending).padStart(6)}${from.length ? `  (${from.join(', ')})` : ''}`;
    }),
    ...(plan.missingKeys.length > 0
      ? [`Values under ${plan.missingKeys.join(', ')} cannot be decrypted: set ${plan.missingKeys.map((v) => `ENCRYPTION_KEY_${v.toUpperCase()}`).join(', ')} first.`]
      : []),
    'Run `eventops rotate-keys --apply --confirm` to re-encrypt them. Remove no key until a dry run shows nothing left.',
  ];
}

function resultLines(result: RotationResult): string[] {
  return [
    `Re-encrypted ${result.rotated} values to key ${result.targetVersion}.`,
    ...result.columns.filter((c) => c.rotated > 0 || c.skipped > 0).map((c) => `  ${c.table}.${c.column}: ${c.rotated}`),
    ...(result.skipped > 0 ? [`${result.skipped} values changed while rotating and were left as they are: run again to rotate them.`] : []),
    result.remaining === 0
      ? `Nothing is left under another key: an older key may be removed everywhere (${KEEP_V1}).`
      : `${result.remaining} values are still under another key (${versionList(result.remainingByVersion)}): keep every key, restart any process not yet writing with ${result.targetVersion}, and run again.`,
  ];
}

export function registerRotateKeysCommand(program: Command): void {
  program
    .command('rotate-keys')
    .description('re-encrypt every encrypted value to the key named by ENCRYPTION_KEY_ID (dry run unless --apply --confirm)')
    .option('--apply', 're-encrypt (needs --confirm)')
    .option('--confirm', 'confirm --apply')
    .option('--batch-size <n>', 'rows per batch (1-10000)', '500')
    .option('--json', 'print JSON (progress as JSON lines on stderr)')
    .addHelpText('after', HELP)
    .action(async (raw: RawOptions) => {
      const parsed = optionsSchema.safeParse(raw);
      if (!parsed.success) throw new UsageError('--batch-size must be a whole number from 1 to 10000');
      const options = parsed.data;
      if (options.apply && !options.confirm) {
        throw new UsageError('--apply rewrites every encrypted value: add --confirm to go ahead', 'eventops rotate-keys --apply --confirm');
      }
      await withContext(async (ctx) => {
        if (!options.apply) {
          const plan = await planRotation(ctx);
          printResult(options, { applied: false, ...plan }, planLines(plan));
          // Values no key here can decrypt: a script checking the dry run must not read it as ready to apply.
          if (plan.missingKeys.length > 0) process.exitCode = EXIT.failure;
          return;
        }
        const progress = await createProgress({ interactive: isInteractive(), json: options.json, label: 'rotate-keys' });
        progress.update(`re-encrypting to key ${ctx.cipher.currentVersion}`);
        let result: RotationResult;
        try {
          result = await rotateKeys(ctx, {
            batchSize: options.batchSize,
            onProgress: (p) => progress.update(`${p.table}.${p.column}`, { done: p.rotated, total: p.pending }),
          });
        } catch (error) {
          progress.fail('stopped; batches already written stay re-encrypted and a rerun continues');
          throw error;
        }
        progress.succeed(`${result.rotated} values now under key ${result.targetVersion}`);
        printResult(options, { applied: true, ...result }, resultLines(result));
        if (result.remaining > 0) process.exitCode = EXIT.failure;
      });
    });
}
