import type { Command } from 'commander';
import { z } from 'zod';
import type { UpdateContactResult } from '../../../office/registrations/update-contact.js';
import { contactEmail, contactMobile } from '../../../contact-rules.js';
import { UsageError } from '../../../errors.js';
import { printResult, withContext } from '../../io.js';
import { parseOrUsage } from '../../usage.js';
import { noteSchema, operatingSystemUser, REGISTRATION_ARGUMENT } from './shared.js';

// The public form's rules: an address the office types in must be one the form would have taken.
const optionsSchema = z.object({
  email: contactEmail('is required').optional(),
  mobile: contactMobile('must be a phone number, or "" to remove it').optional(),
  note: noteSchema,
  json: z.boolean().optional(),
});

export function registerUpdateContactCommand(registrations: Command): void {
  registrations
    .command('update-contact')
    .description("correct a registration's contact email or mobile (a mistyped address), before `resend`")
    .argument('<id-or-reference>', REGISTRATION_ARGUMENT)
    .option('--email <email>', 'the correct email address')
    .option('--mobile <mobile>', 'the correct mobile; "" removes it')
    .option('--note <text>', 'why, kept in the history (the addresses are not)')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      `
Example:
  $ eventops registrations update-contact 3F2A9C1B --email sam@example.org --note "receipt bounced"
  $ eventops registrations resend 3F2A9C1B

The address is checked as the public form checks it. Nothing is sent: \`resend\` sends the
confirmation or receipt again, to the new address. A cancelled registration is corrected
too (nothing is sent to it). Exit 1 when the contact is already so or no registration
matches, 2 for an address the form would refuse.`,
    )
    .action(async (given: string, raw: Record<string, unknown>) => {
      const options = parseOrUsage(optionsSchema, raw, 'registrations update-contact');
      if (options.email === undefined && options.mobile === undefined) {
        throw new UsageError('give --email, --mobile or both', 'see `eventops registrations update-contact --help`');
      }
      await withContext(async (ctx) => {
        const { updateRegistrationContact } = await import('../../../office/registrations/update-contact.js');
        const result = await updateRegistrationContact(ctx, {
          registration: given,
          email: options.email,
          mobile: options.mobile,
          note: options.note,
          actor: operatingSystemUser(),
        });
        printResult(options, { contact: result }, describe(result));
      });
    });
}

function describe(result: UpdateContactResult): string[] {
  const { email, mobile } = result.changed;
  const changes = [
    email ? `email ${email.from} → ${email.to}` : undefined,
    mobile ? (mobile.to === null ? `mobile ${mobile.from} removed` : `mobile ${mobile.from ?? 'none'} → ${mobile.to}`) : undefined,
  ].filter((change): change is string => change !== undefined);
  return [
    `updated the contact of ${result.reference}: ${changes.join('; ')}`,
    result.status === 'CANCELLED'
      ? 'It is cancelled: nothing is sent to it. Register them again with `eventops registrations add` if they are coming.'
      : `Nothing was sent: \`eventops registrations resend ${result.reference}\` sends the confirmation or receipt again, to the new address.`,
  ];
}
