import type { Command } from 'commander';
import { z } from 'zod';
import { printResult, withContext } from '../../io.js';
import { parseOrUsage } from '../../usage.js';
import { operatingSystemUser } from '../registrations/shared.js';

const optionsSchema = z.object({ event: z.string().trim().min(1).optional(), json: z.boolean().optional() });

export function registerCheckinRevokeCommand(checkin: Command): void {
  checkin
    .command('revoke')
    .description('stop a check-in link working at once: by its id (the 8 characters `checkin list` prints) or its label')
    .argument('<id-or-label>', 'the link: its id, the first 8 characters of it, or its label (every live link with that label)')
    .option('--event <slug>', 'only the links of this event')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExamples:\n  $ eventops checkin revoke 1a2b3c4d\n  $ eventops checkin revoke "Front door" --event family-camp')
    .action(async (given: string, raw: Record<string, unknown>) => {
      const options = parseOrUsage(optionsSchema, raw, 'checkin revoke');
      await withContext(async (ctx) => {
        const { revokeCheckinLinks } = await import('../../../door/links.js');
        const { counted } = await import('../../../plural.js');
        const revoked = await revokeCheckinLinks(ctx, { idOrLabel: given, eventSlug: options.event, actor: operatingSystemUser() });
        printResult(options, { revoked: revoked.map((link) => ({ id: link.id, label: link.label, event: link.eventSlug })) }, [
          `revoked ${counted(revoked.length, 'check-in link', 'check-in links')}: ${revoked.map((link) => `${link.id.slice(0, 8)} "${link.label}" (${link.eventSlug})`).join(', ')}`,
        ]);
      });
    });
}
