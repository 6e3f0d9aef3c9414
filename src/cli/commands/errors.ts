import type { Command } from 'commander';
import { z } from 'zod';
import type { ErrorGroup } from '../../jobs/error-issues.js';
import { printResult, withContext } from '../io.js';
import { parseOrUsage } from '../usage.js';

const optionsSchema = z.object({ json: z.boolean().optional() });
const MESSAGE_SHOWN = 160;

export function registerErrorsCommand(program: Command): void {
  program
    .command('errors')
    .description('the errors of the last 7 days, grouped as the error digest files them, largest first (for a church without a tracker)')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      `
Example:
  $ eventops errors

Each group is one fault, however often it happened: how often, when first and last, where
(the route or job), and its newest message. The error digest (\`eventops error-issues\`) files
one tracker issue per group when a tracker is configured. Rows older than 90 days are purged.`,
    )
    .action(async (raw: unknown) => {
      const options = parseOrUsage(optionsSchema, raw, 'errors');
      await withContext(async (ctx) => {
        const { recentErrorGroups } = await import('../../jobs/error-issues.js');
        const { localMinute } = await import('../../local-time.js');
        const groups = await recentErrorGroups(ctx, ctx.clock.now());
        const minute = (date: Date) => localMinute(date, ctx.config.regional.timeZone);
        printResult(options, { errors: groups }, groups.length === 0 ? 'no errors in the last 7 days' : groups.flatMap((group) => describe(group, minute)));
      });
    });
}

function describe(group: ErrorGroup, minute: (date: Date) => string): string[] {
  const firstLine = group.message.split('\n')[0] ?? '';
  const message = firstLine.length > MESSAGE_SHOWN ? `${firstLine.slice(0, MESSAGE_SHOWN - 1)}…` : firstLine;
  return [
    `${group.count}× ${group.error_class} in ${group.source}, last ${minute(group.last_seen)}${group.count > 1 ? `, first ${minute(group.first_seen)}` : ''} (${group.fingerprint})`,
    `   ${message}`,
  ];
}
