import type { AppContext } from '../../context.js';
import type { Db } from '../../db/connect.js';
import { AppError, NotFoundError } from '../../errors.js';
import { localDay } from '../../local-time.js';

/** How a person's celebration emails were turned off: by the office's command, or by the member from an email's link. */
export type CelebrationsOffBy = 'office' | 'unsubscribe';

export interface CelebrationsOff {
  at: Date;
  by: CelebrationsOffBy;
  note: string | null;
}

export interface CelebrationsPerson {
  id: string;
  name: string;
  email: string | null;
  /** The linked spouse, whose anniversary with this person stops while either is off. */
  spouse: string | null;
  celebrationsOff: CelebrationsOff | null;
}

interface PersonRow {
  id: string;
  first_name: string;
  last_name: string;
  email_enc: string | null;
  spouse_name: string | null;
  celebrations_off_at: Date | null;
  celebrations_off_by: CelebrationsOffBy | null;
  celebrations_off_note: string | null;
}

export function celebrationsOffOf(row: Pick<PersonRow, 'celebrations_off_at' | 'celebrations_off_by' | 'celebrations_off_note'>): CelebrationsOff | null {
  if (row.celebrations_off_at === null || row.celebrations_off_by === null) return null;
  return { at: row.celebrations_off_at, by: row.celebrations_off_by, note: row.celebrations_off_note };
}

/**
 * The office turns a person's birthday and anniversary emails off or on, naming them by email
 * (matched by its lookup hash, as the import matches). Turning off what is already off, or on
 * what is on, changes nothing and is refused (exit 1), saying since when and how.
 */
export async function setCelebrationsByEmail(
  ctx: Pick<AppContext, 'db' | 'cipher' | 'clock' | 'config'>,
  input: { email: string; off: boolean; note?: string },
): Promise<CelebrationsPerson> {
  const hash = ctx.cipher.lookupHash('email', input.email);
  return ctx.db.transaction(async (trx) => {
    const row = await personRows(trx).where('p.email_hash', hash).forUpdate('p').first<PersonRow | undefined>();
    if (!row) throw new NotFoundError(`person ${input.email}`, 'see who is on record with `eventops people list`');
    const current = celebrationsOffOf(row);
    const name = `${row.first_name} ${row.last_name}`.trim();
    if (input.off && current) {
      const since = localDay(current.at, ctx.config.regional.timeZone);
      throw new AppError('celebrations_unchanged', `celebration emails to ${name} are already off (since ${since}, by ${current.by})`, {
        exitCode: 1,
        suggestion: `\`eventops people celebrations ${input.email} --on\` turns them on again`,
      });
    }
    if (!input.off && !current) {
      throw new AppError('celebrations_unchanged', `celebration emails to ${name} are already on`, { exitCode: 1 });
    }
    const off = input.off ? { at: ctx.clock.now(), by: 'office' as const, note: input.note ?? null } : null;
    await trx('people')
      .where({ id: row.id })
      .update({
        celebrations_off_at: off?.at ?? null,
        celebrations_off_by: off?.by ?? null,
        celebrations_off_note: off?.note ?? null,
        updated_at: ctx.clock.now(),
      });
    return { ...toPerson(ctx, row), celebrationsOff: off };
  });
}

function personRows(db: Db) {
  return db('people as p')
    .leftJoin('people as s', 's.id', 'p.spouse_id')
    .select(
      'p.id',
      'p.first_name',
      'p.last_name',
      'p.email_enc',
      db.raw(`s.first_name || ' ' || s.last_name AS spouse_name`),
      'p.celebrations_off_at',
      'p.celebrations_off_by',
      'p.celebrations_off_note',
    );
}

function toPerson(ctx: Pick<AppContext, 'cipher'>, row: PersonRow): CelebrationsPerson {
  return {
    id: row.id,
    name: `${row.first_name} ${row.last_name}`.trim(),
    email: row.email_enc === null ? null : ctx.cipher.decrypt(row.email_enc),
    spouse: row.spouse_name,
    celebrationsOff: celebrationsOffOf(row),
  };
}
