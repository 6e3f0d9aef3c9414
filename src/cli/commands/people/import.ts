import fs from 'node:fs/promises';
import type { Command } from 'commander';
import { PEOPLE_CSV_COLUMNS } from '../../../office/people/columns.js';
import { UsageError } from '../../../errors.js';
import { printResult, withContext } from '../../io.js';

async function readCsvFile(file: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await fs.readFile(file);
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    // Read leniently, a spreadsheet's "CSV" in Windows-1252 would store José as Jos\uFFFD without a word.
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError(`${file} is not UTF-8 text; nothing was imported`, 'save it from the spreadsheet as "CSV UTF-8" and import it again');
  }
}

export function registerImportCommand(people: Command): void {
  people
    .command('import')
    .description('import or update people from a CSV file; every row is checked first and one bad row imports nothing')
    .argument('<file>', 'CSV file with the header row below')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      `
Header row (required, in this order):
  ${PEOPLE_CSV_COLUMNS.join(',')}

Dates are YYYY-MM-DD; an empty cell means none. Email is required: re-importing
matches people by email (ignoring case), so importing the same file twice
changes nothing. spouse_email must name someone in the file or already imported;
both people are linked. ministry_role may list several roles separated by ";".
Import adds and updates, never removes roles, clearances or spouse links.

Example:
  $ eventops people import people.csv --json

Exit 0 when imported, 1 when the file has problems (every bad row is listed), 2 when the file cannot be read.`,
    )
    .action(async (file: string, options: { json?: boolean }) => {
      const csvText = await readCsvFile(file);
      const { importPeople } = await import('../../../office/people-import.js');
      await withContext(async (ctx) => {
        const summary = await importPeople(ctx, csvText);
        printResult(
          options,
          summary,
          `imported ${summary.rows} rows: ${summary.created} created, ${summary.updated} updated, ${summary.unchanged} unchanged`,
        );
      });
    });
}
