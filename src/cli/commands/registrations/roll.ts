import type { Command } from 'commander';
import { z } from 'zod';
import { printResult, withContext } from '../../io.js';
import { parseOrUsage } from '../../usage.js';

const optionsSchema = z.object({ out: z.string().trim().min(1).optional(), json: z.boolean().optional() });

export function registerRollCommand(registrations: Command): void {
  registrations
    .command('roll')
    .description('the roll to print: a print-ready HTML page, one line per attendee coming, with boxes to tick and the door\'s flags (owes, answers shown at check-in, guardian)')
    .argument('<slug>', 'the event')
    .option('--out <file>', 'write to this file (mode 0600: it holds answers shown at check-in) instead of standard output')
    .option('--json', 'with --out: print what was written as JSON')
    .addHelpText('after', '\nOpen the file in a browser and print it (or save it as a PDF).\n\nExample:\n  $ eventops registrations roll family-camp --out roll.html')
    .action(async (slug: string, raw: Record<string, unknown>) => {
      const options = parseOrUsage(optionsSchema, raw, 'registrations roll');
      await withContext(async (ctx) => {
        const { printedRoll } = await import('../../../door/printed-roll.js');
        const { writePrivateFile } = await import('../../../office/registrations/export.js');
        const { counted } = await import('../../../plural.js');
        const roll = await printedRoll(ctx, slug);
        if (!options.out) {
          process.stdout.write(roll.html);
          return;
        }
        await writePrivateFile(options.out, roll.html);
        printResult(options, { file: options.out, attendees: roll.attendees, mode: '0600' }, `wrote the roll of ${counted(roll.attendees, 'attendee', 'attendees')} to ${options.out} (mode 0600); open it in a browser to print`);
      });
    });
}
