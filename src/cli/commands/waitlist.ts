import type { Command } from 'commander';
import { z } from 'zod';
import { contactEmail, contactMobile } from '../../contact-rules.js';
import { personName } from '../../name-rules.js';
import { printResult, withContext } from '../io.js';
import { counted } from '../../plural.js';
import { parseOrUsage } from '../usage.js';
import { noteSchema, operatingSystemUser, table } from './registrations/shared.js';

const ENTRY_ARGUMENT = 'the entry as `waitlist list` prints it (e.g. W-1A2B3C4D) or its id';

const listSchema = z.object({ event: z.string({ error: 'is required' }).trim().min(1), all: z.boolean().optional(), json: z.boolean().optional() });
const showSchema = z.object({ json: z.boolean().optional() });
const addSchema = z.object({
  event: z.string({ error: 'is required' }).trim().min(1, { error: 'must not be empty' }),
  name: personName('must not be empty'),
  email: contactEmail('must not be empty'),
  mobile: contactMobile('must be a phone number')
    .optional()
    .transform((value) => (value ? value : undefined)),
  places: z.coerce.number({ error: 'must be a number' }).int({ error: 'must be a whole number' }).min(1, { error: 'must be at least 1' }),
  tier: z.string().trim().min(1, { error: 'must not be empty' }).optional(),
  json: z.boolean().optional(),
});
const offerSchema = z.object({ note: noteSchema, json: z.boolean().optional() });
const removeSchema = z.object({ note: noteSchema, notify: z.boolean().optional(), json: z.boolean().optional() });

export function registerWaitlistCommands(program: Command): void {
  const waitlist = program.command('waitlist').description("an event's waiting list: list, show, add, offer places now, remove");

  waitlist
    .command('list')
    .description('the entries in queue order: position, family, places, state, offer expiry; then free places not offered, and why')
    .requiredOption('--event <slug>', 'the event')
    .option('--all', 'list the joins that lapsed unconfirmed too')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExample:\n  $ eventops waitlist list --event family-camp')
    .action(async (raw: Record<string, unknown>) => {
      const options = parseOrUsage(listSchema, raw, 'waitlist list');
      await withContext(async (ctx) => {
        const { listWaitlist } = await import('../../registrations/waitlist/office.js');
        const { memberDateTime } = await import('../../time-format.js');
        const when = memberDateTime(ctx.config.regional);
        const { event, entries, lapsed, standing } = await listWaitlist(ctx, options.event, { all: options.all });
        // The ticket column only when some entry waits for a particular ticket type.
        const byTier = entries.some((entry) => entry.tier !== null);
        const rows = entries.map((entry) => [
          entry.position === null ? '-' : String(entry.position),
          entry.entry,
          entry.name,
          entry.email,
          String(entry.places),
          ...(byTier ? [entry.tier ?? 'any'] : []),
          entry.state,
          entry.offerExpiresAt ? when(new Date(entry.offerExpiresAt)) : '',
        ]);
        const lines =
          entries.length === 0
            ? [`nobody is on the waiting list for "${event.slug}"${event.waitingList.enabled ? '' : ' (its waiting list is off)'}`]
            : table(['#', 'ENTRY', 'NAME', 'EMAIL', 'PLACES', ...(byTier ? ['TICKET'] : []), 'STATE', 'OFFER EXPIRES'], rows);
        if (lapsed > 0 && !options.all) lines.push(`${counted(lapsed, 'join', 'joins')} lapsed unconfirmed (--all lists them)`);
        if (standing.toOffer > 0) lines.push(`${counted(standing.toOffer, 'place is', 'places are')} free for the next entries: the offer pass (every 30 seconds under serve, or sweep-checkouts) offers them`);
        if (standing.stranded) lines.push(`${counted(standing.stranded.places, 'place', 'places')} free, not offered: ${standing.stranded.reason}`);
        printResult(options, { event: event.slug, waitingList: event.waitingList, entries, lapsed, standing }, lines);
      });
    });

  waitlist
    .command('show')
    .description("one entry: its family, places, state and place in the queue, and its history (joined, confirmed, offered, expired, claimed, removed...)")
    .argument('<entry>', ENTRY_ARGUMENT)
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExample:\n  $ eventops waitlist show W-1A2B3C4D')
    .action(async (given: string, raw: Record<string, unknown>) => {
      const options = parseOrUsage(showSchema, raw, 'waitlist show');
      await withContext(async (ctx) => {
        const { showEntry } = await import('../../registrations/waitlist/office.js');
        const { memberDateTime } = await import('../../time-format.js');
        const when = memberDateTime(ctx.config.regional);
        const shown = await showEntry(ctx, given);
        const { entry } = shown;
        const lines = [
          `${entry.entry} on the waiting list for "${shown.event.slug}"`,
          `  family:  ${entry.name} <${entry.email}>${entry.mobile ? `, ${entry.mobile}` : ''}`,
          `  places:  ${entry.places}${entry.tier ? ` of "${entry.tier}"` : ''}`,
          `  state:   ${entry.state}${entry.position !== null ? ` (number ${entry.position} in the queue)` : ''}${entry.offerExpiresAt ? `, offer held until ${when(new Date(entry.offerExpiresAt))}` : ''}`,
          `  skips:   ${entry.skips}`,
          ...(entry.registrationId ? [`  registration: ${entry.registrationId}`] : []),
          '',
          ...table(
            ['WHEN', 'ACTION', 'BY', 'DETAILS'],
            shown.history.map((line) => [when(new Date(line.at)), line.action, line.actor, [line.note, historyDetails(line.changes)].filter(Boolean).join('; ')]),
          ),
        ];
        printResult(options, shown, lines);
      });
    });

  waitlist
    .command('add')
    .description('put a family on the waiting list, by the same rules as the form, and email them their position (on the list at once: no confirmation)')
    .requiredOption('--event <slug>', 'the event')
    .requiredOption('--name <name>', 'contact name')
    .requiredOption('--email <email>', 'contact email')
    .option('--mobile <mobile>', 'contact mobile')
    .requiredOption('--places <n>', 'places wanted (at most the event\'s maxAttendeesPerRegistration)')
    .option('--tier <id>', 'the ticket type they wait for (one with places of its own that is full, say); default: any')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  $ eventops waitlist add --event family-camp --name "Lee Family" --email lee@example.org --places 4\n' +
        '  $ eventops waitlist add --event family-camp --name "Ng Family" --email ng@example.org --places 1 --tier infant\n\n' +
        "An entry waiting for a ticket type with places of its own is offered only when that type has room too; an entry\n" +
        'waiting for any type is offered the event\'s places and chooses its tickets when it registers.',
    )
    .action(async (raw: Record<string, unknown>) => {
      const options = parseOrUsage(addSchema, raw, 'waitlist add');
      await withContext(async (ctx) => {
        const { getEventBySlug } = await import('../../office/events.js');
        const { addToWaitingList } = await import('../../registrations/waitlist/join.js');
        const { entryReference } = await import('../../registrations/waitlist/entries.js');
        const { NotFoundError } = await import('../../errors.js');
        const event = await getEventBySlug(ctx.db, options.event);
        if (!event) throw new NotFoundError(`event "${options.event}"`, 'run `eventops events list` to see the slugs');
        const joined = await addToWaitingList(
          ctx,
          event,
          { contact: { name: options.name, email: options.email, mobile: options.mobile }, places: options.places, tier: options.tier },
          { actor: operatingSystemUser() },
        );
        const entry = entryReference(joined.entryId);
        printResult(options, { entry, id: joined.entryId, position: joined.position, places: joined.places }, [
          `added ${entry} to the waiting list for "${event.slug}" at position ${joined.position} (${counted(joined.places, 'place', 'places')}); they are emailed their position`,
        ]);
      });
    });

  waitlist
    .command('offer')
    .description('offer an entry its places now, out of order (the places must be free)')
    .argument('<entry>', ENTRY_ARGUMENT)
    .option('--note <text>', 'why, kept in the history')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExample:\n  $ eventops waitlist offer W-1A2B3C4D --note "grandparents of a leader"')
    .action(async (given: string, raw: Record<string, unknown>) => {
      const options = parseOrUsage(offerSchema, raw, 'waitlist offer');
      await withContext(async (ctx) => {
        const { offerNow } = await import('../../registrations/waitlist/office.js');
        const { memberDateTime } = await import('../../time-format.js');
        const result = await offerNow(ctx, given, { note: options.note, actor: operatingSystemUser() });
        printResult(options, { offer: { ...result, expiresAt: result.expiresAt.toISOString() } }, [
          `offered ${counted(result.places, 'place', 'places')} to ${result.entry}, held until ${memberDateTime(ctx.config.regional)(result.expiresAt)}; the offer email is queued`,
        ]);
      });
    });

  waitlist
    .command('remove')
    .description('take an entry off the waiting list (an open offer is withdrawn and its places pass on)')
    .argument('<entry>', ENTRY_ARGUMENT)
    .option('--note <text>', 'why, kept in the history')
    .option('--notify', 'email the family that they are off the list')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExample:\n  $ eventops waitlist remove W-1A2B3C4D --notify')
    .action(async (given: string, raw: Record<string, unknown>) => {
      const options = parseOrUsage(removeSchema, raw, 'waitlist remove');
      await withContext(async (ctx) => {
        const { removeEntry } = await import('../../registrations/waitlist/office.js');
        const result = await removeEntry(ctx, given, { note: options.note, notify: options.notify, actor: operatingSystemUser() });
        printResult(options, { removal: result }, [
          `removed ${result.entry} from the waiting list (was ${result.previousState})${result.notified ? '; the family is notified' : ''}`,
        ]);
      });
    });
}

/** A history row's changes as one short line: `places 4, position 2`; nested values as JSON. */
function historyDetails(changes: Record<string, unknown>): string {
  return Object.entries(changes)
    .map(([key, value]) => {
      if (value !== null && typeof value === 'object' && 'from' in value && 'to' in value) return `${key} ${String(value.from)} → ${String(value.to)}`;
      return `${key} ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`;
    })
    .join(', ');
}
