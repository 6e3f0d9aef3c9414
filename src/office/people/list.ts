import type { AppContext } from '../../context.js';
import { celebrationsOffOf, type CelebrationsOff, type CelebrationsOffBy } from './celebrations.js';

/** A person as administrators see them in listings: never clearance numbers. */
export interface PersonListing {
  id: string;
  firstName: string;
  lastName: string;
  email: string | null;
  birthDate: string | null;
  weddingDate: string | null;
  spouse: string | null;
  ministryRoles: string[];
  /** Birthday and anniversary emails turned off (by the office or an unsubscribe link); null while they are on. */
  celebrationsOff: CelebrationsOff | null;
}

interface ListingRow {
  id: string;
  first_name: string;
  last_name: string;
  email_enc: string | null;
  birth_date: string | null;
  wedding_date: string | null;
  spouse_name: string | null;
  ministry_roles: string[];
  celebrations_off_at: Date | null;
  celebrations_off_by: CelebrationsOffBy | null;
  celebrations_off_note: string | null;
}

export async function listPeople(ctx: Pick<AppContext, 'db' | 'cipher'>): Promise<PersonListing[]> {
  const rows = await ctx.db('people as p')
    .leftJoin('people as s', 's.id', 'p.spouse_id')
    .select<ListingRow[]>(
      'p.id',
      'p.first_name',
      'p.last_name',
      'p.email_enc',
      'p.birth_date',
      'p.wedding_date',
      'p.celebrations_off_at',
      'p.celebrations_off_by',
      'p.celebrations_off_note',
      ctx.db.raw(`s.first_name || ' ' || s.last_name AS spouse_name`),
      ctx.db.raw(
        `COALESCE((SELECT array_agg(r.role ORDER BY r.role) FROM ministry_roles r WHERE r.person_id = p.id), '{}') AS ministry_roles`,
      ),
    )
    .orderBy([{ column: 'p.last_name' }, { column: 'p.first_name' }]);
  return rows.map((row) => ({
    id: row.id,
    firstName: row.first_name,
    lastName: row.last_name,
    email: row.email_enc === null ? null : ctx.cipher.decrypt(row.email_enc),
    birthDate: row.birth_date,
    weddingDate: row.wedding_date,
    spouse: row.spouse_name,
    ministryRoles: row.ministry_roles,
    celebrationsOff: celebrationsOffOf(row),
  }));
}
