import type { Command } from 'commander';
import { z } from 'zod';
import { printResult, withContext } from '../../io.js';
import { parseOrUsage } from '../../usage.js';
import { operatingSystemUser } from '../registrations/shared.js';

const optionsSchema = z.object({
  hours: z.coerce.number({ error: 'must be a number of hours' }).positive({ error: 'must be more than 0' }).max(336, { error: 'at most 336 (two weeks)' }).default(12),
  label: z.string().trim().min(1, { error: 'must not be empty' }).max(80, { error: 'at most 80 characters' }).default('Check-in'),
  canTakePayment: z.boolean().optional(),
  json: z.boolean().optional(),
});

export function registerCheckinLinkCommand(checkin: Command): void {
  checkin
    .command('link')
    .description('print a secret link that opens the check-in page of an event, for volunteers on their phones')
    .argument('<slug>', 'the event')
    .option('--hours <n>', 'how long the link works (default 12)')
    .option('--label <text>', 'who or where it is for, recorded with every check-in made through it (default "Check-in")')
    .option('--can-take-payment', 'the page may record a balance paid at the door, in cash or by bank (with a receipt)')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      `
Example:
  $ eventops checkin link family-camp --hours 12 --label "Front door" --can-take-payment

The link is shown once and only a hash of it is kept: anyone holding it sees the roll, with
its flags (who owes, answers marked showAtCheckin, guardians), until it expires or is
revoked with \`eventops checkin revoke\`.`,
    )
    .action(async (slug: string, raw: Record<string, unknown>) => {
      const options = parseOrUsage(optionsSchema, raw, 'checkin link');
      await withContext(async (ctx) => {
        const { createCheckinLink } = await import('../../../door/links.js');
        const { localMinute } = await import('../../../local-time.js');
        const { link, url } = await createCheckinLink(ctx, {
          eventSlug: slug,
          hours: options.hours,
          label: options.label,
          canTakePayment: Boolean(options.canTakePayment),
          actor: operatingSystemUser(),
        });
        const until = localMinute(link.expiresAt, ctx.config.regional.timeZone);
        printResult(options, { link: { id: link.id, label: link.label, event: link.eventSlug, canTakePayment: link.canTakePayment, expiresAt: link.expiresAt, url } }, [
          url,
          `check-in link ${link.id.slice(0, 8)} "${link.label}" for ${link.eventSlug}, works until ${until}${link.canTakePayment ? ', can take payments at the door' : ''}`,
          'Keep it secret: anyone with it sees the roll. Revoke it with `eventops checkin revoke ' + link.id.slice(0, 8) + '`.',
        ]);
      });
    });
}
