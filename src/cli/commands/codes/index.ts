import type { Command } from 'commander';
import { registerCodesCreateCommand } from './create.js';
import { registerCodesDisableCommand } from './disable.js';
import { registerCodesListCommand } from './list.js';

/** An event's codes: create, list, disable; one file each. */
export function registerCodesCommands(program: Command): void {
  const codes = program
    .command('codes')
    .description("an event's codes: a percent or amount off, a price for a ticket type, or a hidden ticket type shown; limited by uses, a last day and ticket types");
  registerCodesCreateCommand(codes);
  registerCodesListCommand(codes);
  registerCodesDisableCommand(codes);
}
