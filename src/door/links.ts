import crypto from 'node:crypto';
import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import { AppError, NotFoundError } from '../errors.js';
import { publicBaseUrl } from '../payments/links.js';
import { getEventBySlug } from '../office/events.js';
import { linkLifetime } from './link-lifetime.js';

/**
 * Check-in links for volunteers, who have no accounts: a random 256-bit token in the address. Only its SHA-256 is
 * stored, so a copy of the database opens no check-in page; the link is printed once, when it is made.
 */
export const CHECKIN_PATH_PREFIX = '/checkin/';
const TOKEN_BYTES = 32;
/** base64url of 32 bytes. */
export const CHECKIN_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export interface CheckinLink {
  id: string;
  eventId: string;
  eventSlug: string;
  eventTitle: string;
  /** The event's start and end: a tap timed outside its days is flagged. */
  eventStartsAt: Date;
  eventEndsAt: Date | null;
  label: string;
  canTakePayment: boolean;
  createdBy: string;
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
}

interface LinkRow {
  id: string;
  event_id: string;
  slug: string;
  title: string;
  starts_at: Date;
  ends_at: Date | null;
  label: string;
  can_take_payment: boolean;
  created_by: string;
  created_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
}

const fromRow = (row: LinkRow): CheckinLink => ({
  id: row.id,
  eventId: row.event_id,
  eventSlug: row.slug,
  eventTitle: row.title,
  eventStartsAt: row.starts_at,
  eventEndsAt: row.ends_at,
  label: row.label,
  canTakePayment: row.can_take_payment,
  createdBy: row.created_by,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  revokedAt: row.revoked_at,
});

export function tokenHash(token: string): string {
  return crypto.createHash('sha256').update(token, 'utf8').digest('hex');
}

const LINK_COLUMNS = ['l.id', 'l.event_id', 'e.slug', 'e.title', 'e.starts_at', 'e.ends_at', 'l.label', 'l.can_take_payment', 'l.created_by', 'l.created_at', 'l.expires_at', 'l.revoked_at'];
const linksOf = (db: Db) => db('checkin_links as l').join('events as e', 'e.id', 'l.event_id');

export interface NewCheckinLink {
  eventSlug: string;
  /** How long it works from now; without it, until the event is over (link-lifetime.ts). */
  hours?: number;
  label: string;
  canTakePayment: boolean;
  actor: string;
}

/** Makes a link; the token is returned here and nowhere else, with what the office should be warned of. */
export async function createCheckinLink(
  ctx: Pick<AppContext, 'db' | 'clock' | 'config'>,
  input: NewCheckinLink,
): Promise<{ link: CheckinLink; url: string; warnings: string[] }> {
  const event = await getEventBySlug(ctx.db, input.eventSlug);
  if (!event) throw new NotFoundError(`event "${input.eventSlug}"`, 'run `eventops events list` to see the slugs');
  const now = ctx.clock.now();
  const { expiresAt, warnings } = linkLifetime(event, now, input.hours, ctx.config.regional.timeZone);
  const base = publicBaseUrl(ctx.config);
  const token = crypto.randomBytes(TOKEN_BYTES).toString('base64url');
  const [row] = await ctx.db('checkin_links')
    .insert({
      event_id: event.id,
      label: input.label,
      token_hash: tokenHash(token),
      can_take_payment: input.canTakePayment,
      created_by: input.actor,
      created_at: now,
      expires_at: expiresAt,
    })
    .returning<Array<{ id: string }>>('id');
  const link = await linkById(ctx.db, (row as { id: string }).id);
  return { link: link as CheckinLink, url: `${base}${CHECKIN_PATH_PREFIX}${token}`, warnings };
}

async function linkById(db: Db, id: string): Promise<CheckinLink | undefined> {
  const row = await linksOf(db).where('l.id', id).first<LinkRow | undefined>(LINK_COLUMNS);
  return row ? fromRow(row) : undefined;
}

/** The live link a token opens: known, not revoked, not expired, its event not deleted. */
export async function findLiveCheckinLink(db: Db, token: string, now: Date): Promise<CheckinLink | undefined> {
  if (!CHECKIN_TOKEN_PATTERN.test(token)) return undefined;
  const row = await linksOf(db)
    .where('l.token_hash', tokenHash(token))
    .whereNull('l.revoked_at')
    .where('l.expires_at', '>', now)
    .whereNull('e.deleted_at')
    .first<LinkRow | undefined>(LINK_COLUMNS);
  return row ? fromRow(row) : undefined;
}

/**
 * What became of the link a token opened, for the page's script to say why its taps were refused: revoked or
 * expired. Only the holder of a token that was made can learn this; any other token, or a link of a deleted
 * event, is `unknown`, as is a guessed one.
 */
export async function checkinLinkStateOf(db: Db, token: string, now: Date): Promise<ReturnType<typeof linkState> | 'unknown'> {
  if (!CHECKIN_TOKEN_PATTERN.test(token)) return 'unknown';
  const row = await linksOf(db).where('l.token_hash', tokenHash(token)).whereNull('e.deleted_at').first<LinkRow | undefined>(LINK_COLUMNS);
  return row ? linkState(fromRow(row), now) : 'unknown';
}

export async function listCheckinLinks(db: Db, options: { eventSlug?: string } = {}): Promise<CheckinLink[]> {
  const query = linksOf(db).orderBy([{ column: 'l.created_at' }, { column: 'l.id' }]);
  if (options.eventSlug) {
    const event = await getEventBySlug(db, options.eventSlug, { includeDeleted: true });
    if (!event) throw new NotFoundError(`event "${options.eventSlug}"`, 'run `eventops events list --all` to see the slugs');
    query.where('l.event_id', event.id);
  }
  return (await query.select<LinkRow[]>(LINK_COLUMNS)).map(fromRow);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Revokes the links named: by id (or its first 8 characters, as `checkin list` prints it), or every live link
 * with this label (optionally of one event). Naming nothing live is an error; already revoked ones stay as they are.
 */
export async function revokeCheckinLinks(
  ctx: Pick<AppContext, 'db' | 'clock'>,
  given: { idOrLabel: string; eventSlug?: string; actor: string },
): Promise<CheckinLink[]> {
  const now = ctx.clock.now();
  const text = given.idOrLabel.trim();
  const all = await listCheckinLinks(ctx.db, { eventSlug: given.eventSlug });
  const short = text.toLowerCase();
  const byId = all.filter((link) => (UUID.test(text) ? link.id === short : short.length >= 8 && /^[0-9a-f-]+$/.test(short) && link.id.startsWith(short)));
  const named = byId.length > 0 ? byId : all.filter((link) => link.label.toLowerCase() === short);
  if (named.length === 0) throw new NotFoundError(`check-in link "${text}"`, 'run `eventops checkin list` to see the links, their ids and labels');
  const live = named.filter((link) => !link.revokedAt);
  if (live.length === 0) throw new AppError('already_revoked', `check-in link "${text}" is already revoked`, { exitCode: 1 });
  await ctx.db('checkin_links')
    .whereIn('id', live.map((link) => link.id))
    .whereNull('revoked_at')
    .update({ revoked_at: now, revoked_by: given.actor });
  return live.map((link) => ({ ...link, revokedAt: now }));
}

export function linkState(link: CheckinLink, now: Date): 'live' | 'expired' | 'revoked' {
  if (link.revokedAt) return 'revoked';
  return link.expiresAt.getTime() > now.getTime() ? 'live' : 'expired';
}
