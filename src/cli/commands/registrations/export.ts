import type { Command } from 'commander';
import { z } from 'zod';
import { printResult, withContext } from '../../io.js';
import { parseOrUsage } from '../../usage.js';
import { counted } from '../../../plural.js';
import { UsageError } from '../../../errors.js';
import { operatingSystemUser } from './shared.js';

const optionsSchema = z.object({
  event: z.string({ error: 'is required' }).trim().min(1, { error: 'is required' }),
  format: z.enum(['csv', 'json'], { error: 'must be csv or json' }).default('csv'),
  out: z.string().trim().min(1).optional(),
  includeCancelled: z.boolean().optional(),
  includeSensitive: z.boolean().optional(),
  reason: z.string().trim().min(1, { error: 'must not be empty' }).max(500, { error: 'at most 500 characters' }).optional(),
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
    .option('--include-sensitive', 'add the sensitive answers (medical, allergies, date of birth); needs --reason, recorded in the history of each registration exported')
    .option('--reason <why>', 'why the sensitive answers are exported (e.g. "camp nurse\'s list"); kept in each registration\'s history with who and when')
    .option('--json', 'with --out: print what was written as JSON; without: the same as --format json')
    .addHelpText(
      'after',
      `
Only who is coming (PENDING and PAID) unless --include-cancelled.
amount_paid, total and balance_owing are the registration's: they are on its first
attendee's row only (empty on the others, null in JSON), so summing a column counts each
registration once; registration_reference is on every row. A cancelled registration shows
what was received and kept, and owes nothing (balance 0).
Answers: one column per question of the event file, headed q.<question id> (stable when
a label changes); a registration-wide answer on each of its rows, an attendee's on theirs.
Sensitive questions and the date of birth only with --include-sensitive --reason "…";
the export is then recorded in each exported registration's history (who, when, why).
CSV cells starting with =, +, - or @ are prefixed with ' so a spreadsheet never runs them.
The file holds contact details: it is written readable by its owner only (a new file,
renamed over whatever was there, so an old file's owner cannot read it and a symlink is
not followed), and its contents never go to a log.

Examples:
  $ eventops registrations export --event family-camp --out family-camp.csv
  $ eventops registrations export --event family-camp --include-sensitive --reason "camp nurse's list" --out nurse.csv`,
    )
    .action(async (raw: unknown) => {
      const options = parseOrUsage(optionsSchema, raw, 'registrations export');
      if (options.includeSensitive && options.reason === undefined) {
        throw new UsageError('--include-sensitive needs --reason: why the sensitive answers leave, kept in each registration\'s history', 'e.g. --include-sensitive --reason "camp nurse\'s list"');
      }
      if (options.reason !== undefined && !options.includeSensitive) {
        throw new UsageError('--reason is for --include-sensitive: without it no sensitive answer is exported and nothing is recorded', 'add --include-sensitive, or leave out --reason');
      }
      await withContext(async (ctx) => {
        const { exportEvent, exportWithSensitiveAnswers, withoutIds, attendeesCsv, writePrivateFile } = await import('../../../office/registrations/export.js');
        const { localMinute } = await import('../../../local-time.js');
        const exported =
          options.includeSensitive && options.reason !== undefined
            ? await exportWithSensitiveAnswers(ctx, options.event, {
                includeCancelled: options.includeCancelled,
                reason: options.reason,
                actor: operatingSystemUser(),
                to: options.out ?? 'standard output',
              })
            : await exportEvent(ctx, options.event, { includeCancelled: options.includeCancelled }).then((e) => ({ rows: withoutIds(e.rows), answerColumns: e.answerColumns, registrations: 0 }));
        const { rows } = exported;
        const json = options.format === 'json' || (options.json && !options.out);
        const headers = exported.answerColumns.map((column) => column.header);
        const contents = json
          ? JSON.stringify({ attendees: rows }, null, 2) + '\n'
          : attendeesCsv(rows, headers, (date) => localMinute(date, ctx.config.regional.timeZone));
        if (!options.out) {
          process.stdout.write(contents);
          return;
        }
        await writePrivateFile(options.out, contents);
        const recorded = options.includeSensitive ? `; the sensitive answers' export is recorded in the history of ${counted(exported.registrations, 'registration', 'registrations')}` : '';
        printResult(
          options,
          { file: options.out, rows: rows.length, format: json ? 'json' : 'csv', mode: '0600', ...(options.includeSensitive ? { recordedIn: exported.registrations } : {}) },
          `wrote ${counted(rows.length, 'attendee row', 'attendee rows')} to ${options.out} (mode 0600)${recorded}`,
        );
      });
    });
}
