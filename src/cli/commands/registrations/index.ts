import type { Command } from 'commander';
import { registerAddCommand } from './add.js';
import { registerBalancesCommand } from './balances.js';
import { registerCreditCommand } from './credit.js';
import { registerCancelCommand } from './cancel.js';
import { registerExportCommand } from './export.js';
import { registerHelpCommand } from './help.js';
import { registerListCommand } from './list.js';
import { registerMarkPaidCommand } from './mark-paid.js';
import { registerRecordRefundCommand } from './record-refund.js';
import { registerResendCommand } from './resend.js';
import { registerRollCommand } from './roll.js';
import { registerShowCommand } from './show.js';
import { registerUpdateContactCommand } from './update-contact.js';

/** The office's everyday commands on registrations, one file each. */
export function registerRegistrationsCommands(program: Command): void {
  const registrations = program
    .command('registrations')
    .description('who is coming: list, show, export, record bank transfers, cancel, record a refund paid by hand, help with the cost, balances, register by hand, correct a contact, resend');
  registerListCommand(registrations);
  registerShowCommand(registrations);
  registerExportCommand(registrations);
  registerMarkPaidCommand(registrations);
  registerCancelCommand(registrations);
  registerRecordRefundCommand(registrations);
  registerCreditCommand(registrations);
  registerHelpCommand(registrations);
  registerBalancesCommand(registrations);
  registerAddCommand(registrations);
  registerUpdateContactCommand(registrations);
  registerResendCommand(registrations);
  registerRollCommand(registrations);
}
