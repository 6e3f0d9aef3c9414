import type { Command } from 'commander';
import { z } from 'zod';
import type { CancelResult } from '../../../office/registrations/cancel.js';
import { EXIT } from '../../../errors.js';
import { printResult, withContext } from '../../io.js';
import { parseOrUsage } from '../../usage.js';
import { noteSchema, operatingSystemUser, REGISTRATION_ARGUMENT } from './shared.js';
import { counted } from '../../../plural.js';

const optionsSchema = z.object({ note: noteSchema, notify: z.boolean().optional(), json: z.boolean().optional() });

export function registerCancelCommand(registrations: Command): void {
  registrations
    .command('cancel')
    .description('cancel one or more registrations and free their seats; never refunds anything')
    .argument('<id-or-reference...>', `${REGISTRATION_ARGUMENT}; several, separated by spaces, are cancelled in turn`)
    .option('--note <text>', 'why, kept in the history (of each)')
    .option('--notify', 'email each registrant a cancellation notice')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ eventops registrations cancel 3F2A9C1B --note "family is away" --notify
  $ eventops registrations cancel 3F2A9C1B 7D01E4AA 90B2C3D4 --note "unpaid places held from one connection"

A card payment is refunded in the card provider's dashboard, by a person; the refund
notice the provider then sends is recorded on the registration (nothing paid), and
changes nothing else. One reference: exit 1 when already cancelled, 2 for a reference
shorter than 8 characters (nothing is cancelled). Several: each is cancelled in turn,
one that fails does not stop the others, and the exit code is 1 if any failed.`,
    )
    .action(async (given: string[], raw: Record<string, unknown>) => {
      const options = parseOrUsage(optionsSchema, raw, 'registrations cancel');
      await withContext(async (ctx) => {
        const { cancelRegistration, cancelRegistrations } = await import('../../../office/registrations/cancel.js');
        const { moneyFormatter } = await import('../../../office/registrations/money.js');
        const money = moneyFormatter(ctx.config.regional);
        const input = { note: options.note, notify: options.notify, actor: operatingSystemUser() };
        if (given.length === 1) {
          const result = await cancelRegistration(ctx, { ...input, registration: given[0] as string });
          printResult(options, { cancellation: result }, describeCancellation(result, money));
          return;
        }
        const outcomes = await cancelRegistrations(ctx, { ...input, registrations: given });
        const failed = outcomes.filter((outcome) => !outcome.ok).length;
        const lines = outcomes.flatMap((outcome) =>
          outcome.ok ? describeCancellation(outcome.result, money) : [`not cancelled ${outcome.given}: ${outcome.error.message}`],
        );
        lines.push(`${outcomes.length - failed} of ${outcomes.length} registrations cancelled${failed > 0 ? `; ${failed} failed` : ''}`);
        printResult(
          options,
          {
            cancellations: outcomes.flatMap((outcome) => (outcome.ok ? [outcome.result] : [])),
            failures: outcomes.flatMap((outcome) => (outcome.ok ? [] : [{ registration: outcome.given, ...outcome.error }])),
          },
          lines,
        );
        if (failed > 0) process.exitCode = EXIT.failure;
      });
    });
}

function describeCancellation(result: CancelResult, money: (minor: number) => string): string[] {
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
  return lines;
}
