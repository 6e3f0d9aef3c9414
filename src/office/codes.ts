import type { AppContext } from '../context.js';
import { AppError, NotFoundError, UsageError } from '../errors.js';
import { MAX_REGISTRATION_TOTAL_MINOR } from '../registrations/event-pricing.js';
import type { EventRecord } from '../registrations/event-record.js';
import { CODE_PATTERN, codeUsesSql, findCode, type CodeRow } from '../registrations/codes.js';
import { getEventBySlug } from './events.js';
import { localDay } from '../local-time.js';
import { moneyFormatter } from '../money-format.js';

/**
 * The office's codes for an event (`eventops codes create|list|disable`). A code is unique per event whatever its
 * case; it gives a percent or an amount off, or a price for a tier, or only reveals a hidden tier (one of these,
 * plus the reveal); it may be limited to some tiers, a number of uses and a last day. A use is one registration.
 */

export type CodesContext = Pick<AppContext, 'db' | 'clock' | 'config'>;

export interface NewCode {
  eventSlug: string;
  code: string;
  percent?: number;
  amount?: number;
  /** A price per tier id. */
  prices?: Record<string, number>;
  maxUses?: number;
  /** The last church-local day it may be used (yyyy-MM-dd, inclusive). */
  validUntil?: string;
  tiers?: string[];
  reveals?: string;
  note?: string;
  actor: string;
}

export interface CodeLine {
  code: string;
  event: string;
  /** What it does, in words: "10% off", "$20.00 off", "infant at $0.00", "reveals leaders". */
  effect: string;
  percent: number | null;
  amountMinor: number | null;
  prices: Record<string, number> | null;
  tiers: string[] | null;
  reveals: string | null;
  maxUses: number | null;
  /** Live: registrations PENDING or PAID with it, and card checkouts holding it. */
  uses: number;
  /** What it took off the registrations (PENDING and PAID) that used it, in minor units. */
  discountedMinor: number;
  validUntil: string | null;
  state: 'active' | 'disabled' | 'expired' | 'used up';
  note: string | null;
  createdAt: string;
  createdBy: string;
  disabledAt: string | null;
}

async function liveEvent(ctx: CodesContext, slug: string): Promise<EventRecord> {
  const event = await getEventBySlug(ctx.db, slug);
  if (!event) throw new NotFoundError(`event "${slug}"`, 'run `eventops events list` to see the slugs');
  return event;
}

/** Every problem of a new code against its event, each naming its option. */
function problemsOf(event: EventRecord, input: NewCode): string[] {
  const problems: string[] = [];
  const tierIds = new Set(event.pricing.tiers.map((tier) => tier.id));
  const known = [...tierIds].join(', ');
  if (!CODE_PATTERN.test(input.code)) problems.push('--code must be 1 to 40 letters, digits, - or _, e.g. STAFF26');
  const effects = [input.percent, input.amount, input.prices].filter((effect) => effect !== undefined).length;
  if (effects > 1) problems.push('give one of --percent, --amount and --price');
  if (effects === 0 && input.reveals === undefined) problems.push('give one of --percent, --amount and --price, or --reveals for a code that only shows a hidden tier');
  if (input.percent !== undefined && (!(input.percent > 0 && input.percent <= 100) || Math.abs(input.percent * 100 - Math.round(input.percent * 100)) > 1e-6)) {
    problems.push('--percent must be more than 0 and at most 100, with at most 2 decimals');
  }
  if (input.amount !== undefined && (!Number.isInteger(input.amount) || input.amount < 1 || input.amount > MAX_REGISTRATION_TOTAL_MINOR)) {
    problems.push(`--amount must be a whole number of minor units from 1 to ${MAX_REGISTRATION_TOTAL_MINOR} (e.g. 2000 for $20.00)`);
  }
  for (const [tier, price] of Object.entries(input.prices ?? {})) {
    if (!tierIds.has(tier)) problems.push(`--price names the tier "${tier}", which ${event.slug} does not have (its tiers: ${known})`);
    if (!Number.isInteger(price) || price < 0 || price > MAX_REGISTRATION_TOTAL_MINOR) problems.push(`--price ${tier}= must be a whole number of minor units from 0 to ${MAX_REGISTRATION_TOTAL_MINOR}`);
  }
  for (const tier of input.tiers ?? []) {
    if (!tierIds.has(tier)) problems.push(`--tiers names "${tier}", which ${event.slug} does not have (its tiers: ${known})`);
  }
  if (input.reveals !== undefined) {
    const revealed = event.pricing.tiers.find((tier) => tier.id === input.reveals);
    if (!revealed) problems.push(`--reveals names "${input.reveals}", which ${event.slug} does not have (its tiers: ${known})`);
    else if (!revealed.hidden) problems.push(`--reveals names "${input.reveals}", which is not hidden: mark it "hidden": true in the event file first`);
  }
  if (input.maxUses !== undefined && (!Number.isInteger(input.maxUses) || input.maxUses < 1)) problems.push('--max-uses must be a whole number, at least 1');
  return problems;
}

/** Creates a code for the event; refused, naming each problem, when it is not valid or the event has it already (in any case). */
export async function createCode(ctx: CodesContext, input: NewCode): Promise<CodeLine> {
  const event = await liveEvent(ctx, input.eventSlug);
  const problems = problemsOf(event, input);
  if (problems.length > 0) throw new UsageError(`the code is not valid: ${problems.join('; ')}`, 'see `eventops codes create --help`');
  const now = ctx.clock.now();
  const inserted = await ctx.db.transaction(async (trx) => {
    if (await findCode(trx, event.id, input.code)) throw codeExists(input.code, event.slug);
    const [row] = await trx('discount_codes')
      .insert({
        event_id: event.id,
        code: input.code,
        percent: input.percent ?? null,
        amount_minor: input.amount ?? null,
        tier_prices: input.prices ? JSON.stringify(input.prices) : null,
        max_uses: input.maxUses ?? null,
        valid_until: input.validUntil ?? null,
        tiers: input.tiers ? JSON.stringify(input.tiers) : null,
        reveals: input.reveals ?? null,
        note: input.note ?? null,
        created_by: input.actor,
        created_at: now,
      })
      .returning<CodeRow[]>('*')
      .catch((error: unknown) => {
        // Created by someone else between the check and the insert: the unique index (event, lower(code)) says so.
        if ((error as { code?: string }).code === '23505') throw codeExists(input.code, event.slug);
        throw error;
      });
    return row as CodeRow;
  });
  return (await describeCodes(ctx, event, [inserted]))[0] as CodeLine;
}

function codeExists(code: string, slug: string): AppError {
  return new AppError('code_exists', `${slug} already has the code ${code} (codes are the same whatever their case)`, {
    exitCode: 1,
    suggestion: `choose another code, or see them with \`eventops codes list --event ${slug}\``,
  });
}

/** Every code of the event, newest last, with its live uses and what it took off. */
export async function listCodes(ctx: CodesContext, slug: string): Promise<{ event: EventRecord; codes: CodeLine[] }> {
  const event = await liveEvent(ctx, slug);
  const rows = await ctx.db('discount_codes').where({ event_id: event.id }).orderBy('created_at').orderBy('code').select<CodeRow[]>('*');
  return { event, codes: await describeCodes(ctx, event, rows) };
}

/** Disables the event's code (whatever the case it is typed in): no registration may use it from now; those made with it keep it. */
export async function disableCode(ctx: CodesContext, input: { eventSlug: string; code: string; actor: string }): Promise<CodeLine & { alreadyDisabled: boolean }> {
  const event = await liveEvent(ctx, input.eventSlug);
  const row = await findCode(ctx.db, event.id, input.code);
  if (!row) throw new NotFoundError(`code ${input.code} of ${event.slug}`, `see the event's codes with \`eventops codes list --event ${event.slug}\``);
  const [disabled] = await ctx.db('discount_codes')
    .where({ id: row.id })
    .whereNull('disabled_at')
    .update({ disabled_at: ctx.clock.now(), disabled_by: input.actor })
    .returning<CodeRow[]>('*');
  const line = (await describeCodes(ctx, event, [disabled ?? row]))[0] as CodeLine;
  return { ...line, alreadyDisabled: !disabled };
}

/** The codes as the office reads them: each with its live uses (at the app clock's now) and what it took off. */
async function describeCodes(ctx: CodesContext, event: EventRecord, rows: CodeRow[]): Promise<CodeLine[]> {
  if (rows.length === 0) return [];
  const now = ctx.clock.now();
  const counted = await ctx.db.raw<{ rows: Array<{ id: string; uses: string | number; discounted: string | number }> }>(
    `SELECT d.id, ${codeUsesSql('d.id', '?')} AS uses,
            (SELECT COALESCE(sum(r.code_discount_minor), 0) FROM registrations r WHERE r.code_id = d.id AND r.status IN ('PENDING','PAID')) AS discounted
       FROM discount_codes d WHERE d.id = ANY(?::uuid[])`,
    [now, rows.map((row) => row.id)],
  );
  const byId = new Map(counted.rows.map((row) => [row.id, { uses: Number(row.uses), discounted: Number(row.discounted) }]));
  const today = localDay(now, ctx.config.regional.timeZone);
  return rows.map((row) => {
    const { uses, discounted } = byId.get(row.id) ?? { uses: 0, discounted: 0 };
    const state: CodeLine['state'] =
      row.disabled_at !== null ? 'disabled' : row.valid_until !== null && today > row.valid_until ? 'expired' : row.max_uses !== null && uses >= row.max_uses ? 'used up' : 'active';
    return {
      code: row.code,
      event: event.slug,
      effect: effectOf(row, moneyFormatter(ctx.config.regional)),
      percent: row.percent === null ? null : Number(row.percent),
      amountMinor: row.amount_minor,
      prices: row.tier_prices,
      tiers: row.tiers,
      reveals: row.reveals,
      maxUses: row.max_uses,
      uses,
      discountedMinor: discounted,
      validUntil: row.valid_until,
      state,
      note: row.note,
      createdAt: row.created_at.toISOString(),
      createdBy: row.created_by,
      disabledAt: row.disabled_at?.toISOString() ?? null,
    };
  });
}

/** What a code does, in words. */
function effectOf(row: CodeRow, money: (minor: number) => string): string {
  const parts: string[] = [];
  if (row.percent !== null) parts.push(`${Number(row.percent)}% off`);
  if (row.amount_minor !== null) parts.push(`${money(row.amount_minor)} off`);
  if (row.tier_prices) parts.push(Object.entries(row.tier_prices).map(([tier, price]) => `${tier} at ${money(price)}`).join(', '));
  if (row.tiers) parts.push(`on ${row.tiers.join(', ')} tickets`);
  if (row.reveals) parts.push(`reveals ${row.reveals}`);
  return parts.join(' ');
}
