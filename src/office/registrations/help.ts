import { AppError } from '../../errors.js';
import { localMinute } from '../../local-time.js';
import { closeHelpRequest } from '../../registrations/help-requests.js';
import { paymentReference } from '../../registrations/reference.js';
import { lockRegistration, resolveRegistrationId } from './lookup.js';
import type { OfficeContext } from './mark-paid.js';

export interface DecideHelpInput {
  registration: string;
  note?: string;
  actor: string;
}

export interface DecideHelpResult {
  registrationId: string;
  reference: string;
  decidedAt: Date;
  /** The day the unpaid hold now releases it, when the event has one (N days from the decision). */
  status: string;
}

/** A request that cannot be decided: none was made, it was decided, or the registration owes nothing. */
export class HelpNotOpenError extends AppError {
  constructor(message: string, suggestion?: string) {
    super('help_not_open', message, { exitCode: 1, suggestion });
    this.name = 'HelpNotOpenError';
  }
}

/**
 * `registrations help REF --decided`: the office decided a family's request for help with the cost without recording
 * help or a payment (the family will pay, or the help was declined). Closes the request and resolves its alert, under
 * the registration's row lock; the unpaid hold, if the event has one, then runs from now (hold-release.ts).
 */
export async function decideHelpRequest(ctx: OfficeContext, input: DecideHelpInput): Promise<DecideHelpResult> {
  const id = await resolveRegistrationId(ctx.db, input.registration);
  return ctx.db.transaction(async (trx) => {
    const registration = await lockRegistration(trx, id);
    const reference = paymentReference(id);
    const zone = ctx.config.regional.timeZone;
    if (!registration.help_requested_at) {
      throw new HelpNotOpenError(`the family of registration ${reference} did not ask about help with the cost; nothing was recorded`);
    }
    if (registration.help_decided_at) {
      throw new HelpNotOpenError(
        `the request for help of registration ${reference} was decided on ${localMinute(registration.help_decided_at, zone)} by ${registration.help_decided_by ?? '?'}; nothing was recorded`,
      );
    }
    if (registration.status !== 'PENDING') {
      throw new HelpNotOpenError(`registration ${reference} is ${registration.status === 'PAID' ? 'paid' : 'cancelled'}: its request for help is no longer open; nothing was recorded`);
    }
    const now = ctx.clock.now();
    await closeHelpRequest(trx, id, { actor: input.actor, now, how: 'decided without help recorded', note: input.note });
    return { registrationId: id, reference, decidedAt: now, status: registration.status };
  });
}
