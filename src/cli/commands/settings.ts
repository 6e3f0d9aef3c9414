import type { Command } from 'commander';
import { getAdminSettings, parseSettingValue, requireAdminSettingKey, setAdminSetting } from '../../office/settings.js';
import { ADMIN_SETTING_KEYS } from '../../settings.js';
import { printResult, withContext } from '../io.js';

function show(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function registerSettingsCommands(program: Command): void {
  const settings = program.command('settings').description('church identity, card fee, celebrations, bank details');
  settings
    .command('get')
    .description('show every administrator setting (or one) with its value, default or "unset"')
    .argument('[key]', 'one setting key')
    .option('--json', 'print JSON')
    .addHelpText('after', `\nKeys: ${ADMIN_SETTING_KEYS.join(', ')}\n\nExample:\n  $ eventops settings get cardFee.percent --json`)
    .action(async (key: string | undefined, options: { json?: boolean }) => {
      if (key !== undefined) requireAdminSettingKey(key);
      await withContext(async (ctx) => {
        const views = await getAdminSettings(ctx, key);
        printResult(
          options,
          { settings: views },
          views.map((v) => `${v.key} = ${v.source === 'unset' ? '(unset)' : show(v.value)}${v.source === 'default' ? ' (default)' : ''}`),
        );
      });
    });
  settings
    .command('set')
    .description('set one administrator setting; the value is checked against the key’s type')
    .argument('<key>', 'setting key')
    .argument('<value>', 'new value: numbers for cardFee.*, true/false for celebrations.*, text otherwise')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      `\nKeys: ${ADMIN_SETTING_KEYS.join(', ')}\n\nExamples:\n  $ eventops settings set church.name "Grace Community Church"\n  $ eventops settings set cardFee.percent 1.75\n  $ eventops settings set celebrations.birthdays true\n\nExit 2 for an unknown key or a value of the wrong type.`,
    )
    .action(async (key: string, value: string, options: { json?: boolean }) => {
      parseSettingValue(requireAdminSettingKey(key), value); // usage errors before touching the database
      await withContext(async (ctx) => {
        const saved = await setAdminSetting(ctx, key, value);
        // Loaded here, not at the top: it brings the time-zone library, which help and the other commands do not need.
        const { celebrationsSkippedToday } = await import('../../office/celebrations-hint.js');
        const hint = await celebrationsSkippedToday(ctx, saved.key, saved.value);
        printResult(options, { setting: saved, ...(hint ? { hint } : {}) }, [`${saved.key} = ${show(saved.value)}`, ...(hint ? [hint] : [])]);
      });
    });
}
