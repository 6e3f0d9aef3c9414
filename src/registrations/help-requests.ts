import type { Knex } from 'knex';
import { recordHistory } from './history.js';

/**
 * A family's request to talk about help with the cost (registrations.help_requested_at): open while it is asked,
 * not decided and the registration PENDING. An open request keeps the places without the unpaid-hold release; the
 * office decides by recording a credit or a payment, or with `registrations help REF --decided`, which closes it
 * and resolves its alert. A paid or cancelled registration has no open request, whatever was decided.
 */

/** SQL: the registration aliased `alias` has an open help request. */
export const helpOpenSql = (alias: string) => `(${alias}.help_requested_at IS NOT NULL AND ${alias}.help_decided_at IS NULL AND ${alias}.status = 'PENDING')`;

export interface HelpRequestState {
  requestedAt: Date | null;
  decidedAt: Date | null;
  decidedBy: string | null;
}

/** "open", "decided" or undefined (never asked), as show, list and balances say it. */
export function helpRequestWord(row: { help_requested_at?: Date | null; help_decided_at?: Date | null; status: string }): 'open' | 'decided' | undefined {
  if (!row.help_requested_at) return undefined;
  return row.help_decided_at || row.status !== 'PENDING' ? 'decided' : 'open';
}

/**
 * Closes the registration's request, in the caller's transaction (the registration's row lock held): records who
 * decided and when, and resolves its open alert with `how`. Nothing when there is no request or it was decided.
 * Returns whether it closed one.
 */
export async function closeHelpRequest(trx: Knex.Transaction, registrationId: string, input: { actor: string; now: Date; how: string; note?: string }): Promise<boolean> {
  const closed = await trx('registrations')
    .where({ id: registrationId })
    .whereNotNull('help_requested_at')
    .whereNull('help_decided_at')
    .update({ help_decided_at: input.now, help_decided_by: input.actor });
  if (closed === 0) return false;
  await trx('operations_alerts')
    .where({ kind: 'help_requested' })
    .whereNull('resolved_at')
    .whereRaw(`details->>'registrationId' = ?`, [registrationId])
    .update({ resolved_at: input.now, resolution: `help with the cost decided by ${input.actor}: ${input.how}` });
  await recordHistory(trx, { registrationId, action: 'help_decided', changes: { how: input.how }, note: input.note, actor: input.actor, now: input.now });
  return true;
}
