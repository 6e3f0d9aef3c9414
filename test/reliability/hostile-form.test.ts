import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registrationPath } from '../../src/http/registration-view.js';
import { fuzzRegistrationForm, postRegistration, probeSeatHoarding, probeSlash48Rotation, unescapedInjection, type FormFuzzReport } from '../../soak/cases/hostile-input.js';
import { plusAddressingHeld, sendPlusAddressedPosts } from '../../soak/cases/hostile-mailbox.js';
import { CONFIRMATIONS_PER_ADDRESS_PER_HOUR } from '../../src/signup/confirmations.js';
import { insertEvent } from '../support/factories.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';

let harness: PaymentsHarness;
let report: FormFuzzReport;

beforeAll(async () => {
  // TRUST_PROXY: each post comes from its own X-Forwarded-For address, so the per-IP rate limit does not hide answers.
  harness = await startPaymentsHarness({ env: { TRUST_PROXY: 'true' } });
  fc.configureGlobal({ seed: 7_000_002 });
  report = await fuzzRegistrationForm(harness, 300);
  fc.resetConfigureGlobal();
}, 90_000);
afterAll(async () => {
  await harness.close();
});

describe('the public registration form, fuzzed (300 invalid posts, half JSON, half form-encoded)', () => {
  it('refuses every invalid post with 400 naming each broken field, never a 5xx', () => {
    expect(report.sent).toBe(300);
    expect(report.problems).toEqual([]);
  });

  it('echoes submitted text only escaped', () => {
    expect(report.leaks).toBe(0);
  });

  it('registers nobody', () => {
    expect(report.registrationsCreated).toBe(0);
  });
});

describe('bodies that are not a submission at all', () => {
  it.each([
    ['{', 'application/json'],
    ['[]', 'application/json'],
    ['null', 'application/json'],
    ['"a string"', 'application/json'],
    ['{"__proto__":{"polluted":true},"name":"x"}', 'application/json'],
    ['{"constructor":{"prototype":{"polluted":true}}}', 'application/json'],
    ['name=%E0%A4%A&email=%', 'application/x-www-form-urlencoded'],
    ['<registration/>', 'application/xml'],
  ])('%s as %s is a 4xx with the JSON error body or the form page, never a 5xx', async (body, contentType) => {
    const event = await insertEvent(harness.tdb.db);
    const answer = await postRegistration(harness.server.url, event.slug, body, contentType);
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('a valid registration carrying HTML in its names', () => {
  it('is stored as typed and shown escaped on the registration page', async () => {
    const event = await insertEvent(harness.tdb.db);
    const name = '<script>alert("x")</script> Member';
    const form = new URLSearchParams([
      ['name', name],
      ['email', 'html-member@example.org'],
      ['payment', 'bank'],
      ['attendee_name', '<img src=x onerror=alert(1)>'],
      ['attendee_tier', 'adult'],
    ]);
    const answer = await postRegistration(harness.server.url, event.slug, form.toString(), 'application/x-www-form-urlencoded');
    expect(answer.status).toBe(303);
    const stored = await harness.tdb.db('registrations').where({ event_id: event.id }).first<{ id: string; contact_name: string }>();
    expect(stored.contact_name).toBe(name);
    const page = await fetch(`${harness.server.url}${registrationPath(harness.ctx.config.authSecret, stored.id, 1)}`);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain('&lt;script&gt;');
    expect(unescapedInjection(html)).toBeUndefined();
  });
});

describe('one mailbox written many ways, from many clients', () => {
  it.each([
    ['plus tags', false],
    ['gmail dots, capitals, googlemail and plus tags', true],
  ])('%s: every registration is made, and the mailbox gets at most its hourly confirmations', async (_label, gmail) => {
    const report = await sendPlusAddressedPosts(harness, 10, { gmail });
    expect(report).toEqual({ posts: 10, registrations: 10, confirmationsQueued: CONFIRMATIONS_PER_ADDRESS_PER_HOUR, refused: 0 });
    expect(plusAddressingHeld(report)).toBe(true);
  });
});

describe('seat hoarding: many bank-transfer posts from one address', () => {
  it('are capped at maxUnpaidSeatsPerClient (30), the places left stay right, and other addresses still register', async () => {
    const report = await probeSeatHoarding(harness, { posts: 12 });
    expect(report.problems).toEqual([]);
    expect(report.heldByHoarder).toBe(30);
    expect(report.othersRegistered).toBe(3);
    expect(report.placesLeft).toBe(60);
  });
});

describe('seat hoarding: one site rotating its IPv6 /56 networks inside one /48', () => {
  it('the /48 is one client: it holds no more than maxUnpaidSeatsPerClient (30) however many /56s it posts from; the next /48 still registers', async () => {
    const report = await probeSlash48Rotation(harness);
    expect(report.problems).toEqual([]);
    expect(report.heldBySite).toBe(30);
  });
});
