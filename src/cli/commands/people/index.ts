import type { Command } from 'commander';
import { registerImportCommand } from './import.js';
import { registerListCommand } from './list.js';

/** The church's people, one file per subcommand. */
export function registerPeopleCommands(program: Command): void {
  const people = program.command('people').description('the church’s people: import from CSV and list');
  registerImportCommand(people);
  registerListCommand(people);
}
