import type { Command } from 'commander';
import { printResult, withContext } from '../io.js';

export function registerSetupCommand(program: Command): void {
  program
    .command('setup')
    .description('create the first ADMIN user; refused once any user exists')
    .requiredOption('--email <email>', 'email address of the first administrator')
    .requiredOption('--name <name>', 'full name of the first administrator')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExample:\n  $ eventops setup --email office@gracechurch.org --name "Jane Citizen"\n\nExit 0 when created, 1 when users already exist (setup_closed), 2 for a missing or invalid option.',
    )
    .action(async (options: { email: string; name: string; json?: boolean }) => {
      const { createFirstAdmin } = await import('../../office/users.js');
      await withContext(async (ctx) => {
        const user = await createFirstAdmin(ctx, { email: options.email, name: options.name });
        printResult(options, { user }, `created the first ADMIN: ${user.name} <${user.email}>`);
      });
    });
}
