import fs from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import type { EventFile } from '../../office/event-file.js';
import type { EventChange } from '../../office/events.js';
import type { EventRecord } from '../../registrations/event-record.js';
import type { AppContext } from '../../context.js';
import { UsageError, errorMessage } from '../../errors.js';
import { printResult, withContext } from '../io.js';
import { registerEventsAttendanceCommand } from './events-attendance.js';
import { registerEventsAddonsCommand } from './events-addons.js';

interface JsonOption {
  json?: boolean;
}

/** Create, update and publish print the event's public page (and --json gives it as publicUrl). */
const WITH_ADDRESS = { address: true } as const;

const jsonOptionSchema = z.object({ json: z.boolean().optional() });
const deleteOptionsSchema = z.object({ json: z.boolean().optional(), force: z.boolean().optional() });
const listOptionsSchema = z.object({ json: z.boolean().optional(), all: z.boolean().optional() });
const slugSchema = z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/);

const FILE_HELP = `
The event file (JSON; unknown keys are rejected):
  {"slug": "family-camp", "title": "Family Camp", "startsAt": "2027-03-12T18:00:00+11:00",
   "endsAt": "2027-03-14T15:00:00+11:00", "location": "Camp Grounds", "capacity": 120, "published": true, "onlinePayment": true,
   "passCardFee": true, "reminderAt": "2027-03-10T09:00:00+11:00",
   "pricing": {"tiers": [{"id": "adult", "label": "Adult", "price": 12000}, {"id": "child", "label": "Child", "price": 6000, "child": true}],
               "familyWaiver": {"maxChargedTickets": 3}, "discount": {"percent": 10}}}
Prices in minor units of APP_CURRENCY; capacity null = unlimited.
"unpaidHoldDays" (create: 7 when left out; null = until the event) is how long an unpaid bank transfer
holds its places; "maxUnpaidSeatsPerClient" (default 30) caps the unpaid places one connection, and one
mailbox, may hold; "unpaidAlertShare" (create: 0.4; null = never) alerts the office once the public form's
unpaid places pass that share of the capacity.
"published" is read by create only (default false): after that \`events publish\` and \`events unpublish\`
change it, and update leaves it as it is, saying so when the file says otherwise.
"questions" lists what the form asks (see "The event file" in docs/office.md); a tier's "minAge"/"maxAge" make the
form ask each of its attendees a date of birth, and "child": true makes each of its attendees a child (a consent
is then the contact's as guardian); "sensitiveRetentionDays" (create: 30) is how long after the
event its sensitive answers are kept.
The start (and end) are printed in APP_TIMEZONE: check them.`;

export function registerEventsCommands(program: Command): void {
  const events = program
    .command('events')
    .description('create, update, publish, unpublish, delete and list events (changes are pushed to the website when sync is on)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ eventops events create family-camp.json\n  $ eventops events publish family-camp\n' +
        '  $ eventops events update family-camp.json\n  $ eventops events list --json',
    );

  events
    .command('create')
    .description('create an event from an event file')
    .argument('<file>', 'event file (JSON)')
    .option('--json', 'print JSON')
    .addHelpText('after', `\nExample:\n  $ eventops events create family-camp.json\n${FILE_HELP}`)
    .action(async (file: string, rawOptions: unknown) => {
      const options = jsonOptionSchema.parse(rawOptions);
      const text = await readEventFileText(file);
      await withContext(async (ctx) => {
        const input = await parseInZone(text, ctx);
        await applyChange(ctx, options, () => import('../../office/events.js').then((m) => m.createEvent(ctx, input)), {
          ...WITH_ADDRESS,
          fileWarnings: await fileWarnings(text, ctx),
        });
      });
    });

  events
    .command('update')
    .description(
      'update the event named by the file\'s slug; optional keys left out keep their value, null clears them; "published" is left as it is',
    )
    .argument('<file>', 'event file (JSON)')
    .option('--json', 'print JSON')
    .option('--force', 'remove questions even though families have answered them (their answers are kept, hidden)')
    .addHelpText(
      'after',
      '\nExample:\n  $ eventops events update family-camp.json\n\nRemoving a question that families have answered is refused unless --force; their answers are kept, hidden.\n\nChanging reminderAt re-arms the reminder only when the time actually moves.\n' +
        'A published event stays published and a draft stays a draft, whatever the file\'s "published" says:\n' +
        '`eventops events publish|unpublish SLUG` changes that.\n' +
        `A capacity below the seats already taken is saved with a warning; nobody is cancelled.\n${FILE_HELP}`,
    )
    .action(async (file: string, rawOptions: unknown) => {
      const options = deleteOptionsSchema.parse(rawOptions);
      const text = await readEventFileText(file);
      await withContext(async (ctx) => {
        const input = await parseInZone(text, ctx);
        await applyChange(
          ctx,
          options,
          () => import('../../office/events.js').then((m) => m.updateEvent(ctx, input, { force: options.force })),
          { ...WITH_ADDRESS, fileWarnings: await fileWarnings(text, ctx) },
        );
      });
    });

  events
    .command('publish')
    .description('publish an event (publishing a published event changes nothing)')
    .argument('<slug>', 'the event slug')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExample:\n  $ eventops events publish family-camp')
    .action(async (slug: string, rawOptions: unknown) => {
      const options = jsonOptionSchema.parse(rawOptions);
      const valid = parseSlug(slug);
      await withContext((ctx) =>
        applyChange(ctx, options, () => import('../../office/events.js').then((m) => m.publishEvent(ctx, valid)), WITH_ADDRESS),
      );
    });

  events
    .command('unpublish')
    .description('take an event off the website: its page and form are gone, registrations already made stand (unpublishing a draft changes nothing)')
    .argument('<slug>', 'the event slug')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExample:\n  $ eventops events unpublish family-camp')
    .action(async (slug: string, rawOptions: unknown) => {
      const options = jsonOptionSchema.parse(rawOptions);
      const valid = parseSlug(slug);
      await withContext((ctx) => applyChange(ctx, options, () => import('../../office/events.js').then((m) => m.unpublishEvent(ctx, valid))));
    });

  events
    .command('delete')
    .description(
      'delete an event for good (kept with its registrations, hidden everywhere, its slug reserved; deleting twice is fine); ' +
        'refused while it has PENDING or PAID registrations, unless --force',
    )
    .argument('<slug>', 'the event slug')
    .option('--force', 'delete it even though it has PENDING or PAID registrations (their registrants are not told)')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  $ eventops events delete family-camp\n  $ eventops events delete family-camp --force\n\n' +
        'Deletion cannot be undone and tells no registrant. Cancel the registrations first\n' +
        '(`eventops registrations cancel REFERENCE --notify` emails each one), or use --force.',
    )
    .action(async (slug: string, rawOptions: unknown) => {
      const options = deleteOptionsSchema.parse(rawOptions);
      const valid = parseSlug(slug);
      await withContext((ctx) =>
        applyChange(ctx, options, () => import('../../office/events.js').then((m) => m.deleteEvent(ctx, valid, { force: options.force }))),
      );
    });

  events
    .command('list')
    .description('list events by start time')
    .option('--json', 'print JSON')
    .option('--all', 'include deleted events')
    .addHelpText('after', '\nExamples:\n  $ eventops events list\n  $ eventops events list --all --json')
    .action(async (rawOptions: unknown) => {
      const options = listOptionsSchema.parse(rawOptions);
      await withContext(async (ctx) => {
        const { listEvents } = await import('../../office/events.js');
        const found = await listEvents(ctx, { includeDeleted: options.all });
        const { localMinute } = await import('../../local-time.js');
        const when = (date: Date) => localMinute(date, ctx.config.regional.timeZone);
        printResult(options, { events: found }, found.length === 0 ? 'no events' : describeEvents(found, when));
      });
    });

  registerEventsAttendanceCommand(events);
  registerEventsAddonsCommand(events);
}

async function readEventFileText(file: string): Promise<string> {
  try {
    return await fs.readFile(path.resolve(file), 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read the event file "${file}": ${errorMessage(error)}`);
  }
}

/** Times the file wrote in UTC (Z) that are another wall-clock time in APP_TIMEZONE: kept, but said. */
async function fileWarnings(text: string, ctx: AppContext): Promise<string[]> {
  const { utcTimeWarningsInText } = await import('../../office/event-file.js');
  return utcTimeWarningsInText(text, ctx.config.regional.timeZone);
}

/** Validated against APP_TIMEZONE too: a time whose offset the church's zone does not have that day is refused. */
async function parseInZone(text: string, ctx: AppContext): Promise<EventFile> {
  const { parseEventFileText } = await import('../../office/event-file.js');
  return parseEventFileText(text, { timeZone: ctx.config.regional.timeZone });
}

function parseSlug(slug: string): string {
  if (!slugSchema.safeParse(slug).success) {
    throw new UsageError(`"${slug}" is not an event slug`, 'slugs are lowercase letters, digits and hyphens, e.g. family-camp');
  }
  return slug;
}

type SyncReport =
  | { status: 'off' }
  | { status: 'none' }
  | { status: 'delivered'; delivered: number; othersPending?: number }
  | { status: 'delivering'; othersPending?: number }
  | { status: 'queued'; delivered: number; othersPending?: number; error?: string };

/**
 * Applies one change, then tries to deliver the website notification at once; a receiver that is down never fails the command.
 * Create and update say when the event starts (and ends) in APP_TIMEZONE and whether it is published, so a wrong
 * offset or a draft left unpublished shows at once.
 */
async function applyChange(
  ctx: AppContext,
  options: JsonOption,
  change: () => Promise<EventChange>,
  shown: { fileWarnings?: string[]; address?: boolean } = {},
): Promise<void> {
  const result = await change();
  const warnings = [...(shown.fileWarnings ?? []), ...result.warnings];
  const sync = await syncReport(ctx, result.deliveryId);
  const { memberDateTime } = await import('../../time-format.js');
  const when = memberDateTime(ctx.config.regional);
  const written = result.change === 'created' || result.change === 'updated';
  const { eventPageUrl } = await import('../../http/events-list-links.js');
  const publicUrl = shown.address ? (eventPageUrl(ctx.config, result.event.slug) ?? null) : undefined;
  printResult(
    options,
    {
      change: result.change,
      event: result.event,
      ...(publicUrl === undefined ? {} : { publicUrl }),
      deliveryId: result.deliveryId,
      websiteSync: sync,
      warnings,
      ...(result.ignored ? { ignored: result.ignored } : {}),
      ...(result.left ? { left: result.left } : {}),
    },
    [
      `${result.change}: ${result.event.slug} (${result.event.title})`,
      ...(written
        ? [
            `starts: ${when(result.event.startsAt)} (${ctx.config.regional.timeZone})`,
            ...(result.event.endsAt ? [`ends: ${when(result.event.endsAt)}`] : []),
            describePublishState(result),
          ]
        : []),
      ...(publicUrl === undefined ? [] : [describeAddress(result.event, publicUrl)]),
      ...warnings.map((warning) => `warning: ${warning}`),
      ...(result.left ? [describeLeft(result.event.slug, result.left)] : []),
      describeSync(sync),
    ],
  );
}

/** What create or update did to the publish state: only `events publish|unpublish` change it after creation. */
function describePublishState(result: EventChange): string {
  const { slug, published } = result.event;
  const how = published
    ? `\`eventops events unpublish ${slug}\` takes it off the website`
    : `\`eventops events publish ${slug}\` puts it on the website`;
  if (result.change === 'created') return published ? 'published: its page is public now' : `draft: not on the website; ${how}`;
  if (result.ignored) {
    return `${published ? 'still published' : 'still a draft'}: the file says "published": ${String(result.ignored.published)}, which update does not apply; ${how}`;
  }
  return published ? 'still published' : `still a draft; ${how}`;
}

/** Where families find the event: its page, public once the event is published. */
function describeAddress(event: EventRecord, publicUrl: string | null): string {
  const label = event.published ? 'public page' : 'public page once published';
  if (publicUrl !== null) return `${label}: ${publicUrl}`;
  return `${label}: /events/${event.slug} on the app's public address (set AUTH_URL to it, e.g. https://events.example.org, for the full link)`;
}

/** delete --force: what was left behind, and what the office can still do about it. */
function describeLeft(slug: string, left: NonNullable<EventChange['left']>): string {
  const count = left.pending + left.paid;
  return (
    `left: ${count} live registration${count === 1 ? '' : 's'} (${left.pending} PENDING, ${left.paid} PAID; ` +
    `${left.seats} seat${left.seats === 1 ? '' : 's'}) on the deleted event; their registrants were not told ` +
    '(their registration pages now say the event was cancelled and the church will contact them). ' +
    `\`eventops registrations list --event ${slug}\` lists them; \`eventops registrations cancel REFERENCE --notify\` tells each one`
  );
}

async function syncReport(ctx: AppContext, deliveryId: string | null): Promise<SyncReport> {
  if (deliveryId !== null) return deliverNow(ctx, deliveryId);
  return ctx.config.websiteSync ? { status: 'none' } : { status: 'off' };
}

/**
 * Runs a delivery, then reports on this command's own notification: other
 * events' rows may be backing off, and a server's delivery loop (woken by the
 * same commit) may have claimed this one first, so the pending count says
 * nothing about it.
 */
async function deliverNow(ctx: AppContext, deliveryId: string): Promise<SyncReport> {
  try {
    const { deliverWebsiteSync, websiteSyncDelivery } = await import('../../office/website-sync.js');
    const outcome = await deliverWebsiteSync(ctx, { limit: 20 });
    const own = await websiteSyncDelivery(ctx.db, deliveryId);
    const othersPending = outcome.pending - (own.status === 'PENDING' ? 1 : 0);
    const others = othersPending > 0 ? { othersPending } : {};
    if (own.status === 'DELIVERED') return { status: 'delivered', delivered: outcome.delivered, ...others };
    // This run's claims are all settled or handed back by now: a live claim is another process's.
    if (own.claimedUntil !== null && own.claimedUntil > ctx.clock.now()) return { status: 'delivering', ...others };
    return { status: 'queued', delivered: outcome.delivered, ...others, ...(own.lastError ? { error: own.lastError } : {}) };
  } catch (error) {
    ctx.logger.warn({ error: errorMessage(error) }, 'website sync delivery could not run; the notification stays queued');
    return { status: 'queued', delivered: 0, error: errorMessage(error) };
  }
}

function describeSync(sync: SyncReport): string {
  if (sync.status === 'off') return 'website sync: off';
  if (sync.status === 'none') return 'website sync: nothing changed, nothing to send';
  if (sync.status === 'delivering') return `website sync: being delivered by the server${othersWaiting(sync.othersPending)}`;
  if (sync.status === 'delivered') {
    return `website sync: delivered${sync.delivered > 1 ? ` (${sync.delivered} notifications)` : ''}${othersWaiting(sync.othersPending)}`;
  }
  return `website sync: queued, will retry${sync.error ? ` (${sync.error})` : ''}; \`eventops sync-website\` delivers it now`;
}

/** Other events' notifications waiting (a receiver outage, say): worth knowing, but not this change's outcome. */
function othersWaiting(pending: number | undefined): string {
  return pending ? `; ${pending} other notification${pending > 1 ? 's' : ''} still queued (\`eventops status\`)` : '';
}

/** How long an unpaid bank-transfer registration holds its places (unpaidHoldDays). */
function describeHold(days: number | null): string {
  return days === null ? 'holds until the event' : `holds ${days} day${days === 1 ? '' : 's'}`;
}

/** One line per event, its columns aligned (slugs, states and capacities differ in length). */
function describeEvents(events: EventRecord[], when: (date: Date) => string): string[] {
  const rows = events.map((event) => [
    event.slug,
    event.endsAt ? `${when(event.startsAt)} – ${when(event.endsAt)}` : when(event.startsAt),
    event.deletedAt ? 'deleted' : event.published ? 'published' : 'draft',
    event.capacity === null ? 'unlimited' : `capacity ${event.capacity}`,
    describeHold(event.unpaidHoldDays),
    event.title,
  ]);
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  '));
}
