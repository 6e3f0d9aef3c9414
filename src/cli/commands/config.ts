import type { Command } from 'commander';
import { describeConfig } from '../../config/describe.js';
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
}
