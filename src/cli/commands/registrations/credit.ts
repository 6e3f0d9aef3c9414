import type { Command } from 'commander';
import { z } from 'zod';
import { UsageError } from '../../../errors.js';
import { printResult, withContext } from '../../io.js';
import { parseOrUsage } from '../../usage.js';
import { noteSchema, operatingSystemUser, REGISTRATION_ARGUMENT } from './shared.js';

const optionsSchema = z.object({
  amount: z.string().optional(),
  fund: z.string().trim().min(1, { error: 'must not be empty' }).max(200, { error: 'at most 200 characters' }).optional(),
  reverse: z
    .string()
    .regex(/^#?\d{1,15}$/, { error: 'must be the number of a credit, as `registrations show` lists it (e.g. 12)' })
    .transform((value) => Number(value.replace('#', '')))
    .optional(),
  note: noteSchema,
  again: z.boolean().optional(),
  json: z.boolean().optional(),
});

export function registerCreditCommand(registrations: Command): void {
  registrations
    .command('credit')
    .description('record help with the cost from a named fund (a scholarship): it lowers the balance, is not a payment; or reverse one with --reverse')
    .argument('<id-or-reference>', REGISTRATION_ARGUMENT)
    .option('--amount <amount>', 'the help in APP_CURRENCY, as a plain number: 50 or 50.00; at most the balance')
    .option('--fund <name>', 'the fund it comes from, e.g. "Camp scholarships" (the funds report sums by this name)')
    .option('--reverse <credit>', 'take back credit number <credit> (as `registrations show` lists it) with a reversal row')
    .option('--note <text>', 'kept with the credit and in the history')
    .option('--again', 'record it even though the same fund, amount and note was credited to this registration in the last 24 hours')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ eventops registrations credit 3F2A9C1B --amount 50 --fund "Camp scholarships" --note "approved by the pastor"
  $ eventops registrations credit 3F2A9C1B --reverse 12 --note "family paid after all"

Help is never more than the balance, is only for a PENDING registration, and is never
counted as money received (reconcile does not see it). Help that takes the balance to 0
makes the registration PAID. A reversal is recorded beside the credit (nothing is deleted);
a PAID registration that owes again goes back to PENDING.
Exit 1 when nothing was recorded, 2 for a malformed amount or missing option.`,
    )
    .action(async (given: string, raw: Record<string, unknown>) => {
      const options = parseOrUsage(optionsSchema, raw, 'registrations credit');
      if (options.reverse !== undefined && (options.amount !== undefined || options.fund !== undefined || options.again)) {
        throw new UsageError('--reverse takes back a whole credit: leave out --amount, --fund and --again', 'see `eventops registrations credit --help`');
      }
      if (options.reverse === undefined && (options.amount === undefined || options.fund === undefined)) {
        throw new UsageError('--amount and --fund are required to record help with the cost (or --reverse to take one back)', 'e.g. --amount 50 --fund "Camp scholarships"');
      }
      await withContext(async (ctx) => {
        const { parseAmount, moneyFormatter } = await import('../../../office/registrations/money.js');
        const { creditRegistration, reverseCredit } = await import('../../../office/registrations/credit.js');
        const money = moneyFormatter(ctx.config.regional);
        if (options.reverse !== undefined) {
          const result = await reverseCredit(ctx, { registration: given, creditId: options.reverse, note: options.note, actor: operatingSystemUser() });
          printResult(
            options,
            { reversal: result },
            `reversed credit #${options.reverse} (${money(result.reversedMinor)} from ${result.fund}) of ${result.reference}; balance ${money(result.balanceMinor)} (${result.status})`,
          );
          return;
        }
        const amountMinor = parseAmount(options.amount as string, ctx.config.regional);
        const result = await creditRegistration(
          ctx,
          { registration: given, amountMinor, fund: options.fund as string, note: options.note, again: options.again, actor: operatingSystemUser() },
          money,
        );
        printResult(
          options,
          { credit: result },
          result.status === 'PAID'
            ? `credited ${money(result.creditedMinor)} from ${result.fund} to ${result.reference} (credit #${result.creditId}); nothing is owed: it is PAID${result.receiptQueued ? ' and the receipt is queued' : ''}`
            : `credited ${money(result.creditedMinor)} from ${result.fund} to ${result.reference} (credit #${result.creditId}); balance ${money(result.balanceMinor)} (still PENDING)`,
        );
      });
    });
}
