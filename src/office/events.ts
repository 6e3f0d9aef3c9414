import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import { AppError, EXIT, NotFoundError } from '../errors.js';
import { cardMinimumWarnings } from '../payments/card-minimum.js';
import { getCardFeeRate } from '../settings.js';
import { memberDateTime } from '../time-format.js';
import type { EventPricing } from '../registrations/event-pricing.js';
import {
  DEFAULT_MAX_ATTENDEES_PER_REGISTRATION,
  DEFAULT_MAX_UNPAID_SEATS_PER_CLIENT,
  DEFAULT_UNPAID_ALERT_SHARE,
  DEFAULT_SENSITIVE_RETENTION_DAYS,
  DEFAULT_UNPAID_HOLD_DAYS,
  EventFileError,
  guardianWarnings,
  type EventFile,
} from './event-file.js';
import { eventFromRow, type EventRecord, type EventRow } from '../registrations/event-record.js';
import { balanceTermsOf } from '../registrations/balance-terms.js';
import { enqueueWebsiteSync, type WebsiteSyncType } from './website-sync.js';
import { refuseRemovingAnswered } from './removed-questions.js';

/**
 * Event administration. Every write runs in one transaction together with its
 * website-sync outbox row (when website sync is on), so a change is never
 * committed without its notification, nor the reverse.
 */


export type EventChangeKind = 'created' | 'updated' | 'published' | 'unpublished' | 'deleted' | 'unchanged';

/** Registrations still holding seats (PENDING or PAID), and the seats they hold. */
export interface LiveRegistrations {
  pending: number;
  paid: number;
  seats: number;
}

export interface EventChange {
  event: EventRecord;
  change: EventChangeKind;
  /** The website-sync delivery id queued with the change; null when sync is off or nothing changed. */
  deliveryId: string | null;
  /**
   * Worth the office's attention, never a refusal (create and update): tickets too cheap to pay for
   * alone by card, a start in the past, a capacity set below the seats already taken.
   */
  warnings: string[];
  /**
   * update: the file's `published` when it differs from the event's. It is not applied: after
   * creation only `events publish` and `events unpublish` change it.
   */
  ignored?: { published: boolean };
  /** delete --force: the live registrations left on the deleted event; their registrants were not told. */
  left?: LiveRegistrations;
}

type WriteContext = Pick<AppContext, 'config' | 'db' | 'clock'>;

/** The event with this slug; deleted events only when asked for. */
export async function getEventBySlug(
  db: Db,
  slug: string,
  options: { includeDeleted?: boolean } = {},
): Promise<EventRecord | undefined> {
  const query = db('events').where({ slug });
  if (!options.includeDeleted) query.whereNull('deleted_at');
  const row = await query.first<EventRow | undefined>();
  return row ? eventFromRow(row) : undefined;
}

export async function listEvents(
  ctx: Pick<AppContext, 'db'>,
  options: { includeDeleted?: boolean } = {},
): Promise<EventRecord[]> {
  const query = ctx.db('events').orderBy([{ column: 'starts_at' }, { column: 'slug' }]);
  if (!options.includeDeleted) query.whereNull('deleted_at');
  const rows = await query.select<EventRow[]>('*');
  return rows.map(eventFromRow);
}

/**
 * Creates an event from a validated event file (parseEventFile / parseEventFileText).
 * A slug already in use, even by a deleted event, is refused.
 */
export async function createEvent(ctx: WriteContext, file: EventFile): Promise<EventChange> {
  const now = ctx.clock.now();
  return ctx.db.transaction(async (trx) => {
    const inserted = await trx('events')
      .insert({
        slug: file.slug,
        title: file.title,
        description: file.description ?? null,
        location: file.location ?? null,
        starts_at: file.startsAt,
        ends_at: file.endsAt ?? null,
        capacity: file.capacity,
        published: file.published ?? false,
        online_payment: file.onlinePayment ?? false,
        pass_card_fee: file.passCardFee ?? false,
        help_with_cost: file.helpWithCost ?? false,
        pricing: JSON.stringify(file.pricing),
        reminder_at: file.reminderAt ?? null,
        max_attendees_per_registration: file.maxAttendeesPerRegistration ?? DEFAULT_MAX_ATTENDEES_PER_REGISTRATION,
        // Absent: holds end after a week. Only an explicit null keeps them until the event.
        unpaid_hold_days: file.unpaidHoldDays === undefined ? DEFAULT_UNPAID_HOLD_DAYS : file.unpaidHoldDays,
        max_unpaid_seats_per_client: file.maxUnpaidSeatsPerClient ?? DEFAULT_MAX_UNPAID_SEATS_PER_CLIENT,
        // Absent: the default share. Only an explicit null turns the alert off.
        unpaid_alert_share: file.unpaidAlertShare === undefined ? DEFAULT_UNPAID_ALERT_SHARE : file.unpaidAlertShare,
        changes_close_at: file.changesCloseAt ?? null,
        waitlist_enabled: file.waitingList?.enabled ?? false,
        waitlist_offer_hours: file.waitingList?.offerHours ?? 24,
        questions: JSON.stringify(file.questions ?? []),
        sensitive_retention_days: file.sensitiveRetentionDays ?? DEFAULT_SENSITIVE_RETENTION_DAYS,
        balance_terms: balanceTermsColumn(file) ?? null,
        created_at: now,
        updated_at: now,
      })
      .onConflict('slug')
      .ignore()
      .returning<EventRow[]>('*');
    const row = inserted[0];
    if (!row) {
      const existing = await getEventBySlug(trx, file.slug, { includeDeleted: true });
      throw new AppError('event_exists', `an event with slug "${file.slug}" already exists${existing?.deletedAt ? ' (deleted)' : ''}`, {
        httpStatus: 409,
        suggestion: existing?.deletedAt
          ? 'slugs stay reserved after deletion so old links never point at a different event; choose another slug'
          : 'use `eventops events update FILE.json` to change it',
      });
    }
    const event = eventFromRow(row);
    const deliveryId = await enqueueWebsiteSync(trx, ctx, 'event.created', event);
    return {
      event,
      change: 'created',
      deliveryId,
      warnings: [...startWarnings(ctx, event), ...(await pricingWarnings(trx, ctx, event)), ...guardianWarnings(event)],
    };
  });
}

/**
 * Updates the event named by the file's slug. Required keys are always
 * replaced; an optional key replaces the stored value when present (null
 * clears it) and leaves it as it is when absent; `pricing` is replaced whole.
 * A reminder that was sent or claimed is re-armed only when `reminderAt`
 * actually moves, so re-running the same file never sends a reminder twice.
 * `published` is never applied: the file that created the event as a draft is
 * the one the office edits after `events publish`, and applying it would take
 * the event off the website unasked. A value that differs is reported in `ignored`.
 */
export async function updateEvent(ctx: WriteContext & Pick<AppContext, 'cipher'>, file: EventFile, options: { force?: boolean } = {}): Promise<EventChange> {
  const now = ctx.clock.now();
  return ctx.db.transaction(async (trx) => {
    const current = await lockLiveEvent(trx, file.slug);
    if (file.questions !== undefined) await refuseRemovingAnswered(trx, ctx, current, file.questions, Boolean(options.force));
    const changes: Omit<Partial<EventRow>, 'pricing' | 'questions' | 'balance_terms'> & { pricing: string; questions?: string; balance_terms?: string | null } = {
      title: file.title,
      starts_at: file.startsAt,
      capacity: file.capacity,
      pricing: JSON.stringify(file.pricing),
      updated_at: now,
      ...optional('description', file.description),
      ...optional('location', file.location),
      ...optional('ends_at', file.endsAt),
      ...optional('online_payment', file.onlinePayment),
      ...optional('pass_card_fee', file.passCardFee),
      ...optional('help_with_cost', file.helpWithCost),
      ...optional('max_attendees_per_registration', file.maxAttendeesPerRegistration),
      ...optional('unpaid_hold_days', file.unpaidHoldDays),
      ...optional('max_unpaid_seats_per_client', file.maxUnpaidSeatsPerClient),
      ...optional('unpaid_alert_share', file.unpaidAlertShare),
      ...optional('changes_close_at', file.changesCloseAt),
      ...optional('waitlist_enabled', file.waitingList?.enabled),
      ...optional('waitlist_offer_hours', file.waitingList?.offerHours),
      ...optional('questions', file.questions === undefined ? undefined : JSON.stringify(file.questions)),
      ...optional('sensitive_retention_days', file.sensitiveRetentionDays),
      // Any of the five keys replaces the terms whole; none keeps them (registrations already made keep their schedules).
      ...optional('balance_terms', balanceTermsColumn(file)),
    };
    if (file.reminderAt !== undefined) {
      changes.reminder_at = file.reminderAt;
      if (!sameInstant(file.reminderAt, current.reminder_at)) {
        changes.reminder_sent_at = null;
        changes.reminder_claimed_at = null;
      }
    } else if (current.reminder_at !== null && current.reminder_sent_at === null && current.reminder_at >= file.startsAt) {
      // A reminder due after the start is never sent (the job sends only before it): say so instead of losing it.
      throw new EventFileError([
        `reminderAt: before startsAt (the stored reminder is ${current.reminder_at.toISOString()}; give a new reminderAt, or null for none)`,
      ]);
    }
    if (file.endsAt === undefined && current.ends_at !== null && current.ends_at <= file.startsAt) {
      // The database refuses an end before the start: say which key to change rather than fail on a constraint.
      throw new EventFileError([
        `endsAt: after startsAt (the stored end is ${current.ends_at.toISOString()}; give a new endsAt, or null for none)`,
      ]);
    }
    if (file.changesCloseAt === undefined && current.changes_close_at !== null && current.changes_close_at > file.startsAt) {
      // Kept as stored, it would let families change and cancel after the start: say which key to change.
      throw new EventFileError([
        `changesCloseAt: at or before startsAt (the stored one is ${current.changes_close_at.toISOString()}; give a new changesCloseAt, or null for the start)`,
      ]);
    }
    // Holds made under a longer limit (or none) get a day's notice instead of being released by the next sweep.
    if (file.unpaidHoldDays != null && (current.unpaid_hold_days === null || file.unpaidHoldDays < current.unpaid_hold_days)) {
      changes.unpaid_hold_since = now;
    }
    const [row] = await trx('events')
      .where({ id: current.id })
      .update({ ...changes, calendar_sequence: nextSequence(trx) })
      .returning<EventRow[]>('*');
    if (!row) throw new NotFoundError(`event "${file.slug}"`);
    const change = await recordChange(trx, ctx, 'updated', 'event.updated', eventFromRow(row));
    // Counted under the event's lock, which every registration takes too.
    const capacityWarning =
      file.capacity !== null && file.capacity !== current.capacity ? await capacityBelowTaken(trx, current.id, file.capacity) : [];
    const ignored = file.published !== undefined && file.published !== current.published ? { ignored: { published: file.published } } : {};
    // The event as stored: keys the file left out keep their values (onlinePayment, passCardFee).
    return {
      ...change,
      ...ignored,
      warnings: [...startWarnings(ctx, change.event), ...capacityWarning, ...(await pricingWarnings(trx, ctx, change.event)), ...guardianWarnings(change.event)],
    };
  });
}

/** Publishes the event. Publishing a published event changes nothing and queues nothing. */
export async function publishEvent(ctx: WriteContext, slug: string): Promise<EventChange> {
  return ctx.db.transaction(async (trx) => {
    const current = await lockLiveEvent(trx, slug);
    if (current.published) return { event: eventFromRow(current), change: 'unchanged', deliveryId: null, warnings: [] };
    const [row] = await trx('events')
      .where({ id: current.id })
      .update({ published: true, updated_at: ctx.clock.now(), calendar_sequence: nextSequence(trx) })
      .returning<EventRow[]>('*');
    if (!row) throw new NotFoundError(`event "${slug}"`);
    return recordChange(trx, ctx, 'published', 'event.published', eventFromRow(row));
  });
}

/**
 * Takes the event off the website (its page is gone, the form closed); registrations already made
 * stand. Unpublishing a draft changes nothing and queues nothing. The website hears event.updated
 * carrying published: false (the specification has no unpublished type).
 */
export async function unpublishEvent(ctx: WriteContext, slug: string): Promise<EventChange> {
  return ctx.db.transaction(async (trx) => {
    const current = await lockLiveEvent(trx, slug);
    if (!current.published) return { event: eventFromRow(current), change: 'unchanged', deliveryId: null, warnings: [] };
    const [row] = await trx('events')
      .where({ id: current.id })
      .update({ published: false, updated_at: ctx.clock.now(), calendar_sequence: nextSequence(trx) })
      .returning<EventRow[]>('*');
    if (!row) throw new NotFoundError(`event "${slug}"`);
    return recordChange(trx, ctx, 'unpublished', 'event.updated', eventFromRow(row));
  });
}

/** Deleting an event that still has PENDING or PAID registrations, without --force: their registrants would not be told. */
export class EventHasRegistrationsError extends AppError {
  constructor(
    readonly slug: string,
    readonly live: LiveRegistrations,
  ) {
    super(
      'event_has_registrations',
      `event "${slug}" has ${describeLive(live)}: deleting the event would tell none of their registrants, and cannot be undone; nothing was deleted`,
      {
        exitCode: EXIT.failure,
        httpStatus: 409,
        suggestion:
          `cancel them first (\`eventops registrations list --event ${slug}\` lists them; ` +
          `\`eventops registrations cancel REFERENCE --notify\` cancels one and emails its registrant), ` +
          `or delete it anyway with \`eventops events delete ${slug} --force\``,
      },
    );
    this.name = 'EventHasRegistrationsError';
  }
}

/**
 * Soft-deletes the event (deleted_at), keeping its registrations and its slug.
 * An event with PENDING or PAID registrations is refused unless `force`: nobody
 * tells their registrants, and deletion cannot be undone; with `force` the
 * registrations left are reported in `left`. Counted under the event's lock,
 * which every new registration takes, so none slips in between.
 * Deleting an already deleted event succeeds without queuing anything.
 */
export async function deleteEvent(ctx: WriteContext, slug: string, options: { force?: boolean } = {}): Promise<EventChange> {
  return ctx.db.transaction(async (trx) => {
    const current = await trx('events').where({ slug }).forUpdate().first<EventRow | undefined>();
    if (!current) throw new NotFoundError(`event "${slug}"`, 'run `eventops events list --all` to see every slug');
    if (current.deleted_at) return { event: eventFromRow(current), change: 'unchanged', deliveryId: null, warnings: [] };
    const live = await liveRegistrations(trx, current.id);
    const anyLive = live.pending + live.paid > 0;
    if (anyLive && !options.force) throw new EventHasRegistrationsError(slug, live);
    const now = ctx.clock.now();
    const [row] = await trx('events')
      .where({ id: current.id })
      .update({ deleted_at: now, updated_at: now, calendar_sequence: nextSequence(trx) })
      .returning<EventRow[]>('*');
    if (!row) throw new NotFoundError(`event "${slug}"`);
    const change = await recordChange(trx, ctx, 'deleted', 'event.deleted', eventFromRow(row));
    return anyLive ? { ...change, left: live } : change;
  });
}

/** PENDING and PAID registrations of the event and the seats they hold (attendees). */
export async function liveRegistrations(db: Db, eventId: string): Promise<LiveRegistrations> {
  const rows = await db('registrations')
    .where({ event_id: eventId })
    .whereIn('status', ['PENDING', 'PAID'])
    .groupBy('status')
    .select<Array<{ status: 'PENDING' | 'PAID'; registrations: string | number; seats: string | number | null }>>(
      'status',
      db.raw('count(*) AS registrations'),
      db.raw('sum(attendee_count) AS seats'),
    );
  const of = (status: 'PENDING' | 'PAID') => rows.find((row) => row.status === status);
  return {
    pending: Number(of('PENDING')?.registrations ?? 0),
    paid: Number(of('PAID')?.registrations ?? 0),
    seats: rows.reduce((sum, row) => sum + Number(row.seats ?? 0), 0),
  };
}

/** "2 live registrations (1 PENDING, 1 PAID; 3 seats)". */
export function describeLive(live: LiveRegistrations): string {
  const count = live.pending + live.paid;
  return (
    `${count} live registration${count === 1 ? '' : 's'} ` +
    `(${live.pending} PENDING, ${live.paid} PAID; ${live.seats} seat${live.seats === 1 ? '' : 's'})`
  );
}

/**
 * Every change raises the calendar SEQUENCE, so a calendar holding the entry takes the next
 * reminder's as newer however close together the changes came.
 */
const nextSequence = (trx: Db) => trx.raw('calendar_sequence + 1');

async function lockLiveEvent(trx: Db, slug: string): Promise<EventRow> {
  const row = await trx('events').where({ slug }).forUpdate().first<EventRow | undefined>();
  if (!row) throw new NotFoundError(`event "${slug}"`, 'run `eventops events list` to see the slugs; create it with `eventops events create`');
  // Not "not found": that would send the office to `events create`, which refuses the reserved slug.
  if (row.deleted_at) {
    throw new AppError('event_deleted', `event "${slug}" was deleted; deleted events cannot be changed`, {
      exitCode: EXIT.failure,
      httpStatus: 410,
      suggestion: 'its slug stays reserved so old links never point at a different event; create the event again under another slug',
    });
  }
  return row;
}

async function recordChange(
  trx: Db,
  ctx: WriteContext,
  change: EventChangeKind,
  type: WebsiteSyncType,
  event: EventRecord,
): Promise<EventChange> {
  return { event, change, deliveryId: await enqueueWebsiteSync(trx, ctx, type, event), warnings: [] };
}

/**
 * What the office should know about the event's prices as stored: a ticket too cheap to be paid for
 * alone by card (below the card provider's minimum). Read in the change's transaction; the card fee
 * rate only when the event passes it on.
 */
async function pricingWarnings(trx: Db, ctx: WriteContext, event: EventRecord): Promise<string[]> {
  return cardMinimumWarnings(ctx.config, event, event.passCardFee ? await getCardFeeRate(trx) : undefined);
}

/**
 * A start already past: the public form is closed from the start (see "Registration closes when the
 * event starts") and the reminder job sends only before it, so a file with the wrong date goes unnoticed otherwise.
 */
function startWarnings(ctx: WriteContext, event: EventRecord): string[] {
  if (event.startsAt > ctx.clock.now()) return [];
  return [
    `the start, ${memberDateTime(ctx.config.regional)(event.startsAt)}, is in the past: the public form is closed already ` +
      '(registration closes at the start) and no event reminder will be sent; if the date is wrong, correct startsAt and run `eventops events update` again',
  ];
}

/** A capacity the update sets below the seats PENDING and PAID registrations already hold. Nobody is cancelled. */
async function capacityBelowTaken(trx: Db, eventId: string, capacity: number): Promise<string[]> {
  const { seats } = await liveRegistrations(trx, eventId);
  if (seats <= capacity) return [];
  return [
    `capacity ${capacity} is below the ${seats} seat${seats === 1 ? '' : 's'} already taken by PENDING and PAID registrations: ` +
      'nobody was cancelled, and the event shows as full' +
      (capacity > 0 ? ` until fewer than ${capacity} seat${capacity === 1 ? ' is' : 's are'} taken` : ''),
  ];
}

/** The terms as the column stores them: undefined when the file gives none of their keys. */
function balanceTermsColumn(file: EventFile): string | null | undefined {
  const { terms } = balanceTermsOf(file, file.startsAt);
  return terms === undefined ? undefined : terms === null ? null : JSON.stringify(terms);
}

function optional<K extends keyof EventRow, V>(column: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [column]: value } as Partial<Record<K, V>>);
}

function sameInstant(a: Date | null, b: Date | null): boolean {
  return a === null || b === null ? a === b : a.getTime() === b.getTime();
}
