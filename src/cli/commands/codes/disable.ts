import type { Command } from 'commander';
import { z } from 'zod';
import { printResult, withContext } from '../../io.js';
import { parseOrUsage } from '../../usage.js';
import { operatingSystemUser } from '../registrations/shared.js';

const disableSchema = z.object({ event: z.string({ error: 'is required' }).trim().min(1, { error: 'must not be empty' }), json: z.boolean().optional() });

export function registerCodesDisableCommand(codes: Command): void {
  codes
    .command('disable')
    .description('stop a code from being used from now on; registrations already made with it keep their price')
    .argument('<code>', 'the code as created (case does not matter)')
    .requiredOption('--event <slug>', 'the event whose code it is (codes are unique per event)')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExample:\n  $ eventops codes disable STAFF26 --event family-camp\n\nExit 1 when the event has no such code.')
    .action(async (code: string, raw: Record<string, unknown>) => {
      const options = parseOrUsage(disableSchema, raw, 'codes disable');
      await withContext(async (ctx) => {
        const { disableCode } = await import('../../../office/codes.js');
        const disabled = await disableCode(ctx, { eventSlug: options.event, code, actor: operatingSystemUser() });
        printResult(options, { code: disabled }, [
          disabled.alreadyDisabled
            ? `${disabled.code} of ${disabled.event} was already disabled`
            : `disabled ${disabled.code} of ${disabled.event}: no registration may use it from now (${disabled.uses} ${disabled.uses === 1 ? 'use' : 'uses'} so far keep it)`,
        ]);
      });
    });
}
