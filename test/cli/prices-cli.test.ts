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
