import { Option, type Command } from 'commander';
import { USER_ROLES } from '../../office/users.js';
import { printResult, withContext } from '../io.js';

export function registerUsersCommands(program: Command): void {
  const users = program.command('users').description('people who administer eventops and receive its operations mail');
  users
    .command('add')
    .description('add a user with a role')
    .requiredOption('--email <email>', 'email address')
    .requiredOption('--name <name>', 'full name')
    .addOption(new Option('--role <role>', 'role').choices(USER_ROLES).makeOptionMandatory())
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExample:\n  $ eventops users add --email pastor@gracechurch.org --name "Sam Lee" --role PASTOR\n\nExit 1 when a user with that email exists (user_exists), 2 for a missing or invalid option.',
    )
    .action(async (options: { email: string; name: string; role: string; json?: boolean }) => {
      const { addUser } = await import('../../office/users.js');
      await withContext(async (ctx) => {
        const user = await addUser(ctx, options);
        printResult(options, { user }, `added ${user.role} ${user.name} <${user.email}>`);
      });
    });
  users
    .command('list')
    .description('list users with their roles')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExample:\n  $ eventops users list --json')
    .action(async (options: { json?: boolean }) => {
      const { listUsers } = await import('../../office/users.js');
      await withContext(async (ctx) => {
        const all = await listUsers(ctx);
        printResult(
          options,
          { users: all },
          all.length === 0 ? 'no users yet; run `eventops setup --email E --name N`' : all.map((u) => `${u.role.padEnd(6)} ${u.name} <${u.email}>`),
        );
      });
    });
}
