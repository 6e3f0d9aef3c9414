import { describe, expect, it } from 'vitest';
import { deliverQueuedMail } from '../../src/mail/queue.js';
import { runCli } from '../support/cli.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { useOfficeCli } from '../support/office-cli.js';

// The subprocess runs the built command on the real clock; the mail it queues is delivered here to a real SMTP sink.
const office = useOfficeCli();
const cli = (args: string[]) => runCli(['waitlist', ...args], { env: office.env });

async function fullEvent(capacity: number) {
  const ctx = office.context();
  const event = await insertEvent(office.db, {
    capacity,
    waitlist_enabled: true,
    waitlist_offer_hours: 48,
    max_attendees_per_registration: 4,
    starts_at: new Date(Date.now() + 30 * 24 * 3600_000),
  });
  const taken: string[] = [];
  for (let i = 0; i < capacity; i++) taken.push((await insertRegistration(office.db, ctx.cipher, event.id)).id);
  return { event, taken };
}

describe('eventops waitlist: the office runs the list', () => {
  it('add emails the position; list shows the queue; offer makes an out-of-order offer with a note; remove --notify tells the family; every change is in the history', async () => {
    const { event, taken } = await fullEvent(2);
    const first = await cli(['add', '--event', event.slug, '--name', 'Lee Family', '--email', 'lee@example.org', '--places', '2', '--json']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const lee = JSON.parse(first.stdout) as { entry: string; position: number };
    expect(lee.position).toBe(1);
    const second = await cli(['add', '--event', event.slug, '--name', 'Ng Family', '--email', 'ng@example.org', '--mobile', '0400 000 111', '--places', '1']);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/^added W-[0-9A-F]{8} to the waiting list for ".*" at position 2 \(1 place\)/);
    const ng = /(W-[0-9A-F]{8})/.exec(second.stdout)?.[1] as string;

    // Same rules as the form: the mailbox is already waiting, and more places than one registration may name.
    const twice = await cli(['add', '--event', event.slug, '--name', 'Lee', '--email', 'LEE@example.org', '--places', '1']);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('already on the waiting list');
    expect((await cli(['add', '--event', event.slug, '--name', 'Big', '--email', 'big@example.org', '--places', '5'])).code).toBe(2);

    await deliverQueuedMail(office.context());
    const joined = await office.mail.sink.waitFor(2);
    expect(joined.map((mail) => mail.envelope.to[0]).sort()).toEqual(['lee@example.org', 'ng@example.org']);
    expect(joined.find((mail) => mail.envelope.to[0] === 'ng@example.org')?.text).toContain('You are number 2 on the waiting list');
    office.mail.sink.clear();

    const listed = await cli(['list', '--event', event.slug]);
    expect(listed.code).toBe(0);
    expect(listed.stdout.split('\n')[0]).toMatch(/^#\s+ENTRY\s+NAME\s+EMAIL\s+PLACES\s+STATE\s+OFFER EXPIRES$/);
    expect(listed.stdout).toMatch(new RegExp(`1\\s+${lee.entry}\\s+Lee Family\\s+lee@example.org\\s+2\\s+WAITING`));

    // No free place yet: the offer is refused, naming why.
    const refused = await cli(['offer', ng]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('only 0 are free');

    const ctx = office.context();
    const { cancelRegistration } = await import('../../src/office/registrations/cancel.js');
    await cancelRegistration(ctx, { registration: taken[0] as string, actor: 'office' });
    const offered = await cli(['offer', ng.toLowerCase(), '--note', 'helps in the kitchen']);
    expect(offered.stderr).toBe('');
    expect(offered.code).toBe(0);
    expect(offered.stdout).toContain(`offered 1 place to ${ng}, held until`);
    await deliverQueuedMail(office.context());
    const [offerMail] = await office.mail.sink.waitFor(1);
    expect(offerMail?.envelope.to).toEqual(['ng@example.org']);
    expect(offerMail?.text).toContain('/events/');

    const json = JSON.parse((await cli(['list', '--event', event.slug, '--json'])).stdout) as { entries: Array<{ entry: string; state: string; position: number; offerExpiresAt: string | null }> };
    expect(json.entries.map((e) => [e.entry, e.position, e.state])).toEqual([
      [lee.entry, 1, 'WAITING'],
      [ng, 2, 'OFFERED'],
    ]);
    expect(json.entries[1]?.offerExpiresAt).not.toBeNull();

    office.mail.sink.clear();
    const removed = await cli(['remove', ng, '--notify', '--note', 'cannot come after all']);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toBe(`removed ${ng} from the waiting list (was OFFERED); the family is notified\n`);
    await deliverQueuedMail(office.context());
    expect((await office.mail.sink.waitFor(1))[0]?.text).toContain('You are no longer on the waiting list');
    expect((await cli(['remove', ng])).code).toBe(1);

    const entry = await office.db('waitlist_entries').where({ event_id: event.id, state: 'REMOVED' }).first();
    const history = await office.db('waitlist_history').where({ entry_id: entry.id }).orderBy('id').select('action', 'note', 'changes');
    expect(history.map((h) => h.action)).toEqual(['joined', 'offered', 'removed']);
    expect(history[1]).toMatchObject({ note: 'helps in the kitchen', changes: { outOfOrder: true } });
    expect(history[2]).toMatchObject({ note: 'cannot come after all', changes: { placesFreed: 1 } });

    // The entry's own page: its family, state and every change, with who made it.
    const shown = await cli(['show', ng]);
    expect(shown.stderr).toBe('');
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`${ng} on the waiting list for "${event.slug}"`);
    expect(shown.stdout).toContain('family:  Ng Family <ng@example.org>, 0400 000 111');
    expect(shown.stdout).toContain('state:   REMOVED');
    expect(shown.stdout.split('\n').filter((line) => /\b(joined|offered|removed)\b/.test(line)).map((line) => /\b(joined|offered|removed)\b/.exec(line)?.[1])).toEqual(['joined', 'offered', 'removed']);
    expect(shown.stdout).toMatch(/offered .*helps in the kitchen; .*state WAITING → OFFERED/);
    const shownJson = JSON.parse((await cli(['show', ng, '--json'])).stdout) as { entry: { state: string }; history: Array<{ action: string }> };
    expect(shownJson.entry.state).toBe('REMOVED');
    expect(shownJson.history.map((line) => line.action)).toEqual(['joined', 'offered', 'removed']);
    expect((await cli(['show', 'W-00000000'])).code).toBe(1);
  });

  it('status and list show free places nobody waiting can take, and why: on public sale while only a larger family waits', async () => {
    const { event, taken } = await fullEvent(4);
    expect((await cli(['add', '--event', event.slug, '--name', 'Big Family', '--email', 'big@example.org', '--places', '4'])).code).toBe(0);
    const { cancelRegistration } = await import('../../src/office/registrations/cancel.js');
    for (const id of taken.slice(0, 2)) await cancelRegistration(office.context(), { registration: id, actor: 'office' });

    const status = await runCli(['status'], { env: office.env });
    expect(status.stdout).toContain(`waiting list ${event.slug}: 1 waiting, 0 open offers holding 0 places\n  2 places free, not offered: no waiting entry fits them (the smallest wants 4 places): on public sale`);
    const listed = await cli(['list', '--event', event.slug]);
    expect(listed.stdout).toContain('2 places free, not offered: no waiting entry fits them (the smallest wants 4 places): on public sale');
    const json = JSON.parse((await cli(['list', '--event', event.slug, '--json'])).stdout) as { standing: unknown };
    expect(json.standing).toEqual({ free: 2, toOffer: 0, stranded: { places: 2, onPublicSale: true, reason: expect.stringContaining('no waiting entry fits') } });
  });

  it('status shows waiting entries and open offers per event', async () => {
    const { event } = await fullEvent(1);
    await cli(['add', '--event', event.slug, '--name', 'Status Family', '--email', 'status@example.org', '--places', '1']);
    const status = await runCli(['status'], { env: office.env });
    expect(status.stdout).toContain(`waiting list ${event.slug}: 1 waiting, 0 open offers holding 0 places`);
  });
});
