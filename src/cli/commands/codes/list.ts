import type { Command } from 'commander';
import { z } from 'zod';
import { printResult, withContext } from '../../io.js';
import { parseOrUsage } from '../../usage.js';
import { table } from '../registrations/shared.js';
import { WHAT_A_USE_IS } from './words.js';

const listSchema = z.object({ event: z.string({ error: 'is required' }).trim().min(1, { error: 'must not be empty' }), json: z.boolean().optional() });

export function registerCodesListCommand(codes: Command): void {
  codes
    .command('list')
    .description("an event's codes: what each does, its uses (live) and limit, what it took off, its last day and state")
    .requiredOption('--event <slug>', 'the event')
    .option('--json', 'print JSON (amounts in minor units)')
    .addHelpText('after', `\nExample:\n  $ eventops codes list --event family-camp\n\n${WHAT_A_USE_IS}`)
    .action(async (raw: Record<string, unknown>) => {
      const options = parseOrUsage(listSchema, raw, 'codes list');
      await withContext(async (ctx) => {
        const { listCodes } = await import('../../../office/codes.js');
        const { moneyFormatter } = await import('../../../money-format.js');
        const money = moneyFormatter(ctx.config.regional);
        const { event, codes: listed } = await listCodes(ctx, options.event);
        const lines =
          listed.length === 0
            ? [`${event.slug} has no codes (create one with \`eventops codes create --event ${event.slug} ...\`)`]
            : table(
                ['CODE', 'EFFECT', 'USES', 'TOOK OFF', 'UNTIL', 'STATE', 'NOTE'],
                listed.map((code) => [
                  code.code,
                  code.effect,
                  code.maxUses === null ? String(code.uses) : `${code.uses}/${code.maxUses}`,
                  money(code.discountedMinor),
                  code.validUntil ?? '',
                  code.state,
                  code.note ?? '',
                ]),
              );
        printResult(options, { event: event.slug, codes: listed }, lines);
      });
    });
}
