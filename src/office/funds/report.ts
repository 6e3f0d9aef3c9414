import type { AppContext } from '../../context.js';
import { NotFoundError } from '../../errors.js';
import { creditsByFundAndEvent } from '../../registrations/credits.js';

/** Help with the cost from one fund for one event, minor units. */
export interface FundEventLine {
  eventSlug: string;
  eventTitle: string;
  /** Credits recorded, reversals not taken off. */
  creditedMinor: number;
  reversedMinor: number;
  /** credited − reversed: what the fund gives. */
  netMinor: number;
  registrations: number;
}

export interface FundReport {
  fund: string;
  netMinor: number;
  events: FundEventLine[];
}

/** Credits per fund, and per event within it, net of reversals; one event's with `eventSlug` (unknown slug: not found). */
export async function fundsReport(ctx: Pick<AppContext, 'db'>, eventSlug?: string): Promise<FundReport[]> {
  if (eventSlug !== undefined && !(await ctx.db('events').where({ slug: eventSlug }).first('id'))) {
    throw new NotFoundError(`event "${eventSlug}"`, 'run `eventops events list --all` to see the slugs');
  }
  const funds = new Map<string, FundReport>();
  for (const line of await creditsByFundAndEvent(ctx.db, eventSlug)) {
    const fund = funds.get(line.fund) ?? { fund: line.fund, netMinor: 0, events: [] };
    const netMinor = line.creditedMinor - line.reversedMinor;
    fund.events.push({ eventSlug: line.eventSlug, eventTitle: line.eventTitle, creditedMinor: line.creditedMinor, reversedMinor: line.reversedMinor, netMinor, registrations: line.registrations });
    fund.netMinor += netMinor;
    funds.set(line.fund, fund);
  }
  return [...funds.values()];
}
