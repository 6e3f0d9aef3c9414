import type { Command } from 'commander';
import { z } from 'zod';
import { UsageError } from '../../../errors.js';
import { printResult, withContext } from '../../io.js';
import { parseOrUsage } from '../../usage.js';
import { noteSchema, operatingSystemUser, REGISTRATION_ARGUMENT } from './shared.js';

const optionsSchema = z.object({
  decided: z.boolean().optional(),
  note: noteSchema,
  json: z.boolean().optional(),
});

export function registerHelpCommand(registrations: Command): void {
  registrations
    .command('help')
    .description('close a family\'s request to talk about help with the cost when no help or payment is recorded (--decided)')
    // Optional, so that `registrations help` and `registrations help <command>` still mean what they mean in every
    // other group: the help of the group, or of the command named.
    .argument('[id-or-reference]', REGISTRATION_ARGUMENT)
    .option('--decided', 'the office has decided: the family pays as usual (help declined, or not needed)')
    .option('--note <text>', 'kept in the history, e.g. "spoke to the family; they will pay by 1 May"')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ eventops registrations help 3F2A9C1B --decided --note "family will pay in two transfers"

Without a reference it prints the help of \`registrations\`; with a command's name, that command's help.

A family that ticked "We would like to talk about help with the cost" is registered awaiting
payment, and its places are held without the unpaid-hold release until the office decides.
Recording help (\`registrations credit\`) or a payment (\`registrations mark-paid\`) decides it
too. Once decided, the event's unpaid hold (if any) runs again, counted from the decision.
The request's alert is resolved with it. \`registrations show\`, \`list\` and \`balances\` say
which requests are open.
Exit 1 when there is no open request, 2 without --decided.`,
    )
    .action(async (given: string | undefined, raw: Record<string, unknown>, command: Command) => {
      const options = parseOrUsage(optionsSchema, raw, 'registrations help');
      const group = command.parent ?? registrations;
      if (given === undefined) {
        // With options, a script meant to decide a request and forgot which: that must not pass for success.
        if (Object.values(options).some((value) => value !== undefined)) {
          throw new UsageError('name the registration whose request is decided', 'eventops registrations help <reference> --decided');
        }
        return group.help();
      }
      const named = group.commands.find((sub) => sub.name() === given);
      if (named) return named.help();
      if (!options.decided) throw new UsageError('say what was decided: --decided closes the request without help recorded', 'to record help, use `eventops registrations credit`');
      await withContext(async (ctx) => {
        const { decideHelpRequest } = await import('../../../office/registrations/help.js');
        const result = await decideHelpRequest(ctx, { registration: given, note: options.note, actor: operatingSystemUser() });
        printResult(options, { help: result }, `the request for help with the cost of ${result.reference} is decided; it is ${result.status} and pays as usual`);
      });
    });
}
