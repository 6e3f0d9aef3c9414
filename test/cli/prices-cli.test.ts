import { describe, expect, it } from 'vitest';
import { localDay } from '../../src/local-time.js';
import { runCli } from '../support/cli.js';
import { insertEvent } from '../support/factories.js';
import { useOfficeCli } from '../support/office-cli.js';
import { fromReferenceNow } from '../support/test-now.js';

// The subprocess runs on the real clock: dates are measured from it (followRealClock, in useOfficeCli).
const office = useOfficeCli();
const ZONE = 'Australia/Sydney';
const cli = (args: string[]) => runCli(args, { env: office.env });
const nextDay = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);

async function scheduledEvent(): Promise<{ slug: string; until: string }> {
  const until = localDay(fromReferenceNow({ days: 3 }), ZONE);
  const event = await insertEvent(office.db, {
    capacity: 20,
    starts_at: fromReferenceNow({ days: 30 }),
    pricing: JSON.stringify({ tiers: [{ id: 'adult', label: 'Adult', prices: [{ until, price: 30000 }, { price: 35000 }] }] }),
  });
  return { slug: event.slug, until };
}

const add = (slug: string, email: string, extra: string[] = []) =>
  cli(['registrations', 'add', '--event', slug, '--name', 'Ruth Office', '--email', email, '--attendee', 'Ruth Office:adult', '--json', ...extra]);

describe('eventops registrations add: prices that change by date', () => {
  it("prices at today's step unless --price-at names another day, and show says which day's prices it keeps", async () => {
    const { slug, until } = await scheduledEvent();

    const today = await add(slug, 'today@example.org');
    expect(today.stderr).toBe('');
    expect(JSON.parse(today.stdout).registration).toMatchObject({ totalMinor: 30000 });

    const late = await add(slug, 'late@example.org', ['--price-at', nextDay(until)]);
    expect(late.code).toBe(0);
    const { registration } = JSON.parse(late.stdout) as { registration: { registrationId: string; totalMinor: number } };
    expect(registration.totalMinor).toBe(35000);
    expect(await office.db('registrations').where({ id: registration.registrationId }).first()).toMatchObject({ priced_on: nextDay(until), total_minor: 35000 });

    const shown = await cli(['registrations', 'show', registration.registrationId]);
    expect(shown.stdout).toContain(`Price: (the prices of ${nextDay(until)}, fixed when it was made)`);
  });

  it('refuses a --price-at that is not a date, naming the option, and registers nothing', async () => {
    const { slug } = await scheduledEvent();
    const refused = await add(slug, 'bad-date@example.org', ['--price-at', '2030-02-30']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--price-at');
    expect(refused.stderr).toContain('a date that exists on the calendar');
    const event = await office.db('events').where({ slug }).first();
    expect(await office.db('registrations').where({ event_id: event.id })).toEqual([]);
  });
});

describe('eventops codes: create, list, disable, and registrations add --code', () => {
  async function campWithCodes(): Promise<{ slug: string; id: string }> {
    return insertEvent(office.db, {
      capacity: 20,
      starts_at: fromReferenceNow({ days: 30 }),
      pricing: JSON.stringify({
        tiers: [
          { id: 'adult', label: 'Adult', price: 12000 },
          { id: 'child', label: 'Child', price: 6000 },
          { id: 'leader', label: 'Leader', price: 9000, hidden: true },
        ],
      }),
    });
  }

  it('creates codes, lists their live uses and what they took off, and disables one; the office is told exactly why a code is refused', async () => {
    const event = await campWithCodes();
    const created = await cli(['codes', 'create', '--event', event.slug, '--code', 'STAFF26', '--percent', '50', '--max-uses', '1', '--note', 'staff families', '--json']);
    expect(created.stderr).toBe('');
    expect(JSON.parse(created.stdout).code).toMatchObject({ code: 'STAFF26', percent: 50, maxUses: 1, uses: 0, state: 'active', effect: '50% off' });
    expect((await cli(['codes', 'create', '--event', event.slug, '--code', 'LEADERS', '--price', 'leader=0', '--reveals', 'leader'])).stdout).toContain(
      `created LEADERS for ${event.slug}: leader at $0.00 reveals leader; no limit of uses`,
    );

    const added = await cli(['registrations', 'add', '--event', event.slug, '--name', 'Sam Staff', '--email', 'sam.staff@example.org', '--attendee', 'Sam Staff:adult', '--attendee', 'Kim Staff:child', '--code', 'staff26', '--json']);
    expect(added.stderr).toBe('');
    const { registration } = JSON.parse(added.stdout) as { registration: { registrationId: string; totalMinor: number; code: unknown } };
    expect(registration).toMatchObject({ totalMinor: 9000, code: { code: 'STAFF26', discountMinor: 9000 } });

    const usedUp = await cli(['registrations', 'add', '--event', event.slug, '--name', 'Late Staff', '--email', 'late.staff@example.org', '--attendee', 'Late Staff:adult', '--code', 'STAFF26']);
    expect(usedUp.code).toBe(1);
    expect(usedUp.stderr).toContain('the code STAFF26 has been used 1 of 1 time');
    const unknown = await cli(['registrations', 'add', '--event', event.slug, '--name', 'No Code', '--email', 'no.code@example.org', '--attendee', 'No Code:adult', '--code', 'NOPE']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(`${event.slug} has no code "NOPE"`);

    const listed = await cli(['codes', 'list', '--event', event.slug]);
    expect(listed.stdout).toMatch(/STAFF26\s+50% off\s+1\/1\s+\$90\.00\s+used up\s+staff families/);
    const json = JSON.parse((await cli(['codes', 'list', '--event', event.slug, '--json'])).stdout) as { codes: Array<{ code: string; uses: number; discountedMinor: number }> };
    expect(json.codes.map((c) => [c.code, c.uses, c.discountedMinor])).toEqual([['STAFF26', 1, 9000], ['LEADERS', 0, 0]]);

    const shown = await cli(['registrations', 'show', registration.registrationId]);
    expect(shown.stdout).toContain('code STAFF26: took off $90.00');
    const exported = await cli(['registrations', 'export', '--event', event.slug, '--format', 'csv']);
    expect(exported.stdout).toContain('balance_owing,checked_in_at');
    expect(exported.stdout).toContain(',code,code_discount,');
    expect(exported.stdout).toContain(',STAFF26,90.00,');

    const disabled = await cli(['codes', 'disable', 'leaders', '--event', event.slug]);
    expect(disabled.stdout).toContain(`disabled LEADERS of ${event.slug}`);
    const refused = await cli(['registrations', 'add', '--event', event.slug, '--name', 'Lee Leader', '--email', 'lee@example.org', '--attendee', 'Lee Leader:leader', '--code', 'LEADERS']);
    expect(refused.stderr).toContain('the code LEADERS was disabled');
  });

  it('refuses a code that is not valid, naming each option, and one the event has already in another case', async () => {
    const event = await campWithCodes();
    const bad = await cli(['codes', 'create', '--event', event.slug, '--code', 'BAD', '--percent', '10', '--amount', '500', '--tiers', 'adult,nosuch', '--reveals', 'child']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('give one of --percent, --amount and --price');
    expect(bad.stderr).toContain(`--tiers names "nosuch", which ${event.slug} does not have (its tiers: adult, child, leader)`);
    expect(bad.stderr).toContain('--reveals names "child", which is not hidden');
    expect((await cli(['codes', 'create', '--event', event.slug, '--code', 'bad code', '--percent', '10'])).stderr).toContain('--code must be 1 to 40 letters, digits, - or _');
    expect((await cli(['codes', 'create', '--event', event.slug, '--code', 'X', '--price', 'adult'])).stderr).toContain('"adult" must be TIER=MINOR');

    expect((await cli(['codes', 'create', '--event', event.slug, '--code', 'Welcome', '--amount', '1000'])).code).toBe(0);
    const twice = await cli(['codes', 'create', '--event', event.slug, '--code', 'WELCOME', '--amount', '500']);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain(`${event.slug} already has the code WELCOME (codes are the same whatever their case)`);
    expect((await cli(['codes', 'disable', 'NOPE', '--event', event.slug])).code).toBe(1);
  });
});
