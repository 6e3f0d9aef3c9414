import type { Command } from 'commander';
import { z } from 'zod';
import { printResult, withContext } from '../../io.js';
import { parseOrUsage } from '../../usage.js';
import { REGISTRATION_ARGUMENT, noteSchema, operatingSystemUser } from './shared.js';

const optionsSchema = z.object({
  amount: z.string({ error: 'is required, e.g. --amount 240.00' }),
  method: z.enum(['bank', 'cash', 'other'], { error: 'must be bank, cash or other' }).default('bank'),
  note: noteSchema,
  again: z.boolean().optional(),
  json: z.boolean().optional(),
});

export function registerRecordRefundCommand(registrations: Command): void {
  registrations
    .command('record-refund')
    .description('record money the office paid back by hand for a cancelled registration, so its amount paid stops counting it; refunds nothing itself')
    .argument('<id-or-reference>', REGISTRATION_ARGUMENT)
    .requiredOption('--amount <amount>', 'the amount paid back, as written ("240" or "240.00") in APP_CURRENCY')
    .option('--method <method>', 'bank (default), cash or other')
    .option('--note <text>', 'kept in the history, e.g. "refunded by transfer on 3 December"')
    .option('--again', 'record it even though the same amount, method and note was recorded for this registration in the last 24 hours')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      `
Example:
  $ eventops registrations record-refund 3F2A9C1B --amount 270 --note "refunded by transfer on 3 December"

Only for a cancelled registration, and at most what the church holds for it. A card
payment is refunded in the card provider's dashboard (its refund notice is recorded by
itself), unless that refund failed: then record here how the payer was paid back.
Exit 1 when nothing was recorded, 2 for a malformed amount.`,
    )
    .action(async (given: string, raw: Record<string, unknown>) => {
      const options = parseOrUsage(optionsSchema, raw, 'registrations record-refund');
      await withContext(async (ctx) => {
        const { parseAmount, moneyFormatter } = await import('../../../office/registrations/money.js');
        const { recordOfficeRefund } = await import('../../../office/registrations/record-refund.js');
        const amountMinor = parseAmount(options.amount, ctx.config.regional);
        const money = moneyFormatter(ctx.config.regional);
        const result = await recordOfficeRefund(ctx, { registration: given, amountMinor, method: options.method, note: options.note, again: options.again, actor: operatingSystemUser() }, money);
        printResult(
          options,
          { refund: result },
          `recorded ${money(result.refundedMinor)} paid back by ${options.method} for ${result.reference}; the church now holds ${money(result.heldMinor)} for it`,
        );
      });
    });
}
