import type { Command } from 'commander';
import { z } from 'zod';
import { printResult, withContext } from '../../io.js';
import { parseOrUsage } from '../../usage.js';
import { table } from '../registrations/shared.js';

const optionsSchema = z.object({ event: z.string().trim().min(1).optional(), json: z.boolean().optional() });

export function registerCheckinListCommand(checkin: Command): void {
  checkin
    .command('list')
    .description('the check-in links made: id, event, label, whether it takes payments, until when it works, and whether it is live, expired or revoked (never the link itself)')
    .option('--event <slug>', 'only this event')
    .option('--json', 'print JSON')
    .action(async (raw: Record<string, unknown>) => {
      const options = parseOrUsage(optionsSchema, raw, 'checkin list');
      await withContext(async (ctx) => {
        const { linkState, listCheckinLinks } = await import('../../../door/links.js');
        const { localMinute } = await import('../../../local-time.js');
        const now = ctx.clock.now();
        const links = await listCheckinLinks(ctx.db, { eventSlug: options.event });
        const minute = (date: Date) => localMinute(date, ctx.config.regional.timeZone);
        const rows = links.map((link) => [link.id.slice(0, 8), link.eventSlug, link.label, link.canTakePayment ? 'yes' : 'no', minute(link.expiresAt), linkState(link, now)]);
        printResult(
          options,
          { links: links.map((link) => ({ ...link, state: linkState(link, now) })) },
          links.length === 0
            ? ['no check-in links; make one with `eventops checkin link SLUG`']
            : [...table(['ID', 'EVENT', 'LABEL', 'PAYMENTS', 'UNTIL', 'STATE'], rows), `times in ${ctx.config.regional.timeZone}`],
        );
      });
    });
}
