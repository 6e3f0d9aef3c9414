import type { Knex } from 'knex';
import type { AppContext } from '../context.js';
import { enqueueMail } from '../mail/queue.js';
import { loadEmailBranding } from '../mail/render.js';
import { paymentReference } from '../registrations/reference.js';
import { cancellationNoticeEmail, holdEndingEmail, type HoldEndingData } from './templates/registration-notices.js';

type NoticeContext = Pick<AppContext, 'config' | 'cipher'>;

export interface NoticeRecipient {
  registrationId: string;
  name: string;
  email: string;
  event: { title: string; startsAt: Date };
}

/** Queues the cancellation notice in the caller's transaction, so it exists exactly when the cancellation does. */
export async function queueCancellationNotice(
  trx: Knex.Transaction,
  ctx: NoticeContext,
  to: NoticeRecipient,
  input: { holdReleased: boolean; paid: boolean; byRegistrant?: boolean },
  now: Date,
): Promise<number> {
  const branding = await loadEmailBranding(trx, ctx.config);
  const rendered = cancellationNoticeEmail(
    {
      name: to.name,
      eventTitle: to.event.title,
      eventStartsAt: to.event.startsAt,
      reference: paymentReference(to.registrationId),
      holdReleased: input.holdReleased,
      paid: input.paid,
      byRegistrant: input.byRegistrant ?? false,
    },
    branding,
  );
  return enqueueMail(
    trx,
    ctx.cipher,
    {
      kind: input.holdReleased ? 'hold-released' : 'cancellation',
      registrationId: to.registrationId,
      message: { to: [to.email], ...rendered, idempotencyKey: `cancellation-${to.registrationId}` },
    },
    now,
  );
}

/** Queues "your hold ends tomorrow" in the caller's transaction. */
export async function queueHoldEndingReminder(
  trx: Knex.Transaction,
  ctx: NoticeContext,
  to: NoticeRecipient,
  input: Pick<HoldEndingData, 'balanceMinor' | 'releaseAt' | 'payNowUrl' | 'manageUrl'>,
  now: Date,
): Promise<number> {
  const branding = await loadEmailBranding(trx, ctx.config);
  const rendered = holdEndingEmail(
    { name: to.name, eventTitle: to.event.title, eventStartsAt: to.event.startsAt, reference: paymentReference(to.registrationId), ...input },
    branding,
  );
  return enqueueMail(
    trx,
    ctx.cipher,
    { kind: 'hold-ending', registrationId: to.registrationId, message: { to: [to.email], ...rendered, idempotencyKey: `hold-ending-${to.registrationId}` } },
    now,
  );
}
