import type { Command } from 'commander';
import { z } from 'zod';
import { printResult, withContext } from '../io.js';
import { parseOrUsage } from '../usage.js';

const optionsSchema = z.object({ json: z.boolean().optional() });

/** `events addons SLUG`, in a file of its own beside events.ts. */
export function registerEventsAddonsCommand(events: Command): void {
  events
    .command('addons')
    .description("each add-on's count (paid, pending, in card checkouts), per option, and the stock left: the kitchen's and the bus's numbers")
    .argument('<slug>', 'the event')
    .option('--json', 'print JSON (amounts in minor units)')
    .addHelpText(
      'after',
      '\nStock is counted as places are: paid and pending registrations and open card checkouts; a cancelled,\nexpired or refunded registration gives its add-ons back.\n\nExample:\n  $ eventops events addons family-camp',
    )
    .action(async (slug: string, raw: Record<string, unknown>) => {
      const options = parseOrUsage(optionsSchema, raw, 'events addons');
      await withContext(async (ctx) => {
        const { addonCountsOf } = await import('../../office/addon-counts.js');
        const { moneyFormatter } = await import('../../office/registrations/money.js');
        const money = moneyFormatter(ctx.config.regional);
        const report = await addonCountsOf(ctx, slug);
        const lines = report.addons.flatMap((a) => [
          `${a.label} (${a.id}, ${money(a.priceMinor)} per ${a.per}): ${a.paid + a.pending} taken (${a.paid} paid, ${a.pending} pending)` +
            `${a.inCheckout > 0 ? `, ${a.inCheckout} in card checkouts` : ''}${a.stock === null ? '' : `; ${a.left} of ${a.stock} left`}`,
          ...Object.entries(a.options).map(([option, units]) => `  ${option}: ${units}`),
        ]);
        printResult(options, report, [`${report.event.title} (${report.event.slug}) add-ons:`, ...(lines.length === 0 ? ['  none in the event file'] : lines)]);
      });
    });
}
