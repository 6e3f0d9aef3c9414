import type { Knex } from 'knex';
import type { AppContext } from '../context.js';
import type { EventRecord } from '../registrations/event-record.js';
import { paymentReference } from '../registrations/reference.js';
import { raiseOperationsAlert } from './alerts.js';

type AlertContext = Pick<AppContext, 'config' | 'clock' | 'logger' | 'cipher'>;

/**
 * The office is told of a family asking to talk about help with the cost as of other things a person must
 * decide (a registrant asking to cancel a paid registration): an operations alert, emailed to every ADMIN in the
 * registration's transaction, naming the reference. Deciding closes it (registrations/help-requests.ts).
 */
export async function alertHelpRequested(
  trx: Knex.Transaction,
  ctx: AlertContext,
  event: Pick<EventRecord, 'id' | 'slug' | 'title'>,
  registrationId: string,
  contact: { name: string; email: string },
): Promise<void> {
  const reference = paymentReference(registrationId);
  await raiseOperationsAlert(trx, ctx, {
    kind: 'help_requested',
    reason: `the family of registration ${reference} for "${event.title}" would like to talk about help with the cost; it is held, without the unpaid-hold release, until the office decides`,
    details: { registrationId, reference, eventId: event.id, event: event.slug },
    payer: contact,
  });
}
