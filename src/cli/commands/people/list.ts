import type { Command } from 'commander';
import { printResult, withContext } from '../../io.js';

export function registerListCommand(people: Command): void {
  people
    .command('list')
    .description('list people with birth and wedding dates, spouse and ministry roles (never clearance numbers)')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExample:\n  $ eventops people list --json')
    .action(async (options: { json?: boolean }) => {
      const { listPeople } = await import('../../../admin/people/list.js');
      await withContext(async (ctx) => {
        const all = await listPeople(ctx);
        printResult(
          options,
          { people: all },
          all.length === 0
            ? 'no people yet; run `eventops people import FILE.csv`'
            : all.map((p) =>
                [
                  `${p.firstName} ${p.lastName}`,
                  p.birthDate ? `born ${p.birthDate}` : '',
                  p.weddingDate ? `married ${p.weddingDate}` : '',
                  p.spouse ? `spouse ${p.spouse}` : '',
                  p.ministryRoles.length ? `roles ${p.ministryRoles.join(', ')}` : '',
                ]
                  .filter(Boolean)
                  .join('  '),
              ),
        );
      });
    });
}
