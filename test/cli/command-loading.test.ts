import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMAND_MODULES, registerCommands } from '../../src/cli/commands/index.js';
import { buildProgram } from '../../src/cli/main.js';

const names = (program: Command) => program.commands.map((command) => command.name());

describe('command loading: a command loads only its own module', () => {
  it('each module registers exactly the top-level commands the table names for it', async () => {
    for (const module of COMMAND_MODULES) {
      const program = new Command('eventops');
      (await module.load())(program);
      expect(names(program)).toEqual([...module.names]);
    }
  });

  it('a cron job registers only the job commands, an office command only its own group', async () => {
    expect(names(await buildProgram(['node', 'eventops', 'sweep-checkouts', '--json']))).toEqual([
      'send-reminders',
      'sweep-checkouts',
      'send-celebrations',
      'send-clearance-digest',
      'error-issues',
      'purge-answers',
    ]);
    expect(names(await buildProgram(['node', 'eventops', 'registrations', 'list']))).toEqual(['registrations']);
  });

  it('help, version, an unknown command and no command register every command, in the table’s order', async () => {
    const every = COMMAND_MODULES.flatMap((module) => module.names);
    for (const args of [['--help'], ['-V'], ['help', 'serve'], ['sweep-checkout'], []]) {
      const program = new Command('eventops');
      await registerCommands(program, ['node', 'eventops', ...args]);
      expect(names(program), args.join(' ')).toEqual(every);
    }
  });
});
