import type { Command } from 'commander';
import { describeConfig } from '../../config/describe.js';
import { AppError, EXIT } from '../../errors.js';
import { printResult } from '../io.js';

export function registerConfigCommands(program: Command): void {
  const config = program.command('config').description('inspect the configuration');
  config
    .command('check')
    .description('validate every variable and print the resolved configuration with secrets masked; connects to nothing')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExample:\n  $ eventops config check --json\n\nExit 0 when valid, 78 listing every problem when not.')
    .action(async (options: { json?: boolean }) => {
      const { loadRuntimeConfig } = await import('../runtime.js');
      const { captchaMissingInProduction, NO_CAPTCHA_WARNING } = await import('../../payments/captcha.js');
      const { config: resolved, warnings: configWarnings = [] } = loadRuntimeConfig();
      const described = describeConfig(resolved);
      const warnings = [...configWarnings, ...(captchaMissingInProduction(resolved) ? [NO_CAPTCHA_WARNING] : [])];
      printResult(options, { valid: true, warnings, config: described }, [
        'Configuration is valid.',
        ...warnings.map((warning) => `  warning: ${warning}`),
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
