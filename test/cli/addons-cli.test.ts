import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { insertEvent } from '../support/factories.js';
import { useOfficeCli } from '../support/office-cli.js';
import { fromReferenceNow } from '../support/test-now.js';

// The subprocess runs on the real clock (followRealClock, in useOfficeCli).
const office = useOfficeCli();
const cli = (args: string[]) => runCli(args, { env: office.env });

async function busCamp(): Promise<{ slug: string; id: string }> {
  return insertEvent(office.db, {
    capacity: 20,
    starts_at: fromReferenceNow({ days: 30 }),
    pricing: JSON.stringify({
      tiers: [
        { id: 'adult', label: 'Adult', price: 12000 },
        { id: 'child', label: 'Child', price: 6000 },
      ],
      addons: [
        { id: 'bus', label: 'Bus seat', price: 2000, per: 'attendee', stock: 2 },
        { id: 'tshirt', label: 'T-shirt', price: 1500, per: 'attendee', options: ['S', 'M', 'L'] },
        { id: 'lodge', label: 'Lodge room', price: 9000, per: 'registration' },
      ],
    }),
  });
}

const add = (slug: string, email: string, extra: string[]) =>
  cli(['registrations', 'add', '--event', slug, '--name', 'Ruth Office', '--email', email, '--attendee', 'Ruth Office:adult', '--attendee', 'Sam Office:child', '--json', ...extra]);

describe('eventops registrations add --addon, show, export and events addons', () => {
  it('adds add-ons by attendee number or name and per registration, priced and stock-checked like the form; show, export and the counts list them', async () => {
    const event = await busCamp();
    const added = await add(event.slug, 'ruth@example.org', ['--addon', '1:bus', '--addon', 'sam office:bus', '--addon', '2:tshirt=M', '--addon', ':lodge']);
    expect(added.stderr).toBe('');
    const { registration } = JSON.parse(added.stdout) as { registration: { registrationId: string; totalMinor: number } };
    expect(registration.totalMinor).toBe(12000 + 6000 + 2000 * 2 + 1500 + 9000);

    const shown = await cli(['registrations', 'show', registration.registrationId]);
    expect(shown.stdout).toContain('Add-ons:\n  Ruth Office: Bus seat $20.00\n  Sam Office: Bus seat $20.00\n  Sam Office: T-shirt (M) $15.00\n  registration: Lodge room $90.00');

    // The bus has 2 seats, both taken: the office is refused as the form is, and nothing is registered.
    const full = await add(event.slug, 'late@example.org', ['--addon', '1:bus']);
    expect(full.code).toBe(1);
    expect(JSON.parse(full.stderr).error.message).toContain('has 0 Bus seat left, fewer than the 1 asked for; nothing was registered');
    expect(await office.db('registrations').where({ event_id: event.id })).toHaveLength(1);

    const exported = await cli(['registrations', 'export', '--event', event.slug, '--format', 'csv']);
    const rows = parse(exported.stdout, { columns: true, bom: true }) as Array<Record<string, string>>;
    expect(rows.map((row) => [row.attendee_name, row['addon.bus'], row['addon.tshirt'], row['addon.lodge']])).toEqual([
      ['Ruth Office', '1', '', '1'],
      ['Sam Office', '1', 'M', ''],
    ]);

    const counts = await cli(['events', 'addons', event.slug, '--json']);
    expect(JSON.parse(counts.stdout).addons).toEqual([
      { id: 'bus', label: 'Bus seat', per: 'attendee', priceMinor: 2000, paid: 0, pending: 2, inCheckout: 0, stock: 2, left: 0, options: {} },
      { id: 'tshirt', label: 'T-shirt', per: 'attendee', priceMinor: 1500, paid: 0, pending: 1, inCheckout: 0, stock: null, left: null, options: { S: 0, M: 1, L: 0 } },
      { id: 'lodge', label: 'Lodge room', per: 'registration', priceMinor: 9000, paid: 0, pending: 1, inCheckout: 0, stock: null, left: null, options: {} },
    ]);
    const text = await cli(['events', 'addons', event.slug]);
    expect(text.stdout).toContain('Bus seat (bus, $20.00 per attendee): 2 taken (0 paid, 2 pending); 0 of 2 left');
    expect(text.stdout).toContain('  M: 1');

    const roll = await cli(['registrations', 'roll', event.slug]);
    expect(roll.stdout).toContain('Extras: Bus seat, Lodge room');
    expect(roll.stdout).toContain('Extras: Bus seat, T-shirt (M)');

    // A cancellation gives the seats back.
    expect((await cli(['registrations', 'cancel', registration.registrationId])).code).toBe(0);
    expect(JSON.parse((await cli(['events', 'addons', event.slug, '--json'])).stdout).addons[0]).toMatchObject({ pending: 0, left: 2 });
  });

  it('refuses an --addon for an attendee it does not have, an add-on the event lacks, or one the ticket is not offered, and registers nothing', async () => {
    const event = await busCamp();
    const refusals: Array<[string[], string]> = [
      [['--addon', '3:bus'], 'there is no attendee 3 (attendees are numbered 1 to 2 in the order of --attendee)'],
      [['--addon', 'Kim:bus'], 'no --attendee is named "Kim"'],
      [['--addon', '1:boat'], 'the event has no add-on "boat"'],
      [['--addon', 'bus'], 'must be ATTENDEE:ADDON'],
      [['--addon', '1:lodge'], 'Attendee 1 extras: choose one of the extras offered with this ticket'],
      [['--addon', '1:tshirt'], 'Attendee 1 extras: choose T-shirt: S, M, L'],
    ];
    for (const [extra, message] of refusals) {
      const refused = await add(event.slug, 'refused@example.org', extra);
      expect(refused.code).toBe(2);
      expect(JSON.parse(refused.stderr).error.message).toContain(message);
    }
    expect(await office.db('registrations').where({ event_id: event.id })).toHaveLength(0);
  });
});
