import type { Command } from 'commander';
import { z } from 'zod';
import { printResult, withContext } from '../../io.js';
import { parseOrUsage } from '../../usage.js';
import { noteSchema, operatingSystemUser, REGISTRATION_ARGUMENT } from './shared.js';

const optionsSchema = z.object({
  amount: z.string({ error: 'is required, e.g. --amount 240.00' }),
  method: z.enum(['bank', 'cash', 'other'], { error: 'must be bank, cash or other' }).default('bank'),
  note: noteSchema,
  partial: z.boolean().optional(),
  again: z.boolean().optional(),
  yes: z.boolean().optional(),
  json: z.boolean().optional(),
});

export function registerMarkPaidCommand(registrations: Command): void {
  registrations
    .command('mark-paid')
    .description('record a payment received outside the card provider (a bank transfer, cash); in full, the registration becomes PAID and the receipt is sent')
    .argument('<id-or-reference>', REGISTRATION_ARGUMENT)
    .requiredOption('--amount <amount>', 'the amount received in APP_CURRENCY, as a plain number: 240 or 240.00 (240,00 where APP_LOCALE writes a decimal comma)')
    .option('--method <method>', 'bank (default), cash or other')
    .option('--note <text>', 'kept in the history, e.g. "transfer of 3 March"')
    .option('--partial', 'record part of what is owing: the registration stays PENDING and the balance is reminded')
    .option('--again', 'record it even though the same amount, method and note was recorded for this registration in the last 24 hours')
    .option('--yes', 'record the whole balance even though a card payment for the registration may still arrive (check with `eventops reconcile` first)')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ eventops registrations mark-paid 3F2A9C1B --amount 240.00 --note "transfer of 3 March"
  $ eventops registrations mark-paid 3F2A9C1B --amount 100 --partial --method cash

Type the amount without a currency sign. A shell reads $ as the start of a variable, so
--amount $150 (or "$150") reaches eventops as 50; if you type a sign at all, put it in single
quotes: --amount '$150'. The amount recorded is always echoed back: check it.

The amount must equal what is owing unless --partial. A cancelled or already paid
registration is refused, and so is a payment with the same amount, method and note as
one recorded for the registration in the last 24 hours (the same transfer recorded
twice); --again records it anyway, for a second payment that happens to match.
While a card payment the registrant started may still arrive, the whole balance is
recorded only with --yes: if the card payment lands too, the registration is paid
twice and the card payment has to be refunded by hand. Check with \`eventops reconcile\`.
Exit 1 when nothing was recorded, 2 for a malformed amount or a reference shorter than
8 characters.`,
    )
    .action(async (given: string, raw: Record<string, unknown>) => {
      const options = parseOrUsage(optionsSchema, raw, 'registrations mark-paid');
      await withContext(async (ctx) => {
        const { parseAmount, moneyFormatter } = await import('../../../office/registrations/money.js');
        const { markRegistrationPaid } = await import('../../../office/registrations/mark-paid.js');
        const amountMinor = parseAmount(options.amount, ctx.config.regional);
        const money = moneyFormatter(ctx.config.regional);
        const result = await markRegistrationPaid(
          ctx,
          { registration: given, amountMinor, method: options.method, note: options.note, partial: options.partial, again: options.again, yes: options.yes, actor: operatingSystemUser() },
          money,
        );
        const lines = [
          result.status === 'PAID'
            ? `registration ${result.reference} is PAID (${money(result.recordedMinor)} by ${options.method}); the receipt is queued`
            : `recorded ${money(result.recordedMinor)} by ${options.method} for ${result.reference}; paid ${money(result.paidMinor)}, balance ${money(result.balanceMinor)} (still PENDING)`,
        ];
        if (result.cardPaymentMayArrive) {
          lines.push(
            'A card payment for it was started and may still arrive: if it does, the money is kept with an operations alert (`eventops alerts list`) and has to be refunded by hand.',
          );
        }
        printResult(options, { payment: result }, lines);
      });
    });
}
