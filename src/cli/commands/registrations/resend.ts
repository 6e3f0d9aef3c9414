import type { Command } from 'commander';
import { printResult, withContext } from '../../io.js';
import { operatingSystemUser, REGISTRATION_ARGUMENT } from './shared.js';

export function registerResendCommand(registrations: Command): void {
  registrations
    .command('resend')
    .description('send the confirmation (unpaid or free) or the receipt (paid) again')
    .argument('<id-or-reference>', REGISTRATION_ARGUMENT)
    .option('--new-link', 'renew the "Manage your registration" link first: every link sent before stops working')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  $ eventops registrations resend 3F2A9C1B\n  $ eventops registrations resend 3F2A9C1B --new-link\n\nExit 1 for a cancelled registration.',
    )
    .action(async (given: string, options: { json?: boolean; newLink?: boolean }) => {
      await withContext(async (ctx) => {
        const { resendRegistrationMail } = await import('../../../office/registrations/resend.js');
        const result = await resendRegistrationMail(ctx, { registration: given, actor: operatingSystemUser(), newLink: options.newLink });
        const renewed = result.newLink ? ', with a new manage link (the old one no longer works)' : '';
        printResult(options, { resent: result }, `queued the ${result.sent} of ${result.reference} again${renewed}`);
      });
    });
}
