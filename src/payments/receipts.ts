import type { Knex } from 'knex';
import type { AppContext } from '../context.js';
import type { QueuedMailInput } from '../mail/queue.js';
import { loadEmailBranding, type EmailBranding } from '../mail/render.js';
import { FIRST_MANAGE_LINK_VERSION, manageUrl } from './manage-link.js';
import { paymentReference } from '../registrations/reference.js';
import { listWords, paidByWords, type PaidByMethod } from '../registrations/paid-by.js';
import { receiptEmail } from './templates/receipt.js';

export interface ReceiptInput {
  registrationId: string;
  contact: { name: string; email: string };
  event: { title: string; startsAt: Date };
  lines: Array<{ label: string; amount: number }>;
  /** What was charged, minor units. */
  amountMinor: number;
  /** The card payment's reference at the provider; absent for money received by the office. */
  paymentIntentId?: string;
  paidAt: Date;
  /** How the money came; default card. */
  method?: ReceiptMethod;
  /** Names a payment recorded by the office (its row id), for the mail's idempotency key. */
  officePaymentKey?: string;
  /** What the office received by each method (officePaidByMethod): a receipt of money that came several ways names each. */
  paidBy?: PaidByMethod[];
  /** Help with the cost from named funds that settled part of the total (never money received). */
  help?: Array<{ fund: string; amountMinor: number }>;
  /** A payment of part of the total (a deposit, an instalment, a part the office received): what was paid in all so far, and what is left. */
  part?: { paidSoFarMinor: number; balanceLeftMinor: number };

  /** The registration's manage_link_version; renderReceipt reads it, a registration being created has the first. */
  manageLinkVersion?: number;
  /** A new card registration's non-sensitive answers (answerGroupsOf), listed as the confirmation lists them. */
  answerGroups?: Array<{ heading: string; answers: Array<{ label: string; value: string }> }>;
}

export type ReceiptMethod = 'card' | 'bank' | 'cash' | 'other';

const METHOD_WORDS: Record<ReceiptMethod, string> = {
  card: 'card payment',
  bank: 'bank transfer',
  cash: 'cash payment',
  other: 'payment',
};

/**
 * The receipt, rendered for the mail queue. The webhook renders it before it
 * takes the event's seat lock and queues it (enqueueMail) in the same
 * transaction that makes the registration PAID, so a registration never becomes
 * PAID without its receipt, a mail outage loses nothing, and the lock is held
 * only for the writes.
 */
export async function renderReceipt(
  db: Knex | Knex.Transaction,
  ctx: Pick<AppContext, 'config'>,
  input: ReceiptInput,
): Promise<QueuedMailInput> {
  const version = input.manageLinkVersion ?? (await currentManageLinkVersion(db, input.registrationId));
  return renderReceiptWith(await loadEmailBranding(db, ctx.config), ctx, { ...input, manageLinkVersion: version });
}

/** The same, with the branding already read. */
async function currentManageLinkVersion(db: Knex | Knex.Transaction, registrationId: string): Promise<number> {
  const row = await db('registrations').where({ id: registrationId }).first<{ manage_link_version: number } | undefined>('manage_link_version');
  return row?.manage_link_version ?? FIRST_MANAGE_LINK_VERSION;
}

export function renderReceiptWith(branding: EmailBranding, ctx: Pick<AppContext, 'config'>, input: ReceiptInput): QueuedMailInput {
  const hasPublicUrl = Boolean(ctx.config.authUrl ?? ctx.config.appUrl);
  const rendered = receiptEmail(
    {
      name: input.contact.name,
      eventTitle: input.event.title,
      eventStartsAt: input.event.startsAt,
      lines: input.lines.map(({ label, amount }) => ({ label, amount })),
      amountMinor: input.amountMinor,
      help: input.help && input.help.length > 0 ? input.help : undefined,
      ...(input.part ? { part: { ...input.part, owing: input.part.balanceLeftMinor > 0 } } : {}),
      paidAt: input.paidAt,
      paymentIntentId: input.paymentIntentId,
      ...methodsOf(input, ctx.config.regional),
      reference: paymentReference(input.registrationId),
      answerGroups: input.answerGroups,
      manageUrl: hasPublicUrl
        ? manageUrl(ctx.config, { registrationId: input.registrationId, version: input.manageLinkVersion ?? FIRST_MANAGE_LINK_VERSION })
        : undefined,
    },
    branding,
  );
  const key = input.paymentIntentId ?? `office-${input.officePaymentKey ?? input.registrationId}`;
  return {
    kind: 'receipt',
    registrationId: input.registrationId,
    message: { to: [input.contact.email], ...rendered, idempotencyKey: `receipt-${key}` },
  };
}

/** "bank transfer" for money that came one way; "bank transfer and cash payment" and the amount by each when it came several. */
function methodsOf(input: ReceiptInput, regional: { locale: string; currency: string }): { methodWords: string; paidByWords: string; several: boolean } {
  const paidBy = input.paidBy ?? [];
  if (paidBy.length < 2) {
    const words = METHOD_WORDS[paidBy[0]?.method ?? input.method ?? 'card'];
    return { methodWords: words, paidByWords: words, several: false };
  }
  return {
    methodWords: listWords(paidBy.map((part) => METHOD_WORDS[part.method]), regional.locale),
    paidByWords: paidByWords(paidBy, regional),
    several: true,
  };
}
