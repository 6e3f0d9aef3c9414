import type { Command } from 'commander';
import { z } from 'zod';
import { printResult, withContext } from '../../io.js';
import { parseOrUsage } from '../../usage.js';
import { operatingSystemUser } from '../registrations/shared.js';

const optionsSchema = z.object({
  hours: z.coerce.number({ error: 'must be a number of hours' }).positive({ error: 'must be more than 0' }).max(336, { error: 'at most 336 (two weeks)' }).optional(),
  label: z.string().trim().min(1, { error: 'must not be empty' }).max(80, { error: 'at most 80 characters' }).default('Check-in'),
  canTakePayment: z.boolean().optional(),
  json: z.boolean().optional(),
});

export function registerCheckinLinkCommand(checkin: Command): void {
  checkin
    .command('link')
    .description('print a secret link that opens the check-in page of an event, for volunteers on their phones')
    .argument('<slug>', 'the event')
    .option('--hours <n>', 'how long the link works from now, at most 336 (default: until 6 hours after the event ends)')
    .option('--label <text>', 'who or where it is for, recorded with every check-in made through it (default "Check-in")')
    .option('--can-take-payment', 'the page may record a balance paid at the door, in cash or by bank (with a receipt)')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      `
Example:
  $ eventops checkin link family-camp --label "Front door" --can-take-payment

Without --hours the link works until 6 hours after the event ends (an event without an end
is taken to last 2 hours), so make it within two weeks of the event. With --hours it works
that long from now, and you are warned if that is over before the event starts.

The link is shown once and only a hash of it is kept: anyone holding it sees the roll, with
its flags (who owes, answers marked showAtCheckin, guardians), until it expires or is
revoked with \`eventops checkin revoke\`.`,
    )
    .action(async (slug: string, raw: Record<string, unknown>) => {
      const options = parseOrUsage(optionsSchema, raw, 'checkin link');
      await withContext(async (ctx) => {
        const { createCheckinLink } = await import('../../../door/links.js');
        const { zonedMinute } = await import('../../../door/link-lifetime.js');
        const { link, url, warnings } = await createCheckinLink(ctx, {
          eventSlug: slug,
          hours: options.hours,
          label: options.label,
          canTakePayment: Boolean(options.canTakePayment),
          actor: operatingSystemUser(),
        });
        const until = zonedMinute(link.expiresAt, ctx.config.regional.timeZone);
        // Warned on standard error, so the link alone on standard output can still be piped on.
        for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
        printResult(
          options,
          { link: { id: link.id, label: link.label, event: link.eventSlug, canTakePayment: link.canTakePayment, expiresAt: link.expiresAt, url }, warnings },
          [
            url,
            `check-in link ${link.id.slice(0, 8)} "${link.label}" for ${link.eventSlug}${link.canTakePayment ? ', can take payments at the door' : ''}`,
            `Works until ${until}.`,
            'Keep it secret: anyone with it sees the roll. Revoke it with `eventops checkin revoke ' + link.id.slice(0, 8) + '`.',
          ],
        );
      });
    });
}
