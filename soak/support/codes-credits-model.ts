import type { Db } from '../../src/db/connect.js';
import { createCode } from '../../src/office/codes.js';
import { codeUses } from '../../src/registrations/codes.js';
import type { EventRecord } from '../../src/registrations/event-record.js';
import type { PaymentsHarness } from '../../test/support/payments-harness.js';

/**
 * The model's side of codes with a limit and of help with the cost, for the model-based interleavings: what the
 * model itself did (which registrations and checkouts were made with a code, which credits and reversals were
 * recorded), checked after every step against the database's live code uses and the ledger's view.
 */

/** The most uses of each interleaving code: small, so runs reach the last use and its refusal often. */
export const CODE_MAX_USES = 2;

export interface ModelCode {
  id: string;
  /** As the office created it; typed back in another case. */
  text: string;
  eventId: string;
  /** Registrations the model made with the code (bank transfer, the office). */
  registrations: string[];
  /** New registrations' card checkouts the model started with the code (their registration, once paid, holds the use). */
  checkouts: string[];
}

export interface ModelCredit {
  registrationId: string;
  creditId: number;
  amountMinor: number;
  reversed: boolean;
}

export interface CodesCreditsModel {
  codes: ModelCode[];
  credits: ModelCredit[];
}

/** One code with a limit on the event with room for 2 (which releases unpaid holds) and one on the event without a limit. */
export async function createModelCodes(harness: PaymentsHarness, events: EventRecord[]): Promise<ModelCode[]> {
  const codes: ModelCode[] = [];
  for (const [index, terms] of [
    [1, { percent: 10 }],
    [3, { amount: 1500 }],
  ] as const) {
    const event = events[index] as EventRecord;
    const text = `FEW${index}`;
    const line = await createCode(harness.ctx, { eventSlug: event.slug, code: text, maxUses: CODE_MAX_USES, actor: 'model-office', ...terms });
    const row = await harness.tdb.db('discount_codes').where({ event_id: event.id, code: line.code }).first<{ id: string }>('id');
    codes.push({ id: row.id, text, eventId: event.id, registrations: [], checkouts: [] });
  }
  return codes;
}

/** Credited less reversed, per registration, as the model recorded them. */
function modelCredited(model: CodesCreditsModel): Map<string, number> {
  const credited = new Map<string, number>();
  for (const credit of model.credits) {
    if (!credit.reversed) credited.set(credit.registrationId, (credited.get(credit.registrationId) ?? 0) + credit.amountMinor);
  }
  return credited;
}

/**
 * After every step:
 * - each code's live uses are never above its limit, and are exactly the holders the model made that still hold
 *   (a registration PENDING or PAID, a checkout open and unexpired, a paid checkout's registration): a use taken
 *   by anything else, kept after a cancellation, expiry or release, or given back twice, shows as a difference;
 * - the ledger's view (registration_money) credits each registration what the model credited less what it
 *   reversed, every cent of help is in the credits table once, and a balance is total − paid − credited while PENDING.
 */
export async function checkCodesAndCredits(db: Db, model: CodesCreditsModel, now: Date): Promise<void> {
  for (const code of model.codes) {
    const live = await codeUses(db, code.id, now);
    if (live > CODE_MAX_USES) throw new Error(`code ${code.text} has ${live} live uses, above its limit of ${CODE_MAX_USES}`);
    const checkouts = code.checkouts.length > 0 ? await db('checkout_sessions').whereIn('id', code.checkouts).select<Array<{ status: string; expires_at: Date; registration_id: string | null }>>('status', 'expires_at', 'registration_id') : [];
    const holding = checkouts.filter((c) => c.status === 'OPEN' && c.expires_at > now).length;
    const registrationIds = [...code.registrations, ...checkouts.flatMap((c) => (c.registration_id ? [c.registration_id] : []))];
    const held = registrationIds.length > 0 ? await db('registrations').whereIn('id', registrationIds).whereIn('status', ['PENDING', 'PAID']).pluck('id') : [];
    if (live !== holding + held.length) {
      throw new Error(`code ${code.text}: ${live} live uses, but the model's holders hold ${holding + held.length} (${holding} open checkouts, ${held.length} registrations)`);
    }
    const stray = await db('registrations').where({ code_id: code.id }).whereNotIn('id', registrationIds.length > 0 ? registrationIds : ['00000000-0000-0000-0000-000000000000']).pluck('id');
    if (stray.length > 0) throw new Error(`code ${code.text} is named by registrations the model never made with it: ${stray.join(', ')}`);
  }

  const expected = modelCredited(model);
  const rows = await db('registration_money as m')
    .join('registrations as r', 'r.id', 'm.registration_id')
    .select<Array<{ id: string; status: string; total_minor: number; paid_minor: number; credited_minor: number; balance_minor: number }>>(
      'r.id',
      'r.status',
      'm.total_minor',
      'm.paid_minor',
      'm.credited_minor',
      'm.balance_minor',
    );
  let viewCredited = 0;
  for (const row of rows) {
    const credited = Number(row.credited_minor);
    viewCredited += credited;
    if (credited !== (expected.get(row.id) ?? 0)) throw new Error(`registration ${row.id}: the ledger credits ${credited}, the model ${expected.get(row.id) ?? 0}`);
    const owed = Number(row.total_minor) - Number(row.paid_minor) - credited;
    if (row.status === 'PENDING' && Number(row.balance_minor) !== owed) throw new Error(`registration ${row.id}: balance ${row.balance_minor}, but total − paid − credited is ${owed}`);
    if (row.status !== 'PENDING' && Number(row.balance_minor) !== 0) throw new Error(`registration ${row.id} is ${row.status} with a balance of ${row.balance_minor}`);
  }
  const table = await db('registration_credits')
    .select(db.raw(`COALESCE(SUM(CASE WHEN kind = 'credit' THEN amount_minor ELSE -amount_minor END), 0) AS net`))
    .first<{ net: string | number }>();
  const modelTotal = [...expected.values()].reduce((sum, amount) => sum + amount, 0);
  if (Number(table.net) !== modelTotal || viewCredited !== modelTotal) {
    throw new Error(`help with the cost: the model credited ${modelTotal}, the credits table nets ${String(table.net)}, the ledger's view ${viewCredited}`);
  }
}
