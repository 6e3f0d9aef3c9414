import type { Command } from 'commander';
import { z } from 'zod';
import { calendarDate } from '../../../office/event-file.js';
import { printResult, withContext } from '../../io.js';
import { parseOrUsage } from '../../usage.js';
import { noteSchema, operatingSystemUser } from '../registrations/shared.js';
import { WHAT_A_USE_IS } from './words.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];
const wholeNumber = (what: string) => z.coerce.number({ error: `must be ${what}` }).int({ error: `must be ${what}` });

export const createSchema = z.object({
  event: z.string({ error: 'is required' }).trim().min(1, { error: 'must not be empty' }),
  code: z.string({ error: 'is required' }).trim().regex(/^[A-Za-z0-9_-]{1,40}$/, { error: 'must be 1 to 40 letters, digits, - or _, e.g. STAFF26' }),
  percent: z.coerce.number({ error: 'must be a number, e.g. 10 or 12.5' }).optional(),
  amount: wholeNumber('a whole number of minor units, e.g. 2000 for $20.00').optional(),
  price: z
    .array(z.string())
    .optional()
    .transform((values, ctx) => {
      if (values === undefined) return undefined;
      const prices: Record<string, number> = {};
      for (const value of values) {
        const match = /^([^=\s]+)=(\d+)$/.exec(value.trim());
        if (!match) ctx.addIssue({ code: 'custom', message: `"${value}" must be TIER=MINOR, e.g. infant=0 or adult=25000` });
        else prices[match[1] as string] = Number(match[2]);
      }
      return prices;
    }),
  maxUses: wholeNumber('a whole number of uses').min(1, { error: 'must be at least 1' }).optional(),
  validUntil: calendarDate.optional(),
  tiers: z
    .string()
    .optional()
    .transform((value) => (value === undefined ? undefined : value.split(',').map((tier) => tier.trim()).filter(Boolean))),
  reveals: z.string().trim().min(1, { error: 'must name a tier' }).optional(),
  note: noteSchema,
  json: z.boolean().optional(),
});

export function registerCodesCreateCommand(codes: Command): void {
  codes
    .command('create')
    .description('create a code for an event: one of --percent, --amount, --price (or only --reveals), with optional limits')
    .requiredOption('--event <slug>', 'the event')
    .requiredOption('--code <code>', 'the code families type (letters, digits, - and _; case does not matter), e.g. STAFF26')
    .option('--percent <p>', 'percent off the tickets it reaches, once for the registration (e.g. 10, or 12.5)')
    .option('--amount <minor>', 'an amount off the tickets it reaches, once for the registration, in minor units (2000 = $20.00)')
    .option('--price <tier=minor>', "a price for every ticket of that type in the registration (never above the type's own price then); repeat for several", collect)
    .option('--max-uses <n>', 'how many registrations may use it (default: no limit)')
    .option('--valid-until <date>', "the last day it may be used, yyyy-mm-dd in the church's time zone (through the end of that day)")
    .option('--tiers <a,b>', 'only for these ticket types: its percent or amount reaches only their tickets, and a registration with none of them cannot use it')
    .option('--reveals <tier>', 'a hidden ticket type (`"hidden": true` in the event file) that the code lets a registration choose')
    .option('--note <text>', 'for the office: who it is for')
    .option('--json', 'print JSON (amounts in minor units)')
    .addHelpText(
      'after',
      `
Examples:
  $ eventops codes create --event family-camp --code STAFF26 --percent 50 --max-uses 12 --note "staff families"
  $ eventops codes create --event family-camp --code EARLYBIRD --amount 2000 --valid-until 2027-02-28
  $ eventops codes create --event family-camp --code LEADERS --price leader=0 --reveals leader --max-uses 8

${WHAT_A_USE_IS}

A code applies after the ticket prices and the family waiver, and before the event's own discount. The public form
answers every code it will not take with one message (unknown, disabled, past its last day, used up, or not for
these tickets), and limits the codes one connection may try. Exit 1 when the event has the code already (in any
case), 2 for bad arguments.`,
    )
    .action(async (raw: Record<string, unknown>) => {
      const options = parseOrUsage(createSchema, raw, 'codes create');
      await withContext(async (ctx) => {
        const { createCode } = await import('../../../office/codes.js');
        const created = await createCode(ctx, {
          eventSlug: options.event,
          code: options.code,
          percent: options.percent,
          amount: options.amount,
          prices: options.price,
          maxUses: options.maxUses,
          validUntil: options.validUntil,
          tiers: options.tiers,
          reveals: options.reveals,
          note: options.note,
          actor: operatingSystemUser(),
        });
        const limits = [
          created.maxUses !== null ? `at most ${created.maxUses} ${created.maxUses === 1 ? 'registration' : 'registrations'}` : 'no limit of uses',
          created.validUntil !== null ? `until the end of ${created.validUntil}` : '',
        ].filter(Boolean);
        printResult(options, { code: created }, [`created ${created.code} for ${created.event}: ${created.effect}; ${limits.join(', ')}`]);
      });
    });
}
