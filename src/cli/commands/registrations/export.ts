import type { Command } from 'commander';
import { z } from 'zod';
import { printResult, withContext } from '../../io.js';
import { parseOrUsage } from '../../usage.js';
import { counted } from '../../../plural.js';

const optionsSchema = z.object({
  event: z.string({ error: 'is required' }).trim().min(1, { error: 'is required' }),
  format: z.enum(['csv', 'json'], { error: 'must be csv or json' }).default('csv'),
  out: z.string().trim().min(1).optional(),
  includeCancelled: z.boolean().optional(),
  json: z.boolean().optional(),
});

export function registerExportCommand(registrations: Command): void {
  registrations
    .command('export')
    .description('one row per attendee coming (name tags, kitchen, roll): attendee, ticket, reference, contact, email, mobile, status; the registration\'s amount paid, total and balance owing on its first attendee\'s row')
    .requiredOption('--event <slug>', 'the event')
    .option('--format <format>', 'csv (default) or json')
    .option('--out <file>', 'write to this file (mode 0600, owned by you; a file or symlink already there is replaced) instead of standard output')
    .option('--include-cancelled', 'also cancelled registrations (released unpaid holds too), marked CANCELLED; without it, only who is coming (PENDING and PAID)')
    .option('--json', 'with --out: print what was written as JSON; without: the same as --format json')
    .addHelpText(
      'after',
      `
Only who is coming (PENDING and PAID) unless --include-cancelled.
amount_paid, total and balance_owing are the registration's: they are on its first
attendee's row only (empty on the others, null in JSON), so summing a column counts each
registration once; registration_reference is on every row. A cancelled registration shows
what was received and kept, and owes nothing (balance 0).
CSV cells starting with =, +, - or @ are prefixed with ' so a spreadsheet never runs them.
The file holds contact details: it is written readable by its owner only (a new file,
renamed over whatever was there, so an old file's owner cannot read it and a symlink is
not followed), and its contents never go to a log.

Example:
  $ eventops registrations export --event family-camp --out family-camp.csv`,
    )
    .action(async (raw: unknown) => {
      const options = parseOrUsage(optionsSchema, raw, 'registrations export');
      await withContext(async (ctx) => {
        const { exportAttendees, attendeesCsv, writePrivateFile } = await import('../../../admin/registrations/export.js');
        const rows = await exportAttendees(ctx, options.event, { includeCancelled: options.includeCancelled });
        const json = options.format === 'json' || (options.json && !options.out);
        const contents = json ? JSON.stringify({ attendees: rows }, null, 2) + '\n' : attendeesCsv(rows);
        if (!options.out) {
          process.stdout.write(contents);
          return;
        }
        await writePrivateFile(options.out, contents);
        printResult(options, { file: options.out, rows: rows.length, format: json ? 'json' : 'csv', mode: '0600' }, `wrote ${counted(rows.length, 'attendee row', 'attendee rows')} to ${options.out} (mode 0600)`);
      });
    });
}
