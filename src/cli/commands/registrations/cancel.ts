import type { Command } from 'commander';
import { z } from 'zod';
import { printResult, withContext } from '../../io.js';
import { parseOrUsage } from '../../usage.js';
import { noteSchema, operatingSystemUser, REGISTRATION_ARGUMENT } from './shared.js';
import { counted } from '../../../plural.js';

const optionsSchema = z.object({ note: noteSchema, notify: z.boolean().optional(), json: z.boolean().optional() });

export function registerCancelCommand(registrations: Command): void {
  registrations
    .command('cancel')
    .description('cancel a registration and free its seats; never refunds anything')
    .argument('<id-or-reference>', REGISTRATION_ARGUMENT)
    .option('--note <text>', 'why, kept in the history')
    .option('--notify', 'email the registrant a cancellation notice')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      `
Example:
  $ eventops registrations cancel 3F2A9C1B --note "family is away" --notify

A card payment is refunded in the card provider's dashboard, by a person; the refund
notice the provider then sends is recorded on the registration (nothing paid), and
changes nothing else. Exit 1 when already cancelled, 2 for a reference shorter than
8 characters (nothing is cancelled).`,
    )
    .action(async (given: string, raw: Record<string, unknown>) => {
      const options = parseOrUsage(optionsSchema, raw, 'registrations cancel');
      await withContext(async (ctx) => {
        const { cancelRegistration } = await import('../../../admin/registrations/cancel.js');
        const { moneyFormatter } = await import('../../../admin/registrations/money.js');
        const money = moneyFormatter(ctx.config.regional);
        const result = await cancelRegistration(ctx, { registration: given, note: options.note, notify: options.notify, actor: operatingSystemUser() });
        const lines = [`cancelled registration ${result.reference}: ${counted(result.seatsFreed, 'seat', 'seats')} freed${result.notified ? '; the registrant is notified' : ''}`];
        if (result.paidByCard) {
          lines.push(`It was paid by card (${money(result.paidMinor)}). Nothing was refunded: make any refund in the card provider's dashboard.`);
        } else if (result.paidMinor > 0) {
          lines.push(
            `${money(result.paidMinor)} had been received. Nothing was refunded: pay back by hand what is due, then record it with \`eventops registrations record-refund ${result.reference} --amount …\`.`,
          );
        }
        if (result.cardPaymentMayArrive) {
          lines.push(
            'A card payment for it was started and may still arrive: if it does, the money is kept (never refunded automatically) and an operations alert is raised (`eventops alerts list`).',
          );
        }
        printResult(options, { cancellation: result }, lines);
      });
    });
}
