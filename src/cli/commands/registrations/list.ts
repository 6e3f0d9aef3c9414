import type { Command } from 'commander';
import { z } from 'zod';
import { printResult, withContext } from '../../io.js';
import { parseOrUsage } from '../../usage.js';
import { table } from './shared.js';

const optionsSchema = z.object({
  event: z.string().trim().min(1).optional(),
  // A volunteer types `pending` as readily as PENDING.
  status: z
    .string()
    .transform((value) => value.trim().toUpperCase())
    .pipe(z.enum(['PENDING', 'PAID', 'CANCELLED'], { error: 'must be PENDING, PAID or CANCELLED' }))
    .optional(),
  search: z.string().trim().min(1, { error: 'must not be empty' }).max(200).optional(),
  json: z.boolean().optional(),
});

export function registerListCommand(registrations: Command): void {
  registrations
    .command('list')
    .description('one row per registration: reference, contact, attendees, total, paid, method, status, created')
    .option('--event <slug>', 'only this event')
    .option('--status <status>', 'PENDING, PAID or CANCELLED')
    .option('--search <text>', 'part of a contact or attendee name (accents and case ignored: munoz finds Muñoz), an exact email address, or the start of a reference')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExamples:\n  $ eventops registrations list --event family-camp --status PENDING\n  $ eventops registrations list --search smith --json')
    .action(async (raw: unknown) => {
      const options = parseOrUsage(optionsSchema, raw, 'registrations list');
      await withContext(async (ctx) => {
        const { listRegistrations } = await import('../../../office/registrations/list.js');
        const { moneyFormatter } = await import('../../../office/registrations/money.js');
        const { localDay } = await import('../../../local-time.js');
        const { methodShown } = await import('../../../registrations/paid-by.js');
        const money = moneyFormatter(ctx.config.regional);
        const found = await listRegistrations(ctx, { eventSlug: options.event, status: options.status, search: options.search });
        const twice = found.filter((r) => r.sameContactAs.length > 0);
        printResult(
          options,
          { registrations: found },
          found.length === 0
            ? 'no registrations match'
            : [
                ...table(
                  ['REFERENCE', 'EVENT', 'CONTACT', 'ATTENDEES', 'TOTAL', 'PAID', 'BALANCE', 'METHOD', 'STATUS', 'CREATED'],
                  found.map((r) => [
                    r.sameContactAs.length > 0 ? `${r.reference} *` : r.reference,
                    r.event,
                    r.contactName,
                    String(r.attendees),
                    money(r.totalMinor),
                    money(r.paidMinor),
                    r.balanceMinor > 0 ? money(r.balanceMinor) : '-',
                    methodShown(r.method, r.officePaidBy, ctx.config.regional),
                    r.helpOpen ? `${r.status} (help asked)` : r.status,
                    localDay(r.createdAt, ctx.config.regional.timeZone),
                  ]),
                ),
                ...(twice.length > 0
                  ? [
                      '',
                      '* the same contact email has another live registration for the event (registered twice?):',
                      ...twice.map((r) => `  ${r.reference}: also ${r.sameContactAs.join(', ')}`),
                    ]
                  : []),
              ],
        );
      });
    });
}
