import type { Command } from 'commander';
import { registerCheckinLinkCommand } from './link.js';
import { registerCheckinListCommand } from './list.js';
import { registerCheckinRevokeCommand } from './revoke.js';

/** Check-in links for volunteers at the door, one file per subcommand. */
export function registerCheckinCommands(program: Command): void {
  const checkin = program.command('checkin').description('links for volunteers to check people in at the door: make one, list them, revoke one');
  registerCheckinLinkCommand(checkin);
  registerCheckinListCommand(checkin);
  registerCheckinRevokeCommand(checkin);
}
