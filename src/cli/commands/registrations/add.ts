import type { Command } from 'commander';
import { UsageError } from '../../../errors.js';
import { printResult, withContext } from '../../io.js';
import { parseOrUsage } from '../../usage.js';
import { operatingSystemUser } from './shared.js';
import { counted } from '../../../plural.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerAddCommand(registrations: Command): void {
  registrations
    .command('add')
    .description('register someone by hand, priced and seat-checked like the public form; they get the same confirmation')
    .requiredOption('--event <slug>', 'the event')
    .requiredOption('--name <name>', "the contact's name")
    .requiredOption('--email <email>', "the contact's email address")
    .option('--mobile <mobile>', "the contact's mobile")
    .option('--attendee <name:tier>', "an attendee and their ticket type's id in the event (adult or Adult; an unknown one lists them); repeat for each", collect)
    .option('--family', 'one household: the family waiver applies')
    .option(
      '--paid <how>',
      'bank or cash when the office already received the money (PAID, receipt sent); card for the card payment of the alert --resolve-alert names (the default there); none (default otherwise) for a PENDING bank-transfer registration',
    )
    .option('--over-capacity', 'exceed the capacity knowingly')
    .option('--resolve-alert <id>', 'resolve this open alert (a payment kept without a registration) as answered by this registration, paid by that payment')
    .option('--note <text>', 'kept in the history (and the alert resolution)')
    .option('--at-door', 'a walk-in on the day: checks every attendee in, and `events attendance` lists them as came unregistered')
    .option('--addon <attendee:addon>', 'an add-on for the attendee numbered (1 for the first --attendee) or named so, e.g. 1:bus, "Sam Smith:tshirt=M"; :lodge for one per registration; repeat for each', collect)
    .option('--code <code>', "one of the event's codes (case does not matter): its discount applies once to this registration, which counts as one use")
    .option('--price-at <date>', "price it at the prices of this day (yyyy-mm-dd, the church's time zone), e.g. the early price promised to a family; default: today's")
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ eventops registrations add --event family-camp --name "Sam Smith" --email sam@example.org \\
      --attendee "Sam Smith:adult" --attendee "Kim Smith:child" --family
  $ eventops registrations add --event family-camp --name "Ana Lee" --email ana@example.org \\
      --attendee "Ana Lee:adult" --over-capacity --resolve-alert 12 --note "paid by card, event was full"

A ticket type whose price changes by date costs today's price, or that of the day --price-at
names. Once made, a registration keeps its price: later price changes never reprice it.

With --resolve-alert of a card payment kept without a registration, the registration is PAID by
that card payment (its amount, the card fee as its own line, the provider's payment linked) and
the receipt says card; --paid bank or cash is refused there, and so is an amount charged that is
not what these attendees cost by card. --paid card needs such an alert.

The names, email and mobile are checked as the public form checks them (names at most 80
characters, no web or email address in them). Exit 1 when the event is full (without
--over-capacity) or the alert is not open or not answered by this registration, 2 for bad
arguments, such as a name or address the form would refuse.`,
    )
    .action(async (raw: Record<string, unknown>) => {
      if (raw.attendee === undefined) throw new UsageError('at least one --attendee "Name:tier" is required', 'see `eventops registrations add --help`');
      const { addOptionsSchema } = await import('./add-options.js');
      const options = parseOrUsage(addOptionsSchema, raw, 'registrations add');
      if (options.paid === 'card' && options.resolveAlert === undefined) {
        throw new UsageError('--paid card needs --resolve-alert: a card payment is recorded only from the alert of one kept without a registration', 'for money the office received, use --paid bank or --paid cash');
      }
      await withContext(async (ctx) => {
        const { addRegistration } = await import('../../../office/registrations/add.js');
        const { moneyFormatter } = await import('../../../office/registrations/money.js');
        const money = moneyFormatter(ctx.config.regional);
        const result = await addRegistration(ctx, {
          eventSlug: options.event,
          contact: { name: options.name, email: options.email, mobile: options.mobile },
          attendees: options.attendee,
          family: Boolean(options.family),
          paid: options.paid,
          overCapacity: Boolean(options.overCapacity),
          resolveAlert: options.resolveAlert,
          note: options.note,
          actor: operatingSystemUser(),
          atDoor: Boolean(options.atDoor),
          priceAt: options.priceAt,
          code: options.code,
          addons: options.addon,
        });
        const lines = [
          `registered ${result.reference} (${result.status}, ${result.method}, ${money(result.totalMinor)}) for ${options.event}; the ${result.status === 'PAID' && result.method !== 'free' ? 'receipt' : 'confirmation'} is queued`,
        ];
        if (result.code) lines.push(`code ${result.code.code} took off ${money(result.code.discountMinor)}`);
        if (result.seatsLeft !== null) lines.push(result.overCapacity ? `the event is now ${-result.seatsLeft} over its capacity` : `${counted(result.seatsLeft, 'place', 'places')} left`);
        if (result.resolvedAlert !== null) lines.push(`resolved alert ${result.resolvedAlert}`);
        if (options.atDoor) lines.push(`checked in ${counted(options.attendee.length, 'attendee', 'attendees')} at the door`);
        printResult(options, { registration: result }, lines);
      });
    });
}
