import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseEventFile } from '../../src/office/event-file.js';
import { createEvent } from '../../src/office/events.js';
import { markRegistrationPaid } from '../../src/office/registrations/mark-paid.js';
import { updateRegistrationContact } from '../../src/office/registrations/update-contact.js';
import { moneyFormatter } from '../../src/office/registrations/money.js';
import { sendEventReminders } from '../../src/jobs/send-reminders.js';
import { deliverQueuedMail } from '../../src/mail/queue.js';
import { registrationPath } from '../../src/http/registration-view.js';
import { managePath, manageToken, readManageToken } from '../../src/payments/manage-link.js';
import { seatsLeft } from '../../src/registrations/registrations.js';
import { paymentReference } from '../../src/registrations/reference.js';
import { pathForLog } from '../../src/secret-paths.js';
import { insertEvent, insertRegistration, insertUser } from '../support/factories.js';
import { useServerWithSink } from '../support/server-fixture.js';

const T0 = new Date('2026-11-22T00:00:00Z');
const web = useServerWithSink({ now: T0, truncate: 'registrations, events, users, queued_mail, operations_alerts, rate_limits, app_settings' });
const { clock, mail, context } = web;
const money = moneyFormatter({ locale: 'en-AU', currency: 'AUD' });


/** Handlebars writes "=" in attribute values as &#x3D;, which browsers read as "=". */
const unescapeEquals = (html: string) => html.replaceAll('&#x3D;', '=');

async function get(path: string) {
  const response = await fetch(`${web.server.url}${path}`, { redirect: 'manual', headers: { accept: 'text/html' } });
  return { status: response.status, headers: response.headers, html: unescapeEquals(await response.text()) };
}

type Fields = Record<string, string | string[]>;
async function post(path: string, fields: Fields = {}) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) for (const v of [value].flat()) params.append(key, v);
  const response = await fetch(`${web.server.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: params.toString(),
  });
  return { status: response.status, headers: response.headers, html: unescapeEquals(await response.text()) };
}

const deliver = () => deliverQueuedMail(context(), { limit: 100 });
const MANAGE_LINK = /Manage your registration: http:\/\/127\.0\.0\.1:3000(\/manage\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)/;
const linkIn = (text: string | undefined) => MANAGE_LINK.exec(text ?? '')?.[1];
const mailTo = (address: string) => mail.sink.messages.filter((m) => m.envelope.to.some((to) => to.toLowerCase() === address.toLowerCase()));

/** A registration of `attendees` (names), PENDING by bank transfer unless overridden, and its current manage path. */
async function registration(eventId: string, overrides: Record<string, unknown> & { email?: string } = {}, attendees = ['Sam Member']) {
  const ctx = context();
  const { id } = await insertRegistration(web.tdb.db, ctx.cipher, eventId, {
    email: 'sam@example.org',
    status: 'PENDING',
    attendees: JSON.stringify(attendees.map((name) => ({ name, tier: 'adult' }))),
    attendee_count: attendees.length,
    line_items: JSON.stringify(attendees.map((name) => ({ label: `Adult — ${name}`, amount: 12000, kind: 'ticket' }))),
    total_minor: 12000 * attendees.length,
    ...overrides,
  });
  return { id, path: managePath(ctx.config.authSecret, { registrationId: id, version: 1 }) };
}

/** The named fields of one form of a page, as a browser would post them untouched. */
function formFields(html: string, formId: string): Record<string, string[]> {
  const form = new RegExp(`<form[^>]*id="${formId}"[^>]*>([\\s\\S]*?)</form>`).exec(html)?.[1] ?? '';
  const fields: Record<string, string[]> = {};
  for (const input of form.matchAll(/<input\b[^>]*>/g)) {
    const name = /\bname="([^"]*)"/.exec(input[0])?.[1];
    if (name) (fields[name] ??= []).push(/\bvalue="([^"]*)"/.exec(input[0])?.[1] ?? '');
  }
  return fields;
}

const details = (overrides: Fields = {}): Fields => ({ name: 'Sam Member', email: 'sam@example.org', mobile: '', attendee_name: ['Sam Member'], ...overrides });
const historyOf = (id: string) => web.tdb.db('registration_history').where({ registration_id: id }).orderBy('id').select('action', 'actor', 'changes');

describe('the manage link in every email', () => {
  it('comes in the confirmation, the receipt and the reminder, and opens the page with the event, attendees, amounts, payments and the hold deadline', async () => {
    const event = await insertEvent(web.tdb.db, { unpaid_hold_days: 7, reminder_at: new Date(T0.getTime() - 60_000) });
    const form = await post(`/events/${event.slug}/register`, {
      name: 'Jo Citizen',
      email: 'jo@example.org',
      mobile: '',
      payment: 'bank',
      attendee_name: ['Jo Citizen', 'Kim Citizen'],
      attendee_tier: ['adult', 'adult'],
    });
    expect(form.status).toBe(303);
    const row = await web.tdb.db('registrations').where({ event_id: event.id }).first();
    await deliver();
    const [confirmation] = mailTo('jo@example.org');
    expect(confirmation?.subject).toBe('Registration received: Family Camp');
    const path = linkIn(confirmation?.text);
    expect(path).toBe(managePath(context().config.authSecret, { registrationId: row.id, version: 1 }));
    expect(confirmation?.html).toContain(`href="http://127.0.0.1:3000${path}">Manage your registration</a>`);
    // Its own secret, not the office's reference nor the registration page's token.
    expect(path).not.toContain(paymentReference(row.id));
    expect(path).not.toContain(row.id);

    const page = await get(path as string);
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('content-security-policy')).toMatch(/style-src[^;]*'nonce-[0-9a-f]{32}'/);
    expect(page.html).toMatch(/<style nonce="[0-9a-f]{32}">/);
    expect(page.html).toContain('<h1>Manage your registration</h1>');
    expect(page.html).toContain('<bdi>Family Camp</bdi>');
    expect(page.html).toContain('<li><bdi>Jo Citizen</bdi> <span class="muted">(Adult)</span></li>');
    expect(page.html).toContain('<li><bdi>Kim Citizen</bdi> <span class="muted">(Adult)</span></li>');
    expect(page.html).toContain('<span id="total">$240.00</span>');
    expect(page.html).toContain('Nothing has been paid yet.');
    expect(page.html).toContain('<span id="owing">$240.00</span>');
    expect(page.html).toMatch(/<p id="held-until">Your places are held until [^<]*29 November 2026/);
    expect(page.html).toContain(`<span id="reference">${paymentReference(row.id)}</span>`);
    expect(page.html).toContain(`<form method="post" action="${path}/details" id="details">`);
    expect(page.html).toContain(`href="${path}/cancel"`);

    // Part of it paid at the office, then the rest: the receipt carries the same link, the page the payments.
    const ctx = context();
    await markRegistrationPaid(ctx, { registration: row.id, amountMinor: 10000, method: 'cash', partial: true, actor: 'office' }, money);
    await markRegistrationPaid(ctx, { registration: row.id, amountMinor: 14000, method: 'bank', actor: 'office' }, money);
    mail.sink.clear();
    await deliver();
    const [receipt] = mailTo('jo@example.org');
    expect(receipt?.subject).toBe('Receipt: Family Camp');
    expect(linkIn(receipt?.text)).toBe(path);
    const paid = await get(path as string);
    expect(paid.html).toContain('<span id="status">Paid</span>');
    expect(paid.html).toMatch(/<li>Cash: \$100\.00 <span class="muted">\(/);
    expect(paid.html).toMatch(/<li>Bank transfer: \$140\.00 <span class="muted">\(/);
    // Paid in parts: the balance section says what was paid and that nothing is left.
    expect(paid.html).toContain('<dd id="paid">$240.00</dd>');
    expect(paid.html).toContain('<dd id="balance-left">$0.00</dd>');
    expect(paid.html).not.toContain('id="owing"');
    expect(paid.html).not.toContain('id="held-until"');

    mail.sink.clear();
    await sendEventReminders(context(), { trigger: 'cli' });
    const [reminder] = mailTo('jo@example.org');
    expect(reminder?.subject).toBe('Reminder: Family Camp');
    expect(linkIn(reminder?.text)).toBe(path);
  });
});

describe('changing details on the manage page', () => {
  it('corrects the contact name and an attendee name in place; the link keeps working; the history says by the registrant from which client', async () => {
    const event = await insertEvent(web.tdb.db);
    const { id, path } = await registration(event.id, {}, ['Sam Member', 'Kim Membr']);

    const saved = await post(`${path}/details`, details({ name: 'Samuel Member', mobile: '0400 111 222', attendee_name: ['Sam Member', 'Kim Member'] }));
    expect(saved.status).toBe(303);
    expect(saved.headers.get('location')).toBe(`${path}?done=details`);

    const row = await web.tdb.db('registrations').where({ id }).first();
    expect(row.contact_name).toBe('Samuel Member');
    expect(context().cipher.decrypt(row.contact_mobile_enc)).toBe('0400 111 222');
    expect(row.attendees).toEqual([
      { name: 'Sam Member', tier: 'adult' },
      { name: 'Kim Member', tier: 'adult' },
    ]);
    expect(row.line_items.map((line: { label: string }) => line.label)).toEqual(['Adult — Sam Member', 'Adult — Kim Member']);
    expect(row.manage_link_version).toBe(1);
    expect(await historyOf(id)).toEqual([
      { action: 'attendees_updated', actor: 'registrant', changes: { renamed: 1, client: '127.0.0.1' } },
      { action: 'contact_updated', actor: 'registrant', changes: { fields: ['name', 'mobile'], client: '127.0.0.1' } },
    ]);
    const page = await get(`${path}?done=details`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Your changes are saved.');
    expect(page.html).toContain('value="Samuel Member"');
    await deliver();
    expect(mail.sink.messages).toEqual([]);
  });

  it('an email change waits for the new address to confirm it; confirmed, every old link dies, the new address gets its link and the old one an undo link that puts everything back', async () => {
    const event = await insertEvent(web.tdb.db);
    const { id, path } = await registration(event.id);
    const ctx = context();
    const emailOf = async () => ctx.cipher.decrypt((await web.tdb.db('registrations').where({ id }).first()).contact_email_enc);
    const pagePath = registrationPath(ctx.config.authSecret, id, 1);

    // Asked: nothing moves yet, and nothing is sent to the old address.
    const saved = await post(`${path}/details`, details({ name: 'Samuel Member', email: ' Mallory@Example.org ' }));
    expect(saved.status).toBe(303);
    expect(saved.headers.get('location')).toBe(`${path}?done=email-pending`);
    expect((await get(`${path}?done=email-pending`)).html).toContain('the email changes only once it is confirmed from there');
    expect(await emailOf()).toBe('sam@example.org');
    expect((await web.tdb.db('registrations').where({ id }).first()).contact_name).toBe('Samuel Member');
    expect((await get(path)).status).toBe(200);
    await deliver();
    expect(mailTo('sam@example.org')).toEqual([]);
    const [ask] = mailTo('Mallory@Example.org');
    expect(ask?.subject).toBe('Confirm your email address: Family Camp');
    // The unproven address learns nothing of the family: no names, no amounts, no manage link.
    expect(ask?.text).not.toContain('Samuel');
    expect(ask?.text).not.toContain('$120.00');
    expect(linkIn(ask?.text)).toBeUndefined();
    const confirmPath = /http:\/\/127\.0\.0\.1:3000(\/email-change\/confirm\/\S+)/.exec(ask?.text ?? '')?.[1] as string;
    expect(confirmPath).toBeDefined();

    // The link's page changes nothing (mail scanners follow links); its button confirms.
    const asked = await get(confirmPath);
    expect(asked.status).toBe(200);
    expect(asked.html).toContain(`<form method="post" action="${confirmPath}" id="email-change">`);
    expect(await emailOf()).toBe('sam@example.org');
    mail.sink.clear();
    const confirmed = await post(confirmPath);
    expect(confirmed.status).toBe(200);
    expect(confirmed.html).toContain('Mallory@Example.org is now the contact email');
    const row = await web.tdb.db('registrations').where({ id }).first();
    expect(await emailOf()).toBe('Mallory@Example.org');
    expect(row.contact_email_hash).toBe(ctx.cipher.lookupHash('email', 'Mallory@Example.org'));
    expect(row.manage_link_version).toBe(2);
    for (const old of [path, pagePath]) expect((await get(old)).status, old).toBe(404);
    expect((await post(confirmPath)).status).toBe(404);

    await deliver();
    const [fresh] = mailTo('Mallory@Example.org');
    expect(linkIn(fresh?.text)).toBe(managePath(ctx.config.authSecret, { registrationId: id, version: 2 }));
    const [notice] = mailTo('sam@example.org');
    expect(notice?.subject).toBe('Your registration email was changed: Family Camp');
    expect(linkIn(notice?.text)).toBeUndefined();
    const undoPath = /http:\/\/127\.0\.0\.1:3000(\/email-change\/undo\/\S+)/.exec(notice?.text ?? '')?.[1] as string;
    expect(notice?.text).toMatch(/undo it \(until [^)]*29 November 2026/);

    // Undone from the old address: back to it, the new address's links dead, a new link to the old address.
    expect((await get(undoPath)).html).toContain(`<form method="post" action="${undoPath}" id="email-change">`);
    mail.sink.clear();
    const undone = await post(undoPath);
    expect(undone.status).toBe(200);
    expect(undone.html).toContain('sam@example.org is the contact email of this registration again');
    expect(await emailOf()).toBe('sam@example.org');
    expect((await web.tdb.db('registrations').where({ id }).first()).manage_link_version).toBe(3);
    expect((await get(linkIn(fresh?.text) as string)).status).toBe(404);
    expect((await post(undoPath)).status).toBe(404);
    await deliver();
    expect(mailTo('Mallory@Example.org')).toEqual([]);
    const [back] = mailTo('sam@example.org');
    const backPath = linkIn(back?.text) as string;
    expect(backPath).toBe(managePath(ctx.config.authSecret, { registrationId: id, version: 3 }));
    expect((await get(backPath)).html).toContain('value="sam@example.org"');

    expect((await historyOf(id)).map((entry) => [entry.action, entry.changes])).toEqual([
      ['contact_updated', { fields: ['name'], client: '127.0.0.1' }],
      ['email_change_requested', { client: '127.0.0.1', confirmBy: new Date(T0.getTime() + 48 * 3_600_000).toISOString() }],
      ['contact_updated', { fields: ['email'], client: '127.0.0.1', confirmedByNewAddress: true }],
      ['contact_updated', { fields: ['email'], client: '127.0.0.1', undoneByOldAddress: true }],
    ]);
  });

  it('a confirmation link lasts 48 hours and only until a later request replaces it; the undo link lasts 7 days, and until then no other change is taken here', async () => {
    const event = await insertEvent(web.tdb.db, { starts_at: new Date(T0.getTime() + 30 * 24 * 3_600_000) });
    const { id, path } = await registration(event.id);
    const ctx = context();
    const confirmLinks = async () => {
      await deliver();
      const links = mail.sink.messages.flatMap((m) => [.../http:\/\/127\.0\.0\.1:3000(\/email-change\/confirm\/\S+)/.exec(m.text ?? '') ?? []].slice(1));
      mail.sink.clear();
      return links;
    };
    expect((await post(`${path}/details`, details({ email: 'first@example.org' }))).status).toBe(303);
    const [first] = await confirmLinks();
    expect((await post(`${path}/details`, details({ email: 'second@example.org' }))).status).toBe(303);
    const [second] = await confirmLinks();
    expect((await post(first as string)).status).toBe(404);
    clock.set(new Date(T0.getTime() + 49 * 3_600_000));
    expect((await post(second as string)).status).toBe(404);
    expect(ctx.cipher.decrypt((await web.tdb.db('registrations').where({ id }).first()).contact_email_enc)).toBe('sam@example.org');

    expect((await post(`${path}/details`, details({ email: 'third@example.org' }))).status).toBe(303);
    const [third] = await confirmLinks();
    expect((await post(third as string)).status).toBe(200);
    await deliver();
    const newPath = linkIn(mailTo('third@example.org')[0]?.text) as string;
    const undoPath = /http:\/\/127\.0\.0\.1:3000(\/email-change\/undo\/\S+)/.exec(mailTo('sam@example.org')[0]?.text ?? '')?.[1] as string;
    const refused = await post(`${newPath}/details`, details({ email: 'fourth@example.org' }));
    expect(refused.status).toBe(409);
    expect(refused.html).toContain('the previous address can still undo that change');
    clock.set(new Date(clock.now().getTime() + 7 * 24 * 3_600_000 + 60_000));
    expect((await post(undoPath)).status).toBe(404);
    expect(ctx.cipher.decrypt((await web.tdb.db('registrations').where({ id }).first()).contact_email_enc)).toBe('third@example.org');
    expect((await post(`${newPath}/details`, details({ email: 'fourth@example.org' }))).status).toBe(303);
  });

  it('is refused after the event\'s changesCloseAt (and, without one, once the event starts): nothing changes and the page offers no form', async () => {
    const closed = await insertEvent(web.tdb.db, { changes_close_at: new Date(T0.getTime() - 60_000) });
    const { id, path } = await registration(closed.id);
    const before = await web.tdb.db('registrations').where({ id }).first();

    const page = await get(path);
    expect(page.status).toBe(200);
    expect(page.html).not.toContain('id="details"');
    expect(page.html).not.toContain(`${path}/cancel`);
    expect(page.html).toContain('Changes on this page have closed for this event.');
    const refused = await post(`${path}/details`, details({ name: 'Samuel Member' }));
    expect(refused.status).toBe(409);
    expect(refused.html).toContain('Changes on this page have closed for this event. Please contact the church office.');
    expect((await post(`${path}/cancel`)).status).toBe(409);
    expect(await web.tdb.db('registrations').where({ id }).first()).toEqual(before);

    const started = await insertEvent(web.tdb.db, { starts_at: new Date(T0.getTime() + 60 * 60_000) });
    const other = await registration(started.id, { email: 'kim@example.org' });
    expect((await post(`${other.path}/details`, details({ name: 'Kim', email: 'kim@example.org' }))).status).toBe(303);
    clock.set(new Date(T0.getTime() + 2 * 60 * 60_000));
    expect((await post(`${other.path}/details`, details({ name: 'Kim Again', email: 'kim@example.org' }))).status).toBe(409);
    expect((await web.tdb.db('registrations').where({ id: other.id }).first()).contact_name).toBe('Kim');
  });

  it('a stored changesCloseAt after the start (saved before the event file refused it) still closes changes when the event starts', async () => {
    const event = await insertEvent(web.tdb.db, { starts_at: new Date(T0.getTime() - 60 * 60_000), changes_close_at: new Date(T0.getTime() + 24 * 60 * 60_000) });
    const { id, path } = await registration(event.id);
    const before = await web.tdb.db('registrations').where({ id }).first();
    const page = await get(path);
    expect(page.html).not.toContain('id="details"');
    expect(page.html).not.toContain(`${path}/cancel`);
    expect(page.html).toContain('Changes on this page have closed for this event.');
    expect((await post(`${path}/cancel`)).status).toBe(409);
    expect((await post(`${path}/details`, details({ name: 'After The Start' }))).status).toBe(409);
    expect(await web.tdb.db('registrations').where({ id }).first()).toEqual(before);
    expect(await historyOf(id)).toEqual([]);
  });

  it('adding or removing an attendee is not self-service: the page says to contact the office', async () => {
    const event = await insertEvent(web.tdb.db);
    const { id, path } = await registration(event.id);
    const page = await get(path);
    expect(page.html).toContain('Adding or removing an attendee, or changing a ticket type, is done by the church office');
    const added = await post(`${path}/details`, details({ attendee_name: ['Sam Member', 'Extra Person'] }));
    expect(added.status).toBe(409);
    expect(added.html).toContain('is done by the church office: please contact them.');
    expect((await web.tdb.db('registrations').where({ id }).first()).attendee_count).toBe(1);
  });

  it('refuses control characters as the public form does, and changes nothing', async () => {
    const event = await insertEvent(web.tdb.db);
    const { id, path } = await registration(event.id);
    const before = await web.tdb.db('registrations').where({ id }).first();
    for (const fields of [details({ name: 'Sam\u0000Member' }), details({ name: 'Sam \u202eMember' }), details({ email: 'sam\u0007@example.org' }), details({ attendee_name: ['Sam\u0085'] })]) {
      const refused = await post(`${path}/details`, fields);
      expect(refused.status, JSON.stringify(fields)).toBe(400);
      expect(refused.html).toContain('remove the control characters');
      expect(refused.html).toContain('nothing was changed');
    }
    expect(await web.tdb.db('registrations').where({ id }).first()).toEqual(before);
    expect(await historyOf(id)).toEqual([]);
  });

  it('a save changes only what the family edited: what the office or another tab changed since the page was opened stays', async () => {
    const event = await insertEvent(web.tdb.db);
    const { id, path } = await registration(event.id, { contact_mobile_enc: context().cipher.encrypt('0400 000 001') }, ['Sam Member', 'Kim Membr']);
    const contactTab = formFields((await get(path)).html, 'details');
    const namesTab = formFields((await get(path)).html, 'attendee-names');
    expect(contactTab.was_mobile).toEqual(['0400 000 001']);

    // While both tabs are open, the office corrects the email and the mobile.
    await updateRegistrationContact(context(), { registration: paymentReference(id), email: 'sam.member@example.org', mobile: '0400 999 999', actor: 'office' });

    // One tab fixes an attendee's name: the contact it posts back (as it was shown) is not put back.
    expect((await post(`${path}/details`, { ...namesTab, attendee_name: ['Sam Member', 'Kim Member'] })).status).toBe(303);
    // The other, opened before that, fixes the contact's name: the attendee's new name and the office's mobile stay.
    expect((await post(`${path}/details`, { ...contactTab, name: 'Samuel Member' })).status).toBe(303);

    const row = await web.tdb.db('registrations').where({ id }).first();
    expect(row.contact_name).toBe('Samuel Member');
    expect(context().cipher.decrypt(row.contact_email_enc)).toBe('sam.member@example.org');
    expect(context().cipher.decrypt(row.contact_mobile_enc)).toBe('0400 999 999');
    expect(row.attendees.map((a: { name: string }) => a.name)).toEqual(['Sam Member', 'Kim Member']);
    expect((await historyOf(id)).filter((h) => h.actor === 'registrant')).toEqual([
      { action: 'attendees_updated', actor: 'registrant', changes: { renamed: 1, client: '127.0.0.1' } },
      { action: 'contact_updated', actor: 'registrant', changes: { fields: ['name'], client: '127.0.0.1' } },
    ]);
    // The email shown when the page was opened is not asked for again: no confirmation goes to the old address.
    await deliver();
    expect(mailTo('sam@example.org')).toEqual([]);

    // A field the family does edit is still taken, even one the office changed too: the last edit wins.
    const again = formFields((await get(path)).html, 'details');
    expect(again.was_mobile).toEqual(['0400 999 999']);
    expect((await post(`${path}/details`, { ...contactTab, mobile: '0400 123 456' })).status).toBe(303);
    const after = await web.tdb.db('registrations').where({ id }).first();
    expect(context().cipher.decrypt(after.contact_mobile_enc)).toBe('0400 123 456');
    expect(after.contact_name).toBe('Samuel Member');
  });

  it('a refused correction opens again only the form it came from, with what was typed and what was wrong beside it', async () => {
    const event = await insertEvent(web.tdb.db);
    const { path } = await registration(event.id, {}, ['Sam Member', 'Kim Member']);
    const folded = await get(path);
    expect(folded.html).toContain('<details class="change" id="change-contact">');
    expect(folded.html).toContain('<details class="change" id="change-attendees">');

    const badEmail = await post(`${path}/details`, details({ email: 'not an address', attendee_name: ['Sam Member', 'Kim Member'] }));
    expect(badEmail.status).toBe(400);
    expect(badEmail.html).toContain('<details class="change" id="change-contact" open>');
    expect(badEmail.html).toContain('<details class="change" id="change-attendees">');
    expect(badEmail.html).toContain('value="not an address"');
    expect(badEmail.html).toMatch(/<ul class="error" id="field-errors"><li>Email: [^<]+<\/li><\/ul>/);

    const badName = await post(`${path}/details`, details({ attendee_name: ['Sam Member', 'Kim\u0085'] }));
    expect(badName.status).toBe(400);
    expect(badName.html).toContain('<details class="change" id="change-attendees" open>');
    expect(badName.html).toContain('<details class="change" id="change-contact">');
    expect(badName.html).toMatch(/<ul class="error" id="attendee-errors"><li>Attendee: [^<]*control characters[^<]*<\/li><\/ul>/);
  });
});

describe('cancelling on the manage page', () => {
  it('an unpaid bank-transfer registration: a confirmation page, then cancelled with its seats freed, the registrant and the office told', async () => {
    const event = await insertEvent(web.tdb.db, { capacity: 2 });
    await insertUser(web.tdb.db, context().cipher, { email: 'office@example.org', role: 'STAFF' });
    const { id, path } = await registration(event.id, {}, ['Sam Member', 'Kim Member']);
    expect(await seatsLeft(web.tdb.db, { id: event.id, capacity: 2 }, clock.now())).toBe(0);

    const confirm = await get(`${path}/cancel`);
    expect(confirm.status).toBe(200);
    expect(confirm.html).toContain('<h1>Cancel your registration?</h1>');
    expect(confirm.html).toContain(`<form method="post" action="${path}/cancel" id="confirm-cancel">`);
    expect((await web.tdb.db('registrations').where({ id }).first()).status).toBe('PENDING');

    const cancelled = await post(`${path}/cancel`);
    expect(cancelled.status).toBe(303);
    expect(cancelled.headers.get('location')).toBe(`${path}?done=cancelled`);
    const row = await web.tdb.db('registrations').where({ id }).first();
    expect(row).toMatchObject({ status: 'CANCELLED', cancel_reason: 'registrant' });
    expect(await seatsLeft(web.tdb.db, { id: event.id, capacity: 2 }, clock.now())).toBe(2);
    expect(await historyOf(id)).toEqual([
      {
        action: 'cancelled',
        actor: 'registrant',
        changes: { status: { from: 'PENDING', to: 'CANCELLED' }, seatsFreed: 2, notified: true, client: '127.0.0.1' },
      },
    ]);

    await deliver();
    const [notice] = mailTo('sam@example.org');
    expect(notice?.subject).toBe('Registration cancelled: Family Camp');
    expect(notice?.text).toContain('As you asked, your registration for Family Camp');
    const [office] = mailTo('office@example.org');
    expect(office?.subject).toBe(`Registration ${paymentReference(id)} cancelled by the registrant: Family Camp`);
    expect(office?.text).toContain('2 places were released.');

    const after = await get(`${path}?done=cancelled`);
    expect(after.html).toContain('<span id="status">Cancelled</span>');
    expect(after.html).toContain('Your registration is cancelled');
    expect(after.html).not.toContain('id="details"');
    expect((await post(`${path}/cancel`)).status).toBe(409);
  });

  it('a free registration can be cancelled too', async () => {
    const event = await insertEvent(web.tdb.db, { pricing: JSON.stringify({ tiers: [{ id: 'adult', label: 'Adult', price: 0 }] }) });
    const { id, path } = await registration(event.id, { status: 'PAID', payment_method: 'free', total_minor: 0, paid_at: T0, line_items: JSON.stringify([{ label: 'Adult — Sam Member', amount: 0 }]) });
    expect((await get(path)).html).toContain(`href="${path}/cancel"`);
    expect((await post(`${path}/cancel`)).status).toBe(303);
    expect((await web.tdb.db('registrations').where({ id }).first()).status).toBe('CANCELLED');
  });

  it('a paid registration is not cancelled on the page: "Ask the office to cancel" records the request and raises one operations alert naming the reference', async () => {
    const event = await insertEvent(web.tdb.db);
    await insertUser(web.tdb.db, context().cipher, { email: 'admin@example.org', role: 'ADMIN' });
    const { id, path } = await registration(event.id, { status: 'PAID', paid_at: T0 });
    const reference = paymentReference(id);

    const page = await get(path);
    expect(page.html).not.toContain(`${path}/cancel"`);
    expect(page.html).toContain(`<form method="post" action="${path}/ask-cancel" id="ask-office">`);
    expect(page.html).toContain('Nothing is refunded automatically');
    const refused = await post(`${path}/cancel`);
    expect(refused.status).toBe(409);
    expect((await get(`${path}/cancel`)).status).toBe(303);
    expect((await web.tdb.db('registrations').where({ id }).first()).status).toBe('PAID');

    const asked = await post(`${path}/ask-cancel`);
    expect(asked.status).toBe(303);
    expect(asked.headers.get('location')).toBe(`${path}?done=asked`);
    expect((await get(`${path}?done=asked`)).html).toContain('They will reply to you by email.');
    expect((await web.tdb.db('registrations').where({ id }).first()).status).toBe('PAID');
    expect(await historyOf(id)).toEqual([{ action: 'cancellation_requested', actor: 'registrant', changes: { paidMinor: 12000, client: '127.0.0.1' } }]);
    const alerts = await web.tdb.db('operations_alerts').select('kind', 'reason', 'details', 'amount_minor');
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ kind: 'cancellation_requested', amount_minor: 12000, details: { registrationId: id, reference } });
    expect(alerts[0].reason).toContain(`cancel registration ${reference}`);
    // The alert row is not encrypted: no contact address in it.
    expect(JSON.stringify(alerts)).not.toContain('sam@example.org');

    const again = await post(`${path}/ask-cancel`);
    expect(again.headers.get('location')).toBe(`${path}?done=already-asked`);
    expect(await web.tdb.db('operations_alerts').count({ n: '*' }).first()).toEqual({ n: 1 });
    await deliver();
    const [alertMail] = mailTo('admin@example.org');
    expect(alertMail?.subject).toContain('Registrant asks the office to cancel');
    expect(alertMail?.text).toContain(reference);
  });
});

describe('"Ask the office to cancel" for a registration nothing was paid for', () => {
  it('is refused for an unpaid bank transfer and a free registration: no request, no alert saying it is paid, and the answer leads to the page\'s own cancel', async () => {
    const event = await insertEvent(web.tdb.db);
    await insertUser(web.tdb.db, context().cipher, { email: 'admin@example.org', role: 'ADMIN' });
    const unpaid = await registration(event.id);
    const free = await registration(event.id, { status: 'PAID', payment_method: 'free', total_minor: 0, paid_at: T0, email: 'kim@example.org' });

    for (const { id, path } of [unpaid, free]) {
      expect((await get(path)).html).not.toContain(`${path}/ask-cancel`);
      const asked = await post(`${path}/ask-cancel`);
      expect(asked.status).toBe(409);
      expect(asked.html).toContain('Nothing has been paid for this registration, so the office is not needed');
      expect(asked.html).toContain(`<a class="back-link" href="${path}/cancel">Cancel this registration</a>`);
      expect(await historyOf(id)).toEqual([]);
      expect((await get(`${path}/cancel`)).status).toBe(200);
    }
    expect(await web.tdb.db('operations_alerts').select('id')).toEqual([]);
    await deliver();
    expect(mailTo('admin@example.org')).toEqual([]);
    expect((await web.tdb.db('registrations').where({ id: unpaid.id }).first()).status).toBe('PENDING');
  });
});

describe('links that open nothing', () => {
  it('a forged, tampered, revoked or foreign-key token is a plain 404, and guessing is rate-limited', async () => {
    const event = await insertEvent(web.tdb.db);
    const { id, path } = await registration(event.id);
    const secret = context().config.authSecret;
    const token = path.slice('/manage/'.length);
    const flipped = `${token.slice(0, -2)}${token.at(-2) === 'A' ? 'B' : 'A'}${token.at(-1)}`;
    const forged = [
      '/manage/not-a-token',
      `/manage/${flipped}`,
      managePath(secret, { registrationId: id, version: 2 }),
      managePath('another-secret-of-at-least-32-characters!', { registrationId: id, version: 1 }),
      managePath(secret, { registrationId: crypto.randomUUID(), version: 1 }),
      `/manage/${'x'.repeat(99)}`,
    ];
    expect(readManageToken(secret, token)).toEqual({ registrationId: id, version: 1 });
    for (const bad of forged) {
      const answer = await get(bad);
      expect(answer.status, bad).toBe(404);
      expect(answer.html).toContain('We could not find that registration.');
      expect(answer.html).not.toContain('Family Camp');
    }
    expect((await post(`${forged[1]}/details`, details({ name: 'Mallory' }))).status).toBe(404);
    expect((await post(`${forged[2]}/cancel`)).status).toBe(404);
    expect((await post(`${forged[2]}/ask-cancel`)).status).toBe(404);
    expect((await web.tdb.db('registrations').where({ id }).first()).status).toBe('PENDING');

    // 30 looks a minute per client: the guesses above count, and the next ones are refused, real link or not.
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await get(`/manage/${manageToken(secret, { registrationId: crypto.randomUUID(), version: 1 })}`)).status);
    expect(statuses.slice(0, 30 - forged.length)).toEqual(Array(30 - forged.length).fill(404));
    expect(statuses.slice(30 - forged.length)).toEqual(Array(forged.length).fill(429));
    expect((await get(path)).status).toBe(429);
    // Posts: 10 a minute, as the public form (the forged post above was the first).
    const posts: number[] = [];
    for (let i = 0; i < 10; i++) posts.push((await post(`${forged[0]}/details`, details())).status);
    expect(posts).toEqual([...Array(9).fill(404), 429]);
  });

  it('keeps the token out of request logs, below the page too', () => {
    expect(pathForLog('/manage/abc.def?done=details')).toBe('/manage/[redacted]');
    expect(pathForLog('/manage/abc.def/details')).toBe('/manage/[redacted]/[redacted]');
    expect(pathForLog('/email-change/confirm/abc.def')).toBe('/email-change/confirm/[redacted]');
    expect(pathForLog('/email-change/undo/abc.def')).toBe('/email-change/undo/[redacted]');
  });
});

describe('the event file\'s changesCloseAt', () => {
  it('is stored by events create and closes the page\'s changes at that time', async () => {
    const file = parseEventFile({
      slug: 'camp-with-deadline',
      title: 'Family Camp',
      startsAt: '2026-12-05T19:00:00+11:00',
      changesCloseAt: '2026-11-28T17:00:00+11:00',
      capacity: null,
      published: true,
      pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 12000 }] },
    });
    const { event } = await createEvent(context(), file);
    expect(event.changesCloseAt).toEqual(new Date('2026-11-28T06:00:00Z'));
    const { id, path } = await registration(event.id);
    expect((await post(`${path}/details`, details({ name: 'Before Close' }))).status).toBe(303);
    clock.set(new Date('2026-11-28T06:00:00Z'));
    expect((await post(`${path}/details`, details({ name: 'After Close' }))).status).toBe(409);
    expect((await web.tdb.db('registrations').where({ id }).first()).contact_name).toBe('Before Close');
  });
});
