import type { Command } from 'commander';
import { registerCelebrationsCommand } from './celebrations.js';
import { registerImportCommand } from './import.js';
import { registerListCommand } from './list.js';

/** The church's people, one file per subcommand. */
export function registerPeopleCommands(program: Command): void {
  const people = program
    .command('people')
    .description('the church’s people: import from CSV, list, turn birthday and anniversary emails off or on');
  registerImportCommand(people);
  registerListCommand(people);
  registerCelebrationsCommand(people);
}
