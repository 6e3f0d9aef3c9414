import type { AppContext } from '../../context.js';
import { withAsciiDomain } from '../../contact-rules.js';
import { NotFoundError } from '../../errors.js';
import { paymentReference } from '../../registrations/reference.js';
import type { PaymentMethod, RegistrationStatus } from '../../registrations/registrations.js';
import { BALANCE_MINOR_SQL, CREDITED_MINOR_SQL, PAID_MINOR_SQL } from '../../registrations/ledger.js';
import { OFFICE_PAID_BY_METHOD_SQL, type PaidByMethod } from '../../registrations/paid-by.js';
import { foldForSearch } from '../../search-fold.js';
import { helpOpenSql } from '../../registrations/help-requests.js';

export interface RegistrationListing {
  id: string;
  reference: string;
  event: string;
  contactName: string;
  attendees: number;
  totalMinor: number;
  paidMinor: number;
  /** Help with the cost from named funds, net of reversals (`registrations credit`). */
  creditedMinor: number;
  /** What is still owed: total − paid − credited while PENDING, else 0. */
  balanceMinor: number;
  method: PaymentMethod;
  /** What the office received by each method, in the order first used: a bank part-payment then the balance in cash names both. */
  officePaidBy: PaidByMethod[];
  status: RegistrationStatus;
  /** The family asked to talk about help with the cost and the office has not decided yet (registrations/help-requests.ts). */
  helpOpen: boolean;
  createdAt: Date;
  /**
   * References of the event's other live registrations made with the same contact email: perhaps one
   * person registered (and paid) twice. Empty for a cancelled registration.
   */
  sameContactAs: string[];
}

export interface ListFilter {
  eventSlug?: string;
  status?: RegistrationStatus;
  /**
   * A name (contact or attendee: part of it, accents and case ignored; `%` and `_` are literal), an exact email
   * address, or the start of a reference.
   */
  search?: string;
}

interface ListingRow {
  id: string;
  event_id: string;
  contact_email_hash: string;
  slug: string;
  contact_name: string;
  attendee_count: number;
  total_minor: number;
  paid_minor: string | number;
  credited_minor: string | number;
  balance_minor: string | number;
  payment_method: PaymentMethod;
  office_paid_by: PaidByMethod[] | null;
  status: RegistrationStatus;
  help_open: boolean;
  created_at: Date;
}

const likeEscape = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

export { foldForSearch };

/** foldForSearch in SQL, on the expression `expr` (normalize() needs PostgreSQL 13 and a UTF8 database). */
const foldSql = (expr: string) => `lower(regexp_replace(normalize(${expr}, NFD), '[\\u0300-\\u036f]', '', 'g'))`;

/** One row per registration, oldest first. Contact emails stay encrypted: a search by email compares lookup hashes. */
export async function listRegistrations(ctx: Pick<AppContext, 'db' | 'cipher'>, filter: ListFilter): Promise<RegistrationListing[]> {
  const query = ctx.db('registrations as r')
    .join('events as e', 'e.id', 'r.event_id')
    .orderBy([{ column: 'r.created_at' }, { column: 'r.id' }])
    .select<ListingRow[]>(
      'r.id',
      'r.event_id',
      'r.contact_email_hash',
      'e.slug',
      'r.contact_name',
      'r.attendee_count',
      'r.total_minor',
      ctx.db.raw(`${PAID_MINOR_SQL} AS paid_minor`),
      ctx.db.raw(`${CREDITED_MINOR_SQL} AS credited_minor`),
      ctx.db.raw(`${BALANCE_MINOR_SQL} AS balance_minor`),
      'r.payment_method',
      ctx.db.raw(`${OFFICE_PAID_BY_METHOD_SQL} AS office_paid_by`),
      'r.status',
      ctx.db.raw(`${helpOpenSql('r')} AS help_open`),
      'r.created_at',
    );
  if (filter.eventSlug) {
    const event = await ctx.db('events').where({ slug: filter.eventSlug }).first('id');
    if (!event) throw new NotFoundError(`event "${filter.eventSlug}"`, 'run `eventops events list --all` to see the slugs');
    query.where('r.event_id', event.id);
  }
  if (filter.status) query.where('r.status', filter.status);
  const search = filter.search?.trim();
  if (search) {
    const name = foldForSearch(search);
    const hexKey = search.replace(/-/g, '').toLowerCase();
    query.where((q) => {
      // Matches nothing unless a clause below does (knex drops an empty group, which would list everything).
      q.whereRaw('false');
      // The contact's and the attendees' names, not the attendees' JSON text (whose keys "name" and "tier" every
      // registration has), compared without accents or case. Text that is only accents folds to nothing: no name clause.
      if (name) {
        const like = `%${likeEscape(name)}%`;
        q.orWhereRaw(`${foldSql('r.contact_name')} LIKE ?`, [like]).orWhereRaw(
          `EXISTS (SELECT 1 FROM jsonb_array_elements(r.attendees) AS a(attendee) WHERE ${foldSql(`a.attendee ->> 'name'`)} LIKE ?)`,
          [like],
        );
      }
      if (search.includes('@')) q.orWhere('r.contact_email_hash', ctx.cipher.lookupHash('email', withAsciiDomain(search)));
      if (/^[0-9a-f]{4,32}$/.test(hexKey)) q.orWhereRaw(`replace(r.id::text, '-', '') LIKE ?`, [`${hexKey}%`]);
    });
  }
  const rows = await query;
  const sameContact = await liveRegistrationsByContact(ctx, [...new Set(rows.map((row) => row.event_id))]);
  return rows.map((row) => ({
    id: row.id,
    reference: paymentReference(row.id),
    event: row.slug,
    contactName: row.contact_name,
    attendees: row.attendee_count,
    totalMinor: row.total_minor,
    paidMinor: Number(row.paid_minor),
    creditedMinor: Number(row.credited_minor),
    balanceMinor: Number(row.balance_minor),
    method: row.payment_method,
    officePaidBy: row.office_paid_by ?? [],
    status: row.status,
    helpOpen: row.help_open,
    createdAt: row.created_at,
    sameContactAs:
      row.status === 'CANCELLED'
        ? []
        : (sameContact.get(`${row.event_id}|${row.contact_email_hash}`) ?? []).filter((id) => id !== row.id).map(paymentReference),
  }));
}

/**
 * The live registrations of these events that share their contact email with another of the same event, by
 * event and email hash: one pass over the events' registrations, whatever the listing's filter.
 */
async function liveRegistrationsByContact(ctx: Pick<AppContext, 'db'>, eventIds: string[]): Promise<Map<string, string[]>> {
  if (eventIds.length === 0) return new Map();
  const groups = await ctx.db('registrations')
    .whereIn('event_id', eventIds)
    .whereNot('status', 'CANCELLED')
    .groupBy('event_id', 'contact_email_hash')
    .havingRaw('count(*) > 1')
    .select<Array<{ event_id: string; contact_email_hash: string; ids: string[] }>>(
      'event_id',
      'contact_email_hash',
      ctx.db.raw('array_agg(id ORDER BY created_at, id) AS ids'),
    );
  return new Map(groups.map((group) => [`${group.event_id}|${group.contact_email_hash}`, group.ids]));
}
