import type { Command } from 'commander';
import { registerOutboxListCommand } from './list.js';
import { registerOutboxShowCommand } from './show.js';

/** Reading the development outbox, one file per subcommand. */
export function registerOutboxCommands(program: Command): void {
  const outbox = program
    .command('outbox')
    .description('read the mail written to the development outbox (outside production, with no SMTP or mail API): list it, show one')
    .addHelpText(
      'after',
      '\nExamples:\n  $ eventops outbox list\n  $ eventops outbox show 3\n  $ eventops outbox show\n\n' +
        'Messages are numbered from the oldest, 1; a number keeps naming the same message as more mail arrives.',
    );
  registerOutboxListCommand(outbox);
  registerOutboxShowCommand(outbox);
}
