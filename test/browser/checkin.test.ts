import net from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCheckinLink, revokeCheckinLinks } from '../../src/door/links.js';
import { printedRoll } from '../../src/door/printed-roll.js';
import { FixedClock } from '../../src/clock.js';
import type { AppContext } from '../../src/context.js';
import { buildServer } from '../../src/http/server.js';
import { createMailer } from '../../src/mail/create.js';
import { deliverQueuedMail } from '../../src/mail/queue.js';
import type { Mailer } from '../../src/mail/types.js';
import { axeViolations } from '../support/axe.js';
import { cspViolations, launchBrowser, PHONE_VIEWPORT, withPhonePage } from '../support/browser.js';
import { insertCamp, registerFamily } from '../support/checkin-fixtures.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertUser } from '../support/factories.js';
import { useSmtpSink } from '../support/mail-fixture.js';
import { keepScreenshot } from '../support/screenshots.js';

// The server has a clock of its own, a little ahead of the browser's, so taps queued by the page are never "from the future".
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
  ctx = createTestContext({ db: tdb.db, clock: new FixedClock(new Date()), env: { ...smtp.sink.configEnv(), AUTH_URL: url } }) as AppContext & { clock: FixedClock };
  mailer = await createMailer(ctx.config, ctx.logger, { timeoutMs: 10_000 });
  ctx.mailer = async () => mailer;
  await insertUser(tdb.db, ctx.cipher, { email: 'office@example.org', role: 'ADMIN' });
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
  ctx.clock.set(new Date(Date.now() - 60_000));
  await tdb.db('rate_limits').delete();
});

async function camp() {
  const event = await insertCamp(tdb.db, { starts_at: new Date(Date.now() + 3_600_000) });
  const lee = await registerFamily(tdb.db, ctx.cipher, event, {
    contact: 'Ruth Lee',
    attendees: [
      { name: 'Ruth Lee', tier: 'adult' },
      { name: 'Mia Lee', tier: 'child', answers: { allergies: 'Peanuts', medication: 'Ventolin' } },
    ],
  });
  const jose = await registerFamily(tdb.db, ctx.cipher, event, { contact: 'José Núñez', status: 'PAID', attendees: [{ name: 'José Núñez', tier: 'adult' }] });
  return { event, lee, jose };
}
async function linkTo(slug: string, canTakePayment = false): Promise<string> {
  const { url: link } = await createCheckinLink(ctx, { eventSlug: slug, hours: 12, label: 'Front door', canTakePayment, actor: 'office' });
  // The server's clock moves on past the link's making: what the page sends is then in its window.
  ctx.clock.set(new Date(Date.now() + 60_000));
  return link;
}
const onPhone = (run: (page: Page) => Promise<void>) => withPhonePage(browser, true, run);
const row = (page: Page, name: string) => page.locator('li.attendee').filter({ has: page.locator('.name', { hasText: name }) });
const checkedIn = (registrationId: string) =>
  tdb.db('attendee_checkins').where({ registration_id: registrationId }).whereNotNull('checked_in_at').orderBy('attendee_index').pluck('attendee_index');
async function eventually<T>(read: () => Promise<T>, expected: T): Promise<void> {
  for (let i = 0; i < 50; i++) {
    if (JSON.stringify(await read()) === JSON.stringify(expected)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(await read()).toEqual(expected);
}

describe('the check-in page on a volunteer\'s phone', () => {
  it('finds a name without accents or case, checks them in with one tap, undoes it, and shows the count and the flags', async () => {
    const { event, lee, jose } = await camp();
    const link = await linkTo(event.slug);
    await onPhone(async (page) => {
      const violations = cspViolations(page);
      await page.goto(link);
      expect(await page.locator('#here-text').textContent()).toBe('0 of 3 here');
      const mia = row(page, 'Mia Lee');
      expect(await mia.locator('.flag.guardian').textContent()).toBe('Guardian: Ruth Lee');
      expect(await mia.locator('.flag.owes').textContent()).toBe('Owes $180.00');
      expect(await mia.locator('.flag.answer').textContent()).toBe('Allergies: Peanuts');

      await page.locator('#search').fill('JOSE NUN');
      expect(await page.locator('li.attendee:visible').count()).toBe(1);
      expect(await row(page, 'José Núñez').isVisible()).toBe(true);
      expect(await mia.isVisible()).toBe(false);

      await row(page, 'José Núñez').getByRole('button', { name: 'Check in' }).click();
      expect(await page.locator('#here-text').textContent()).toBe('1 of 3 here');
      expect(await row(page, 'José Núñez').locator('.status').textContent()).toBe('Checked in just now');
      await eventually(() => checkedIn(jose), [0]);
      await page.locator('#queue-status').waitFor({ state: 'hidden' });

      await row(page, 'José Núñez').getByRole('button', { name: 'Undo' }).click();
      expect(await page.locator('#here-text').textContent()).toBe('0 of 3 here');
      await eventually(() => checkedIn(jose), []);
      await page.locator('#search').fill('');
      expect(await page.locator('li.attendee:visible').count()).toBe(3);
      expect(violations).toEqual([]);
    });
    expect(await tdb.db('checkin_log').where({ registration_id: jose }).orderBy('id').pluck('action')).toEqual(['check_in', 'undo']);
    expect(await checkedIn(lee)).toEqual([]);
  });

  it('pays at the door: the balance in cash, recorded as mark-paid records it, with the receipt sent', async () => {
    const { event, lee } = await camp();
    const link = await linkTo(event.slug, true);
    await onPhone(async (page) => {
      const violations = cspViolations(page);
      await page.goto(link);
      await row(page, 'Mia Lee').getByRole('button', { name: 'Paid $180.00 in cash' }).click();
      await page.waitForURL(/done=paid/);
      expect(await page.locator('#notice').textContent()).toContain('Payment recorded');
      expect(await row(page, 'Mia Lee').locator('.flag.owes').count()).toBe(0);
      expect(violations).toEqual([]);
    });
    expect(await tdb.db('registrations').where({ id: lee }).first()).toMatchObject({ status: 'PAID', payment_method: 'cash' });
    expect(await tdb.db('registration_payments').where({ registration_id: lee }).select('amount_minor', 'recorded_by')).toEqual([{ amount_minor: 18000, recorded_by: 'Front door' }]);
    await deliverQueuedMail(ctx, { limit: 10 });
    const receipt = smtp.sink.messages.find((m) => m.envelope.to.includes('ruth@example.org'));
    expect(receipt?.subject).toBe('Receipt: Kids Camp');
  });

  it('keeps working offline: check-ins queue in the phone, the page says how many wait, and they upload when the signal returns', async () => {
    const { event, lee } = await camp();
    const link = await linkTo(event.slug, true);
    await onPhone(async (page) => {
      const violations = cspViolations(page);
      await page.goto(link);
      await page.context().setOffline(true);
      await row(page, 'Ruth Lee').getByRole('button', { name: 'Check in' }).click();
      expect(await page.locator('#queue-status').textContent()).toBe('1 check-in waiting to upload (offline)');
      await row(page, 'Mia Lee').getByRole('button', { name: 'Check in' }).click();
      expect(await page.locator('#queue-status').textContent()).toBe('2 check-ins waiting to upload (offline)');
      expect(await page.locator('#here-text').textContent()).toBe('2 of 3 here');
      // Money needs the server: refused while offline, nothing lost.
      await row(page, 'Mia Lee').getByRole('button', { name: 'Paid $180.00 in cash' }).click();
      expect(await page.locator('#queue-status').textContent()).toContain('Paying at the door needs a connection');
      expect(await checkedIn(lee)).toEqual([]);
      const queued = await page.evaluate(() => Object.entries(localStorage).map(([key, value]) => [key, (JSON.parse(value) as Array<{ id: string }>).map((a) => a.id)]));
      expect(queued).toHaveLength(1);
      expect(queued[0]?.[1]).toHaveLength(2);
      expect(new Set(queued[0]?.[1])).toHaveProperty('size', 2);

      await page.context().setOffline(false);
      await page.locator('#queue-status').waitFor({ state: 'hidden' });
      await eventually(() => checkedIn(lee), [0, 1]);
      expect(await page.evaluate(() => Object.values(localStorage))).toEqual(['[]']);
      expect(violations).toEqual([]);
    });
    expect(await tdb.db('checkin_log').where({ registration_id: lee }).pluck('label')).toEqual(['Front door', 'Front door']);
    const links = tdb.db('checkin_links').where({ event_id: event.id }).select('id');
    expect(await tdb.db('checkin_nonces').whereIn('link_id', links).pluck('id')).toHaveLength(2);
  });

  it('the printed roll renders for print, one line per attendee with boxes and flags, and prints to paper (PDF)', async () => {
    const { event } = await camp();
    const { html } = await printedRoll(ctx, event.slug);
    await withPhonePage(browser, false, async (page) => {
      await page.setViewportSize({ width: 1000, height: 800 });
      await page.setContent(html);
      await page.emulateMedia({ media: 'print' });
      const lines = page.locator('#roll tbody tr');
      expect(await lines.count()).toBe(3);
      expect(await lines.nth(1).locator('td').allTextContents()).toEqual(['☐', '☐', 'Mia Lee', 'Child', 'Owes $180.00Guardian: Ruth LeeAllergies: Peanuts', 'Ruth Lee', expect.stringMatching(/^[0-9A-F]{8}$/)]);
      expect(await page.evaluate("getComputedStyle(document.querySelector('thead')).display")).toBe('table-header-group');
      const pdf = await page.pdf({ format: 'A4' });
      expect(pdf.subarray(0, 4).toString()).toBe('%PDF');
    });
  });
});

/** The sticky header's height on the phone: the part of the screen the roll never gets. */
const headerHeight = (page: Page) => page.locator('#roll-head').evaluate((head) => head.getBoundingClientRect().height);
/** Every visible control smaller than 44×44 px, by what it says. */
const smallTargets = (page: Page) =>
  page.evaluate(`Array.from(document.querySelectorAll('a[href], button, input:not([type="hidden"]), select, textarea, summary'))
    .filter((element) => element.getClientRects().length > 0)
    .map((element) => ({ element, box: element.getBoundingClientRect() }))
    .filter(({ box }) => box.width < 44 || box.height < 44)
    .map(({ element, box }) => element.tagName + ' "' + element.textContent + '" ' + Math.round(box.width) + '×' + Math.round(box.height))`) as Promise<string[]>;
const keptForOffline = (page: Page) => page.locator('#attendees[data-offline="ready"]').waitFor({ state: 'attached' });
const keptPages = (page: Page) => page.evaluate(`caches.keys().then((names) => names.filter((name) => name.startsWith('eventops-checkin-page:')))`) as Promise<string[]>;

describe('the check-in page on a phone: header, reading and tapping', () => {
  it('keeps its sticky header under 120 of the 844 px, every control at least 44×44 px, and nothing axe finds wrong, with the roll loaded and a search typed', async () => {
    const { event } = await camp();
    const link = await linkTo(event.slug, true);
    await onPhone(async (page) => {
      const violations = cspViolations(page);
      await page.goto(link);
      expect(page.viewportSize()).toEqual(PHONE_VIEWPORT);
      expect(await headerHeight(page)).toBeLessThan(120);
      expect(await smallTargets(page)).toEqual([]);
      expect(await axeViolations(page)).toEqual([]);
      await keepScreenshot(page, 'checkin-roll-loaded');

      await page.locator('#search').fill('lee');
      expect(await page.locator('li.attendee:visible').count()).toBe(2);
      // The family that no longer matches is hidden whole, its frame too.
      expect(await page.locator('li.family:visible').count()).toBe(1);
      expect(await headerHeight(page)).toBeLessThan(120);
      expect(await axeViolations(page)).toEqual([]);
      await keepScreenshot(page, 'checkin-search-active');
      expect(violations).toEqual([]);
    });
  });
});

describe('a reload while the phone is offline', () => {
  it('shows the page with the last roll and the taps still queued, from the phone\'s service worker; back online the taps are sent and recorded', async () => {
    const { event, lee, jose } = await camp();
    const link = await linkTo(event.slug);
    const other = await camp();
    const otherLink = await linkTo(other.event.slug);
    await onPhone(async (page) => {
      const violations = cspViolations(page);
      await page.goto(link);
      await keptForOffline(page);
      // Another volunteer checks José in while this phone is still online: the next upload's answer shows it.
      const now = new Date(Date.now() - 1000);
      await tdb.db('attendee_checkins').insert({ registration_id: jose, attendee_index: 0, event_id: event.id, checked_in_at: now, checked_in_by: 'Side door' });
      await page.context().setOffline(true);
      await row(page, 'Ruth Lee').getByRole('button', { name: 'Check in' }).click();
      expect(await page.locator('#queue-status').textContent()).toBe('1 check-in waiting to upload (offline)');

      const reloaded = await page.reload();
      expect(reloaded?.fromServiceWorker()).toBe(true);
      expect(await page.locator('li.attendee').count()).toBe(3);
      expect(await row(page, 'Ruth Lee').locator('.status').textContent()).toBe('Checked in just now');
      expect(await row(page, 'Ruth Lee').getByRole('button', { name: 'Undo' }).isVisible()).toBe(true);
      expect(await page.locator('#here-text').textContent()).toBe('1 of 3 here');
      expect(await page.locator('#queue-status').textContent()).toBe('1 check-in waiting to upload (offline)');
      expect(await headerHeight(page)).toBeLessThan(120);
      expect(await smallTargets(page)).toEqual([]);
      expect(await axeViolations(page)).toEqual([]);
      await keepScreenshot(page, 'checkin-offline-queued');
      expect(await checkedIn(lee)).toEqual([]);

      // Another link's page, never opened on this phone, is not shown from this one's copy.
      const elsewhere = await page.goto(otherLink);
      expect(elsewhere?.status()).toBe(503);
      expect(await page.locator('h1').textContent()).toBe('No connection');
      expect(await page.content()).not.toContain('Ruth Lee');
      await page.goBack();
      await page.locator('#here-text').waitFor();
      // The page reads its queued taps back asynchronously after it renders: wait for the status it then shows.
      await page.locator('#queue-status', { hasText: 'waiting to upload' }).waitFor({ timeout: 10_000 });
      expect(await page.locator('#queue-status').textContent()).toBe('1 check-in waiting to upload (offline)');

      await page.context().setOffline(false);
      await eventually(() => checkedIn(lee), [0]);
      await page.locator('#queue-status').waitFor({ state: 'hidden' });
      expect(await page.locator('#here-text').textContent()).toBe('2 of 3 here');
      expect(await page.evaluate(() => Object.values(localStorage))).toEqual(['[]']);
      expect(violations).toEqual([]);
    });
    expect(await tdb.db('checkin_log').where({ registration_id: lee }).select('attendee_index', 'action', 'label')).toEqual([{ attendee_index: 0, action: 'check_in', label: 'Front door' }]);
  });
});

describe('taps refused because the link stopped working', () => {
  it('says how many check-ins were not saved and why, when the link was revoked while the phone was offline, and keeps no copy of the roll', async () => {
    const { event, lee, jose } = await camp();
    const link = await linkTo(event.slug);
    await onPhone(async (page) => {
      const violations = cspViolations(page);
      await page.goto(link);
      await keptForOffline(page);
      expect(await keptPages(page)).toHaveLength(1);
      await page.context().setOffline(true);
      for (const name of ['Ruth Lee', 'Mia Lee', 'José Núñez']) await row(page, name).getByRole('button', { name: 'Check in' }).click();
      expect(await page.locator('#queue-status').textContent()).toBe('3 check-ins waiting to upload (offline)');
      await revokeCheckinLinks(ctx, { idOrLabel: 'Front door', eventSlug: event.slug, actor: 'office' });

      await page.context().setOffline(false);
      const refused = page.locator('#refused');
      await refused.waitFor();
      expect(await refused.getAttribute('role')).toBe('alert');
      expect(await page.locator('#refused-text').textContent()).toBe('3 check-ins were not saved: this link was revoked. Ask the office for a new link.');
      expect(await page.locator('#refused-list li').allTextContents()).toEqual(['Ruth Lee: check-in', 'Mia Lee: check-in', 'José Núñez: check-in']);
      // The rows go back to what the server last said, and take no more taps.
      expect(await page.locator('#here-text').textContent()).toBe('0 of 3 here');
      expect(await row(page, 'Ruth Lee').getByRole('button', { name: 'Check in' }).isDisabled()).toBe(true);
      expect(await page.locator('#queue-status').isHidden()).toBe(true);
      expect(await keptPages(page)).toEqual([]);
      expect(await page.evaluate(() => Object.values(localStorage))).toEqual(['[]']);
      expect(await smallTargets(page)).toEqual([]);
      expect(await axeViolations(page)).toEqual([]);
      await keepScreenshot(page, 'checkin-refused-taps');
      expect(violations).toEqual([]);
    });
    expect(await checkedIn(lee)).toEqual([]);
    expect(await checkedIn(jose)).toEqual([]);
  });

  it('a reload after the link was revoked shows the server\'s 404, and the copy kept on the phone is dropped, so offline shows no roll either', async () => {
    const { event } = await camp();
    const link = await linkTo(event.slug);
    await onPhone(async (page) => {
      await page.goto(link);
      await keptForOffline(page);
      await revokeCheckinLinks(ctx, { idOrLabel: 'Front door', eventSlug: event.slug, actor: 'office' });
      expect((await page.reload())?.status()).toBe(404);
      expect(await keptPages(page)).toEqual([]);
      await page.context().setOffline(true);
      expect((await page.reload())?.status()).toBe(503);
      expect(await page.content()).not.toContain('Ruth Lee');
    });
  });

  it('says the link has expired when it ran out while the phone was offline', async () => {
    const { event, lee } = await camp();
    const link = await linkTo(event.slug);
    await onPhone(async (page) => {
      await page.goto(link);
      await keptForOffline(page);
      await page.context().setOffline(true);
      await row(page, 'Mia Lee').getByRole('button', { name: 'Check in' }).click();
      await tdb.db('checkin_links').where({ event_id: event.id }).update({ expires_at: new Date(Date.now() - 1000) });
      await page.context().setOffline(false);
      await page.locator('#refused').waitFor();
      expect(await page.locator('#refused-text').textContent()).toBe('1 check-in was not saved: this link has expired. Ask the office for a new link.');
    });
    expect(await checkedIn(lee)).toEqual([]);
  });
});

describe('the printed roll on a phone', () => {
  it('has nothing axe finds wrong', async () => {
    const { event } = await camp();
    const { html } = await printedRoll(ctx, event.slug);
    // With script on only for axe: the page itself has none.
    await withPhonePage(browser, true, async (page) => {
      await page.setContent(html);
      expect(await axeViolations(page)).toEqual([]);
      await keepScreenshot(page, 'printed-roll');
    });
  });
});
