import type { Command } from 'commander';
import { describeConfig } from '../../config/describe.js';
import { proxyWarnings } from '../../config/proxy.js';
import type { AppConfig } from '../../config/types.js';
import { AppError, EXIT, errorMessage } from '../../errors.js';
import { printResult } from '../io.js';

type KeysVerdict = { checked: true; values: number } | { checked: false; reason: string };

/**
 * Whether this configuration's keys open a few values the database holds (a restored dump with a
 * new .env would otherwise pass here and fail later, or quietly duplicate people on import).
 * Reads only, never migrates, never starts the embedded database. Throws EncryptionKeysMismatchError (78).
 */
async function checkKeysAgainstDatabase(config: AppConfig): Promise<KeysVerdict> {
  if (!config.databaseUrl) return { checked: false, reason: 'no DATABASE_URL (the embedded database): `eventops serve` checks them at start' };
  const { connectDb } = await import('../../db/connect.js');
  const { createFieldCipher } = await import('../../crypto/field-cipher.js');
  const { checkStoredKeys, EncryptionKeysMismatchError } = await import('../../crypto/key-check.js');
  let db: ReturnType<typeof connectDb> | undefined;
  let check: Awaited<ReturnType<typeof checkStoredKeys>>;
  try {
    db = connectDb({ url: config.databaseUrl, poolMax: 1, applicationName: 'eventops-config-check' });
    check = await checkStoredKeys(db, createFieldCipher(config.keyring));
  } catch (error) {
    return { checked: false, reason: `cannot read the database (${errorMessage(error)})` };
  } finally {
    await db?.destroy();
  }
  if (check.problems.length > 0) throw new EncryptionKeysMismatchError(check.problems);
  return { checked: true, values: check.checked };
}

function keysLine(keys: KeysVerdict): string {
  if (!keys.checked) return `  note: encryption keys not checked against the database: ${keys.reason}`;
  return keys.values === 0
    ? 'The database holds no encrypted values yet.'
    : `The encryption keys open what the database holds (${keys.values} stored value${keys.values === 1 ? '' : 's'} read).`;
}

export function registerConfigCommands(program: Command): void {
  const config = program.command('config').description('inspect the configuration');
  config
    .command('check')
    .description(
      'validate every variable and print the resolved configuration with secrets masked; with DATABASE_URL, check that the encryption keys open what the database holds (reads a few rows)',
    )
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExample:\n  $ eventops config check --json\n\nExit 0 when valid, 78 listing every problem when not, or naming the encryption key that does not open what the database holds.',
    )
    .action(async (options: { json?: boolean }) => {
      const { loadRuntimeConfig } = await import('../runtime.js');
      const { captchaMissingInProduction, NO_CAPTCHA_WARNING } = await import('../../payments/captcha.js');
      const { config: resolved, warnings: configWarnings = [] } = loadRuntimeConfig();
      const described = describeConfig(resolved);
      const warnings = [
        ...configWarnings,
        ...(captchaMissingInProduction(resolved) ? [NO_CAPTCHA_WARNING] : []),
        ...proxyWarnings(resolved),
      ];
      const keys = await checkKeysAgainstDatabase(resolved);
      printResult(options, { valid: true, warnings, keys, config: described }, [
        'Configuration is valid.',
        ...warnings.map((warning) => `  warning: ${warning}`),
        keysLine(keys),
        ...Object.entries(described).map(([key, value]) => `  ${key}: ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`),
      ]);
    });
  config
    .command('check-provider')
    .description("ask the card provider whether PSP_SECRET_KEY works and a webhook endpoint delivers here, enabled, on the right API version, with every event eventops acts on")
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExample:\n  $ eventops config check-provider\n\nReads only: changes nothing at the provider. Exit 0 when the set-up is right, 1 listing what to fix, 78 without card payments configured.',
    )
    .action(async (options: { json?: boolean }) => {
      const { loadRuntimeConfig } = await import('../runtime.js');
      const { config: resolved } = loadRuntimeConfig();
      if (!resolved.payments) {
        throw new AppError('payments_not_configured', 'card payments are not configured, so there is no provider to ask', {
          exitCode: EXIT.config,
          suggestion: 'set PSP_SECRET_KEY and PSP_WEBHOOK_SECRET',
        });
      }
      const { checkProviderSetup } = await import('../../payments/provider-setup.js');
      const report = await checkProviderSetup(resolved);
      const endpoint = report.endpoint
        ? [`Webhook endpoint ${report.endpoint.id}: ${report.endpoint.status}, API version ${report.endpoint.apiVersion ?? "the account's default"}`]
        : [];
      printResult(options, report, [
        `Card provider (${report.mode} mode), webhook address ${report.webhookUrl}`,
        ...endpoint,
        ...(report.ok ? ['The provider set-up is right.'] : report.problems.map((problem) => `  problem: ${problem.problem}\n    fix: ${problem.suggestion}`)),
      ]);
      if (!report.ok) process.exitCode = EXIT.failure;
    });
}
