import type { AppContext } from '../context.js';
import { codeRefusal, codeTerms, codeUses, CODE_REFUSED_MESSAGE, findCode } from '../registrations/codes.js';
import type { CodeTerms } from '../registrations/pricing.js';
import type { EventRecord } from '../registrations/event-record.js';
import { localDay } from '../local-time.js';
import { moneyFormatter } from '../money-format.js';
import type { PublicClient } from '../client-key.js';
import { assertCodeGuessesLeft, CodeGuessLimitError, countRefusedCode } from '../signup/code-guesses.js';

/**
 * A code typed in the event page's "Have a code?" field (or carried by the form given back): judged as the
 * registration will judge it, without a lock and without the tickets (those are judged when the form is posted).
 * Usable: its terms price the page's live total and reveal its hidden tier. Not: the form's one message.
 */
export interface AppliedCode {
  /** As typed. */
  typed: string;
  /** Usable now: the code as the office wrote it, and what it does. */
  terms?: CodeTerms;
  /** What the page says of it: "STAFF26: 10% off" (and for which tickets). */
  note?: string;
  /** The one message for a code that cannot be used, whatever the reason. */
  error?: string;
}

/**
 * judgeTypedCode for a public connection: none past its guesses (it is told so, and nothing is judged), and each
 * refused code counted against them. The church's own networks are not limited.
 */
export async function judgeCodeFor(
  ctx: Pick<AppContext, 'db' | 'clock' | 'config'>,
  event: Pick<EventRecord, 'id' | 'pricing'>,
  typed: string,
  client: PublicClient,
): Promise<AppliedCode> {
  const guesser = client.churchNetwork ? undefined : client.key;
  if (guesser !== undefined) {
    try {
      await assertCodeGuessesLeft(ctx.db, guesser, ctx.clock.now());
    } catch (error) {
      if (error instanceof CodeGuessLimitError) return { typed, error: error.message };
      throw error;
    }
  }
  const judged = await judgeTypedCode(ctx, event, typed);
  if (judged.error && guesser !== undefined) await countRefusedCode(ctx.db, guesser, ctx.clock.now());
  return judged;
}

export async function judgeTypedCode(ctx: Pick<AppContext, 'db' | 'clock' | 'config'>, event: Pick<EventRecord, 'id' | 'pricing'>, typed: string): Promise<AppliedCode> {
  const now = ctx.clock.now();
  const row = await findCode(ctx.db, event.id, typed);
  const uses = row ? await codeUses(ctx.db, row.id, now) : 0;
  const tiers = event.pricing.tiers.map((tier) => tier.id);
  const refusal = codeRefusal(row, { day: localDay(now, ctx.config.regional.timeZone), tiers, uses });
  if (refusal || !row) return { typed, error: CODE_REFUSED_MESSAGE };
  const terms = codeTerms(row);
  return { typed, terms, note: codeNote(terms, event, moneyFormatter(ctx.config.regional)) };
}

function codeNote(terms: CodeTerms, event: Pick<EventRecord, 'pricing'>, money: (minor: number) => string): string {
  const label = (id: string) => event.pricing.tiers.find((tier) => tier.id === id)?.label ?? id;
  const parts: string[] = [];
  if (terms.percent !== undefined) parts.push(`${terms.percent}% off`);
  if (terms.amount !== undefined) parts.push(`${money(terms.amount)} off`);
  if (terms.prices) parts.push(Object.entries(terms.prices).map(([tier, price]) => `${label(tier)} tickets at ${money(price)}`).join(', '));
  if (terms.tiers) parts.push(`on ${terms.tiers.map(label).join(', ')} tickets`);
  if (terms.reveals) parts.push(`${label(terms.reveals)} tickets can be chosen`);
  return `Code ${terms.code} applied: ${parts.join(', ')}. It applies once to this registration.`;
}
