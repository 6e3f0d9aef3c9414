import net from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cancelRegistration } from '../../src/office/registrations/cancel.js';
import { FixedClock } from '../../src/clock.js';
import type { AppContext } from '../../src/context.js';
import { buildServer } from '../../src/http/server.js';
import { sweepExpiredCheckouts } from '../../src/jobs/sweep-checkouts.js';
import { createMailer } from '../../src/mail/create.js';
import { deliverQueuedMail } from '../../src/mail/queue.js';
import type { Mailer } from '../../src/mail/types.js';
import { managePath } from '../../src/payments/manage-link.js';
import { runWaitlistPass } from '../../src/registrations/waitlist/offers.js';
import { addToWaitingList } from '../../src/registrations/waitlist/join.js';
import { cspViolations, launchBrowser, withPhonePage } from '../support/browser.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent, insertRegistration, insertUser } from '../support/factories.js';
import { useSmtpSink } from '../support/mail-fixture.js';
import { claimTokenIn, entries, fullWaitlistEvent, placesHeld } from '../registrations/waitlist-support.js';

// The waiting list runs on the app's clock (offer expiry), so this file's server has a test clock of its own
// and the real mailer pointed at the SMTP sink; AUTH_URL names the server, so the emailed links open here.
const smtp = useSmtpSink();
let tdb: TestDatabase;
let ctx: AppContext & { clock: FixedClock };
let url: string;
let browser: Browser;
let mailer: Mailer;
let closeServer: () => Promise<void>;

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  tdb = await createTestDatabase();
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  const clock = new FixedClock(new Date('2026-11-22T00:00:00Z'));
  ctx = createTestContext({ db: tdb.db, clock, env: { ...smtp.sink.configEnv(), AUTH_URL: url } }) as AppContext & { clock: FixedClock };
  mailer = await createMailer(ctx.config, ctx.logger, { timeoutMs: 10_000 });
  ctx.mailer = async () => mailer;
  await insertUser(tdb.db, ctx.cipher, { email: 'treasurer@example.org', role: 'ADMIN' });
  const server = await buildServer(ctx, { packageVersion: '0.0.0-test' });
  await server.app.listen({ port, host: '127.0.0.1' });
  closeServer = async () => {
    await server.app.close();
    await server.idle();
  };
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await closeServer?.();
  await mailer?.close();
  await tdb?.drop();
});
beforeEach(async () => {
  await tdb.db('rate_limits').delete();
  ctx.clock.set(new Date('2026-11-22T00:00:00Z'));
});
// Passes run over every event: each test's lists are closed after it, so the next test's offers are its own.
afterEach(async () => {
  await tdb.db('waitlist_entries').whereIn('state', ['WAITING', 'OFFERED']).update({ state: 'REMOVED' });
  await tdb.db('queued_mail').where({ status: 'PENDING' }).update({ status: 'SENT' });
});

const db = () => tdb.db;
const office = { actor: 'office' };
const onPhone = (run: Parameters<typeof withPhonePage>[2]) => withPhonePage(browser, true, run);
const join = (eventId: string, name: string, email: string, places: number) =>
  addToWaitingList(ctx, { id: eventId }, { contact: { name, email }, places }, { actor: 'test' });

/** Delivers the queued mail to the sink, and the mail to `to` whose subject starts with `subject`. */
async function mailTo(to: string, subject: string) {
  await deliverQueuedMail(ctx, { limit: 100 });
  const found = smtp.sink.messages.find((mail) => mail.envelope.to.includes(to) && mail.subject.startsWith(subject));
  if (!found) throw new Error(`no "${subject}" mail to ${to}; the sink holds: ${smtp.sink.messages.map((m) => `${m.envelope.to} ${m.subject}`).join('; ')}`);
  return found;
}

/** The claim link in an offer email, as the family would tap it. */
function claimLinkIn(text: string, slug: string): string {
  const token = claimTokenIn(text);
  const link = `${url}/events/${slug}?offer=${token}`;
  expect(text).toContain(link);
  return link;
}

describe('the waiting list on a phone', () => {
  it('a sold-out event offers "Join the waiting list"; the family joins from the page, confirms through the emailed link, and the email gives the position', async () => {
    const { event } = await fullWaitlistEvent(db(), ctx.cipher, 2);
    await onPhone(async (page) => {
      const violations = cspViolations(page);
      await page.goto(`${url}/events/${event.slug}`);
      expect(await page.getByRole('heading', { name: 'Join the waiting list' }).isVisible()).toBe(true);
      await page.locator('#waitlist-name').fill('Lee Family');
      await page.locator('#waitlist-email').fill('lee@example.org');
      await page.locator('#waitlist-places').fill('3');
      await page.getByRole('button', { name: 'Join the waiting list' }).click();
      await page.waitForLoadState();
      expect(await page.getByRole('heading', { name: 'Check your email' }).isVisible()).toBe(true);
      expect(violations).toEqual([]);
    });
    expect(await entries(db(), event.id)).toMatchObject([{ state: 'UNCONFIRMED', places: 3 }]);
    const ask = await mailTo('lee@example.org', 'Confirm your place on the waiting list');
    const confirmLink = /(http\S+\/waitlist\/confirm\/[A-Za-z0-9_.-]+)/.exec(ask.text ?? '')?.[1];
    expect(confirmLink?.startsWith(`${url}/waitlist/confirm/`)).toBe(true);

    await onPhone(async (page) => {
      const violations = cspViolations(page);
      await page.goto(confirmLink as string);
      await page.getByRole('button', { name: 'Confirm my place' }).click();
      await page.waitForLoadState();
      expect(await page.locator('body').textContent()).toContain('You are number 1 on the waiting list for Family Camp');
      expect(violations).toEqual([]);
    });
    expect(await entries(db(), event.id)).toMatchObject([{ state: 'WAITING', places: 3 }]);
    const mail = await mailTo('lee@example.org', 'You are on the waiting list');
    expect(mail.text).toContain('You are number 1 on the waiting list for Family Camp');
  });

  it('a place freed by the office is offered by the pass; the emailed claim link opens the form with the places reserved and the contact filled in; registering by bank transfer claims it', async () => {
    const { event, registrations } = await fullWaitlistEvent(db(), ctx.cipher, 2);
    await join(event.id, 'Claimer Family', 'claimer@example.org', 1);
    await cancelRegistration(ctx, { registration: registrations[0] as string, ...office });
    expect(await sweepExpiredCheckouts(ctx, { trigger: 'cli' })).toMatchObject({ waitlistOffered: 1 });
    const offer = await mailTo('claimer@example.org', 'Places are free for you');
    const link = claimLinkIn(offer.text ?? '', event.slug);

    await onPhone(async (page) => {
      const violations = cspViolations(page);
      await page.goto(link);
      expect(await page.locator('#offer-note').textContent()).toContain('1 place is held for you from the waiting list until');
      expect(await page.getByLabel('Your name').inputValue()).toBe('Claimer Family');
      expect(await page.getByLabel('Email').inputValue()).toBe('claimer@example.org');
      await page.getByLabel('Attendee 1 name').fill('Ann Claimer');
      await page.locator('#payment-bank').check();
      await page.getByRole('button', { name: 'Register' }).click();
      await page.waitForLoadState();
      expect(new URL(page.url()).pathname).toMatch(/^\/registrations\/[0-9a-f-]{36}$/);
      expect(await page.locator('#status').textContent()).toBe('Awaiting payment');
      expect(violations).toEqual([]);
    });

    const [entry] = await entries(db(), event.id);
    expect(entry).toMatchObject({ state: 'CLAIMED' });
    expect(await db()('registrations').where({ id: entry?.registration_id }).first()).toMatchObject({ status: 'PENDING', payment_method: 'bank', attendee_count: 1 });
    expect(await placesHeld(db(), event.id)).toEqual({ registered: 2, offered: 0 });
  });

  it('an offer not claimed within offerHours expires and passes to the next entry; its claim link then says the offer is no longer open', async () => {
    const { event, registrations } = await fullWaitlistEvent(db(), ctx.cipher, 1);
    await join(event.id, 'Slow Family', 'slow@example.org', 1);
    await join(event.id, 'Next Family', 'next@example.org', 1);
    await cancelRegistration(ctx, { registration: registrations[0] as string, ...office });
    expect(await runWaitlistPass(ctx, office)).toMatchObject({ offered: 1 });
    const link = claimLinkIn((await mailTo('slow@example.org', 'Places are free for you')).text ?? '', event.slug);

    ctx.clock.advance(24 * 3600_000 + 1000);
    expect(await runWaitlistPass(ctx, office)).toMatchObject({ offered: 1 });
    expect((await entries(db(), event.id)).map((e) => e.state)).toEqual(['EXPIRED', 'OFFERED']);
    const next = await mailTo('next@example.org', 'Places are free for you');
    claimTokenIn(next.text ?? '');

    await onPhone(async (page) => {
      await page.goto(link);
      expect(await page.getByText('This waiting-list offer is no longer open').isVisible()).toBe(true);
      expect(await page.locator('#offer-note').count()).toBe(0);
    });
  });

  it('on the manage page of a paid registration, "Ask the office to cancel" confirms and raises the alert and the history entry', async () => {
    const event = await insertEvent(db());
    const { id } = await insertRegistration(db(), ctx.cipher, event.id, {
      email: 'sam@example.org',
      status: 'PAID',
      paid_at: new Date('2026-11-01T00:00:00Z'),
      attendees: JSON.stringify([{ name: 'Sam Member', tier: 'adult' }]),
      attendee_count: 1,
      line_items: JSON.stringify([{ label: 'Adult — Sam Member', amount: 12000, kind: 'ticket' }]),
      total_minor: 12000,
    });
    const link = `${url}${managePath(ctx.config.authSecret, { registrationId: id, version: 1 })}`;

    await onPhone(async (page) => {
      const violations = cspViolations(page);
      await page.goto(link);
      expect(await page.getByRole('link', { name: 'Cancel this registration' }).count()).toBe(0);
      await page.getByRole('button', { name: 'Ask the office to cancel' }).click();
      await page.waitForLoadState();
      expect(await page.locator('#notice').textContent()).toBe('We have passed your request on to the church office. They will reply to you by email.');
      expect(violations).toEqual([]);
    });

    expect((await db()('registrations').where({ id }).first()).status).toBe('PAID');
    const alerts = await db()('operations_alerts').where({ kind: 'cancellation_requested' }).select('kind', 'details');
    expect(alerts).toEqual([expect.objectContaining({ kind: 'cancellation_requested', details: expect.objectContaining({ registrationId: id }) })]);
    expect(await db()('registration_history').where({ registration_id: id }).select('action', 'actor')).toEqual([{ action: 'cancellation_requested', actor: 'registrant' }]);
  });
});
