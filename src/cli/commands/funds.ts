import type { Command } from 'commander';
import { z } from 'zod';
import { printResult, withContext } from '../io.js';
import { parseOrUsage } from '../usage.js';

const optionsSchema = z.object({
  event: z.string().trim().min(1, { error: 'must not be empty' }).optional(),
  json: z.boolean().optional(),
});

/** Funds that help with the cost (scholarships): what each gave, per event. */
export function registerFundsCommands(program: Command): void {
  const funds = program.command('funds').description('help with the cost from named funds (scholarships): what each fund gave, per event');
  funds
    .command('report')
    .description('credits per fund and per event, net of reversals')
    .option('--event <slug>', 'only this event')
    .option('--json', 'print JSON (amounts in minor units)')
    .addHelpText(
      'after',
      `
Examples:
  $ eventops funds report
  $ eventops funds report --event family-camp --json

Credits are recorded with \`eventops registrations credit\`; a reversal is taken off its fund.`,
    )
    .action(async (raw: Record<string, unknown>) => {
      const options = parseOrUsage(optionsSchema, raw, 'funds report');
      await withContext(async (ctx) => {
        const { fundsReport } = await import('../../office/funds/report.js');
        const { moneyFormatter } = await import('../../office/registrations/money.js');
        const money = moneyFormatter(ctx.config.regional);
        const report = await fundsReport(ctx, options.event);
        printResult(
          options,
          { funds: report },
          report.length === 0
            ? 'no help with the cost recorded'
            : report.flatMap((fund) => [
                `${fund.fund}: ${money(fund.netMinor)}`,
                ...fund.events.map(
                  (line) =>
                    `  ${line.eventSlug} (${line.eventTitle}): ${money(line.netMinor)} to ${line.registrations} ${line.registrations === 1 ? 'registration' : 'registrations'}` +
                    (line.reversedMinor > 0 ? ` (${money(line.creditedMinor)} credited, ${money(line.reversedMinor)} reversed)` : ''),
                ),
              ]),
        );
      });
    });
}
