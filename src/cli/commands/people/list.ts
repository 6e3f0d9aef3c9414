import type { Command } from 'commander';
import type { PersonListing } from '../../../office/people/list.js';
import { printResult, withContext } from '../../io.js';

export function registerListCommand(people: Command): void {
  people
    .command('list')
    .description('list people with birth and wedding dates, spouse, ministry roles and whose celebration emails are off (never clearance numbers)')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExample:\n  $ eventops people list --json')
    .action(async (options: { json?: boolean }) => {
      const { listPeople } = await import('../../../office/people/list.js');
      const { localDay } = await import('../../../local-time.js');
      await withContext(async (ctx) => {
        const all = await listPeople(ctx);
        const day = (date: Date) => localDay(date, ctx.config.regional.timeZone);
        printResult(
          options,
          { people: all },
          all.length === 0 ? 'no people yet; run `eventops people import FILE.csv`' : all.map((p) => describe(p, day)),
        );
      });
    });
}

function describe(p: PersonListing, day: (date: Date) => string): string {
  const off = p.celebrationsOff;
  return [
    `${p.firstName} ${p.lastName}`,
    // The address `people celebrations` is given, and what re-import matches people by.
    p.email ?? '',
    p.birthDate ? `born ${p.birthDate}` : '',
    p.weddingDate ? `married ${p.weddingDate}` : '',
    p.spouse ? `spouse ${p.spouse}` : '',
    p.ministryRoles.length ? `roles ${p.ministryRoles.join(', ')}` : '',
    off ? `celebration emails off since ${day(off.at)} (${off.by === 'office' ? 'by the office' : 'unsubscribed'}${off.note ? `: ${off.note}` : ''})` : '',
  ]
    .filter(Boolean)
    .join('  ');
}
