import type { Command } from 'commander';
import { z } from 'zod';
import { UsageError } from '../../../errors.js';
import { printResult, withContext } from '../../io.js';
import { parseOrUsage } from '../../usage.js';
import { table } from './shared.js';

const optionsSchema = z.object({
  event: z.string({ error: 'is required, e.g. --event family-camp' }).trim().min(1, { error: 'must not be empty' }),
  overdue: z.boolean().optional(),
  out: z.string().trim().min(1, { error: 'must not be empty' }).optional(),
  json: z.boolean().optional(),
});

export function registerBalancesCommand(registrations: Command): void {
  registrations
    .command('balances')
    .description("money owed for an event: each registration's total, paid, help credited, balance, due date and days overdue")
    .requiredOption('--event <slug>', 'the event')
    .option('--overdue', 'only registrations owing past their due date')
    .option('--out <file>', 'write CSV to this file (mode 0600) instead of a table')
    .option('--json', 'print JSON (amounts in minor units)')
    .addHelpText(
      'after',
      `
Examples:
  $ eventops registrations balances --event family-camp
  $ eventops registrations balances --event family-camp --overdue --out owing.csv

Lists PENDING and PAID registrations that have something to pay. Due: the end of the unpaid
hold where one applies (the places are released then); for a registration paying a deposit or
instalments, its next unmet due date (the end of that day) and what it asks; else the event's start. Overdue:
whole days past that while something is still owed.`,
    )
    .action(async (raw: Record<string, unknown>) => {
      const options = parseOrUsage(optionsSchema, raw, 'registrations balances');
      if (options.out !== undefined && options.json) throw new UsageError('--out writes CSV and --json prints JSON: choose one');
      await withContext(async (ctx) => {
        const { listBalances, balancesCsv } = await import('../../../office/registrations/balances.js');
        const { moneyFormatter, currencyDigits } = await import('../../../office/registrations/money.js');
        const { plainAmount, writePrivateFile } = await import('../../../office/registrations/export.js');
        const { localMinute, localDay } = await import('../../../local-time.js');
        const rows = await listBalances(ctx, options.event, { overdue: options.overdue });
        if (options.out !== undefined) {
          const digits = currencyDigits(ctx.config.regional.currency);
          await writePrivateFile(options.out, balancesCsv(rows, (minor) => plainAmount(minor, digits), (date) => localMinute(date, ctx.config.regional.timeZone)));
          printResult(options, {}, `wrote ${rows.length} ${rows.length === 1 ? 'registration' : 'registrations'} to ${options.out} (mode 0600)`);
          return;
        }
        const money = moneyFormatter(ctx.config.regional);
        const owed = rows.reduce((sum, row) => sum + row.balanceMinor, 0);
        printResult(
          options,
          { balances: rows, owedMinor: owed },
          rows.length === 0
            ? options.overdue
              ? 'nothing is overdue'
              : 'no registration has anything to pay'
            : [
                ...table(
                  ['REFERENCE', 'CONTACT', 'STATUS', 'TOTAL', 'PAID', 'CREDITED', 'BALANCE', 'DUE', 'OVERDUE'],
                  rows.map((row) => [
                    row.reference,
                    row.contactName,
                    row.helpOpen ? `${row.status} (help asked)` : row.status,
                    money(row.totalMinor),
                    money(row.paidMinor),
                    money(row.creditedMinor),
                    money(row.balanceMinor),
                    row.nextDueOn && row.nextDueMinor !== null
                      ? `${row.nextDueOn} (${money(row.nextDueMinor)} due)`
                      : row.dueAt ? `${localDay(row.dueAt, ctx.config.regional.timeZone)}${row.dueBecause === 'unpaid_hold' ? ' (hold ends)' : ' (event starts)'}` : '-',
                    row.overdueDays === null ? '-' : `${row.overdueDays} ${row.overdueDays === 1 ? 'day' : 'days'}`,
                  ]),
                ),
                '',
                `owed in all: ${money(owed)}`,
              ],
        );
      });
    });
}
