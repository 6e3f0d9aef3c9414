import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { formatInTimeZone } from 'date-fns-tz';
import { describe, expect, it } from 'vitest';
import { findLiveCheckinLink, tokenHash } from '../../src/door/links.js';
import { recordCheckinAction } from '../../src/registrations/checkin/records.js';
import { paymentReference } from '../../src/registrations/reference.js';
import { insertCamp, registerFamily } from '../support/checkin-fixtures.js';
import { runCli } from '../support/cli.js';
import { useOfficeCli } from '../support/office-cli.js';

// The subprocess runs the built command on the real clock, against this file's database.
const office = useOfficeCli();
const cli = (args: string[]) => runCli(args, { env: office.env });
const LINK = /^http:\/\/127\.0\.0\.1:3000\/checkin\/([A-Za-z0-9_-]{43})$/m;

const HOUR = 3_600_000;
const startOf = new Map<string, number>();
const eventStartsAt = (event: { id: string }) => startOf.get(event.id) as number;

async function camp(times: { startsAt?: Date; endsAt?: Date } = {}) {
  const ctx = office.context();
  const startsAt = times.startsAt ?? new Date(Date.now() + 86_400_000);
  const event = await insertCamp(office.db, { starts_at: startsAt, ends_at: times.endsAt ?? null });
  startOf.set(event.id, startsAt.getTime());
  const before = new Date(Date.now() - 86_400_000);
  const lee = await registerFamily(office.db, ctx.cipher, event, {
    contact: 'Ruth Lee',
    now: before,
    attendees: [
      { name: 'Ruth Lee', tier: 'adult' },
      { name: 'Mia Lee', tier: 'child', answers: { allergies: 'Peanuts', medication: 'Ventolin' } },
    ],
  });
  const ng = await registerFamily(office.db, ctx.cipher, event, { contact: 'Ann Ng', status: 'PAID', now: before, attendees: [{ name: 'Ann Ng', tier: 'adult' }] });
  return { event, lee, ng };
}

describe('eventops checkin: links for the door', () => {
  it('link prints a secret link once and keeps only its hash; list shows it without the token; revoke by label or id stops it', async () => {
    const { event } = await camp();
    const made = await cli(['checkin', 'link', event.slug, '--hours', '30', '--label', 'Front door', '--can-take-payment']);
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    const token = LINK.exec(made.stdout)?.[1] as string;
    expect(token).toBeDefined();
    expect(made.stdout).toMatch(/check-in link [0-9a-f]{8} "Front door" for .*, can take payments at the door\nWorks until /);
    const row = await office.db('checkin_links').where({ event_id: event.id }).first();
    expect(row).toMatchObject({ label: 'Front door', can_take_payment: true, token_hash: tokenHash(token) });
    expect(JSON.stringify(row)).not.toContain(token);
    const hours = (row.expires_at.getTime() - row.created_at.getTime()) / 3_600_000;
    expect(hours).toBe(30);

    const side = await cli(['checkin', 'link', event.slug, '--label', 'Side door', '--json']);
    const sideLink = JSON.parse(side.stdout).link as { id: string; url: string; expiresAt: string };
    expect(new Date(sideLink.expiresAt).getTime()).toBe(eventStartsAt(event) + (2 + 6) * HOUR);

    const listed = await cli(['checkin', 'list', '--event', event.slug]);
    expect(listed.code).toBe(0);
    expect(listed.stdout.split('\n')[0]).toMatch(/^ID\s+EVENT\s+LABEL\s+PAYMENTS\s+UNTIL\s+STATE$/);
    expect(listed.stdout).toMatch(/Front door\s+yes\s+\S+ \S+\s+live/);
    // Until when, in the church's zone, said once under the table as `checkin link` says it beside its time.
    expect(listed.stdout.trimEnd().split('\n').at(-1)).toMatch(/^times in [A-Za-z_]+\/[A-Za-z_]+$/);
    expect(listed.stdout).not.toContain(token);

    const revoked = await cli(['checkin', 'revoke', 'front door', '--event', event.slug]);
    expect(revoked.stderr).toBe('');
    expect(revoked.stdout).toMatch(/^revoked 1 check-in link: [0-9a-f]{8} "Front door"/);
    expect(await findLiveCheckinLink(office.db, token, new Date())).toBeUndefined();
    expect(await findLiveCheckinLink(office.db, new URL(sideLink.url).pathname.split('/')[2] as string, new Date())).toBeDefined();
    expect((await cli(['checkin', 'list', '--event', event.slug])).stdout).toMatch(/Front door\s+yes\s+\S+ \S+\s+revoked/);

    expect((await cli(['checkin', 'revoke', sideLink.id.slice(0, 8)])).code).toBe(0);
    const again = await cli(['checkin', 'revoke', sideLink.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already revoked');
    expect((await cli(['checkin', 'revoke', 'Back door'])).code).toBe(1);
    expect((await cli(['checkin', 'link', event.slug, '--hours', '0'])).code).toBe(2);
    expect((await cli(['checkin', 'link', 'no-such-event'])).code).toBe(1);
  });
});

describe('eventops checkin link: how long a link works', () => {
  const CHICAGO = 'America/Chicago';
  const inChicago = (args: string[]) => runCli(args, { env: { ...office.env, APP_TIMEZONE: CHICAGO } });
  const worksUntil = (instant: Date) => `Works until ${formatInTimeZone(instant, CHICAGO, 'EEE d MMM yyyy, HH:mm')} (${CHICAGO}).`;

  it('without --hours a link works until six hours after the event ends, and the expiry is printed in the church\'s time zone, naming it', async () => {
    const startsAt = new Date(Math.floor(Date.now() / 60_000) * 60_000 + 3 * 24 * HOUR);
    const endsAt = new Date(startsAt.getTime() + 2 * 24 * HOUR);
    const { event } = await camp({ startsAt, endsAt });
    const made = await inChicago(['checkin', 'link', event.slug, '--label', 'Weekend']);
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    const row = await office.db('checkin_links').where({ event_id: event.id, label: 'Weekend' }).first();
    expect(row.expires_at.getTime()).toBe(endsAt.getTime() + 6 * HOUR);
    expect(made.stdout).toContain(worksUntil(row.expires_at));
    expect(made.stdout).toMatch(/Works until [A-Z][a-z]{2} \d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} \(America\/Chicago\)\./);
  });

  it('an event without an end is taken to last two hours: its link works until eight hours after it starts', async () => {
    const { event } = await camp({ startsAt: new Date(Date.now() + 2 * HOUR) });
    const made = await inChicago(['checkin', 'link', event.slug, '--json']);
    expect(made.code).toBe(0);
    expect(new Date((JSON.parse(made.stdout) as { link: { expiresAt: string } }).link.expiresAt).getTime()).toBe(eventStartsAt(event) + 8 * HOUR);
  });

  it('warns on standard error, and still makes the link, when --hours is over before the event starts', async () => {
    const { event } = await camp({ startsAt: new Date(Date.now() + 24 * HOUR) });
    const made = await inChicago(['checkin', 'link', event.slug, '--hours', '12', '--label', 'Early']);
    expect(made.code).toBe(0);
    expect(made.stderr).toMatch(/^warning: this link stops working .+ \(America\/Chicago\), before the event starts .+ \(America\/Chicago\): leave out --hours for a link that works until the event is over\n$/);
    expect(LINK.test(made.stdout)).toBe(true);
    expect(await office.db('checkin_links').where({ event_id: event.id, label: 'Early' }).count({ n: '*' }).first()).toEqual({ n: 1 });
    // Long enough to reach into the event: no warning.
    expect((await inChicago(['checkin', 'link', event.slug, '--hours', '26'])).stderr).toBe('');
  });

  it('refuses a default link for an event that is over, or that ends more than two weeks (336 hours) away, saying what to do instead', async () => {
    const over = await camp({ startsAt: new Date(Date.now() - 10 * HOUR), endsAt: new Date(Date.now() - 7 * HOUR) });
    const late = await inChicago(['checkin', 'link', over.event.slug]);
    expect(late.code).toBe(1);
    expect(late.stderr).toContain(`the event "${over.event.slug}" is over`);
    expect(late.stderr).toContain('suggestion: to make one all the same (for check-outs, say), give how long it works: --hours 2');
    expect((await inChicago(['checkin', 'link', over.event.slug, '--hours', '2'])).code).toBe(0);

    const far = await camp({ startsAt: new Date(Date.now() + 20 * 24 * HOUR) });
    const early = await inChicago(['checkin', 'link', far.event.slug]);
    expect(early.code).toBe(1);
    expect(early.stderr).toContain('a check-in link works at most 336 hours');
    expect(await office.db('checkin_links').whereIn('event_id', [over.event.id, far.event.id]).count({ n: '*' }).first()).toEqual({ n: 1 });
  });
});

describe('eventops registrations roll and show, export and events attendance', () => {
  it('roll prints one line per attendee with boxes and the flags, to a 0600 file or standard output', async () => {
    const { event, lee } = await camp();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-roll-'));
    const file = path.join(dir, 'roll.html');
    const written = await cli(['registrations', 'roll', event.slug, '--out', file]);
    expect(written.stderr).toBe('');
    expect(written.stdout).toBe(`wrote the roll of 3 attendees to ${file} (mode 0600); open it in a browser to print\n`);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const html = fs.readFileSync(file, 'utf8');
    expect(html).toContain('@media print');
    const lines = [...html.matchAll(/<tr class="attendee">([\s\S]*?)<\/tr>/g)].map((m) => m[1] ?? '');
    expect(lines).toHaveLength(3);
    const mia = lines.find((line) => line.includes('Mia Lee')) ?? '';
    expect(mia).toContain('&#9744;');
    expect(mia).toContain('Owes $180.00');
    expect(mia).toContain('Guardian: <bdi>Ruth Lee</bdi>');
    expect(mia).toContain('Allergies: Peanuts');
    expect(mia).toContain(paymentReference(lee));
    expect(html).not.toContain('Ventolin');
    const printed = await cli(['registrations', 'roll', event.slug]);
    expect(printed.code).toBe(0);
    expect(printed.stdout.startsWith('<!doctype html>')).toBe(true);
  });

  it('attendance: who came, who did not, and the walk-in added with --at-door; show and export carry the check-ins', async () => {
    const { event, lee, ng } = await camp();
    const now = new Date();
    await recordCheckinAction(office.db, { eventId: event.id, registrationId: lee, attendeeIndex: 1, action: 'check_in', label: 'Front door', at: now, now });
    await recordCheckinAction(office.db, { eventId: event.id, registrationId: lee, attendeeIndex: 1, action: 'check_out', label: 'Kids room', at: now, now });
    const walkIn = await cli(['registrations', 'add', '--event', event.slug, '--name', 'Walk Inn', '--email', 'walk@example.org', '--attendee', 'Walk Inn:adult', '--paid', 'cash', '--at-door']);
    expect(walkIn.stderr).toBe('');
    expect(walkIn.code).toBe(0);
    expect(walkIn.stdout).toContain('checked in 1 attendee at the door');

    const report = await cli(['events', 'attendance', event.slug]);
    expect(report.stderr).toBe('');
    expect(report.code).toBe(0);
    expect(report.stdout).toContain(': 1 of 3 registered attendees came, 2 did not; 1 walk-in');
    expect(report.stdout).toMatch(/Came \(1\):\n {2}Mia Lee \(Child\) [0-9A-F]{8}, in \S+ \S+ Front door, out \S+ \S+ Kids room\n/);
    expect(report.stdout).toMatch(/Did not come \(2\):\n {2}Ann Ng \(Adult\)[^\n]*\n {2}Ruth Lee \(Adult\)/);
    expect(report.stdout).toMatch(/Came unregistered \(1\):\n {2}Walk Inn \(Adult\) [0-9A-F]{8}, in \S+ \S+ at the door \(/);
    const json = JSON.parse((await cli(['events', 'attendance', event.slug, '--json'])).stdout) as { came: unknown[]; didNotCome: unknown[]; walkIns: Array<{ name: string }> };
    expect([json.came.length, json.didNotCome.length, json.walkIns.map((w) => w.name)]).toEqual([1, 2, ['Walk Inn']]);

    const show = await cli(['registrations', 'show', paymentReference(lee)]);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/Check-in:\n {2}\S+ \S+ Mia Lee checked in \(Front door\)\n {2}\S+ \S+ Mia Lee checked out \(Kids room\)\nHistory:/);
    expect((await cli(['registrations', 'show', paymentReference(ng)])).stdout).toContain('Check-in:\n  none\n');

    const csv = await cli(['registrations', 'export', '--event', event.slug]);
    const rows = parse(csv.stdout, { columns: true, bom: true }) as Array<Record<string, string>>;
    const mia = rows.find((row) => row.attendee_name === 'Mia Lee');
    expect(mia).toMatchObject({ checked_in_by: 'Front door', checked_out_by: 'Kids room' });
    expect(mia?.checked_in_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);
    expect(rows.find((row) => row.attendee_name === 'Ann Ng')).toMatchObject({ checked_in_at: '', checked_in_by: '', checked_out_at: '', checked_out_by: '' });
  });
});
