import type { Command } from 'commander';
import { z } from 'zod';
import { mailAddress } from '../../../contact-rules.js';
import type { CelebrationsPerson } from '../../../office/people/celebrations.js';
import { UsageError } from '../../../errors.js';
import { printResult, withContext } from '../../io.js';

const optionsSchema = z
  .object({
    email: z.string().trim().pipe(mailAddress('is not a valid email address')),
    off: z.boolean().optional(),
    on: z.boolean().optional(),
    note: z.string().trim().min(1, { error: 'must not be empty' }).max(2000, { error: 'at most 2000 characters' }).optional(),
    json: z.boolean().optional(),
  })
  .refine((options) => Boolean(options.off) !== Boolean(options.on), { error: 'give exactly one of --off and --on' })
  // Nothing keeps a note while the emails are on: refused rather than dropped without a word.
  .refine((options) => !(options.on && options.note !== undefined), { error: 'goes with --off only (it says why they are off)', path: ['note'] });

export function registerCelebrationsCommand(people: Command): void {
  people
    .command('celebrations')
    .description("turn a person's birthday and anniversary emails off or on again (the people import never changes this)")
    .argument('<email>', "the person's email, as in the people file")
    .option('--off', 'no more birthday email to them, and no anniversary email to them and their spouse')
    .option('--on', 'send them again')
    .option('--note <text>', 'with --off: why, shown by `people list`')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ eventops people celebrations john.smith@example.org --off --note "died in October 2026"
  $ eventops people celebrations john.smith@example.org --on

Turning off one spouse stops the couple's anniversary email; the other spouse's own birthday
email goes on. A member turns their own off with the unsubscribe link in every one of these
emails; \`eventops people list\` shows whose are off, since when and how. Exit 1 when no
person has this email or the emails are already off (or on), 2 for a malformed email or
option.`,
    )
    .action(async (email: string, raw: Record<string, unknown>) => {
      const parsed = optionsSchema.safeParse({ ...raw, email });
      if (!parsed.success) {
        const named = (path: PropertyKey[]) => (path.length === 0 ? '' : path[0] === 'email' ? '<email> ' : `--${path.join('.')} `);
        const problems = parsed.error.issues.map((issue) => `${named(issue.path)}${issue.message}`);
        throw new UsageError(`invalid arguments: ${problems.join('; ')}`, 'see `eventops people celebrations --help`');
      }
      const options = parsed.data;
      await withContext(async (ctx) => {
        const { setCelebrationsByEmail } = await import('../../../office/people/celebrations.js');
        const person = await setCelebrationsByEmail(ctx, { email: options.email, off: Boolean(options.off), note: options.note });
        printResult(options, { person }, describe(person));
      });
    });
}

function describe(person: CelebrationsPerson): string {
  const who = `${person.name}${person.email ? ` <${person.email}>` : ''}`;
  if (!person.celebrationsOff) return `celebration emails to ${who} are on again`;
  const couple = person.spouse ? `, nor an anniversary email to them and ${person.spouse}` : '';
  return `celebration emails to ${who} are off: no birthday email${couple}`;
}
