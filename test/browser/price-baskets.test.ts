import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { localDay } from '../../src/local-time.js';
import { createCode } from '../../src/office/codes.js';
import type { EventPricing } from '../../src/registrations/event-pricing.js';
import { priceRegistration, type CardFeeRate, type CodeTerms } from '../../src/registrations/pricing.js';
import { setSetting } from '../../src/settings.js';
import { axeViolations } from '../support/axe.js';
import { cspViolations, useBrowserStack, withPhonePage } from '../support/browser.js';
import { insertEvent } from '../support/factories.js';
import { createRandom } from '../support/random.js';
import { keepScreenshot } from '../support/screenshots.js';
import { followRealClock, fromReferenceNow } from '../support/test-now.js';

// The server of the browser stack runs on the real clock: the early price's last day is measured from it.
followRealClock();
const pages = useBrowserStack();
const CARD_FEE: CardFeeRate = { percent: 1.75, fixed: 30 };
/** PRICE_BASKET_SEED replays another draw; the default draw covers every discount (asserted below). */
const SEED = Number(process.env.PRICE_BASKET_SEED ?? 3610);
const BASKETS = 6;

const zone = () => pages.stack.ctx.config.regional.timeZone;
/** The early-bird price ends with this church-local day: three days after today's. */
const earlyUntil = () => localDay(fromReferenceNow({ days: 3 }), zone());
const today = () => localDay(new Date(), zone());

function campPricing(): EventPricing {
  return {
    tiers: [
      { id: 'adult', label: 'Adult', prices: [{ until: earlyUntil(), price: 30000 }, { price: 35000 }] },
      { id: 'child', label: 'Child', price: 12000 },
      { id: 'infant', label: 'Infant', price: 0 },
    ],
    siblingDiscounts: [{ tier: 'child', from: 2, amountOff: 2500 }],
    familyMaximum: 50000,
    discount: { percent: 5 },
  };
}

const CODES: Record<string, CodeTerms> = {
  STAFF10: { code: 'STAFF10', percent: 10 },
  PARTNER: { code: 'PARTNER', amount: 4000 },
};

interface Basket {
  tiers: string[];
  family: boolean;
  payment: 'card' | 'bank';
  code?: keyof typeof CODES;
}

/** Seeded baskets: card and bank in turn, no code / a percent code / an amount code in turn, rows and household drawn. */
function drawBaskets(seed: number): Basket[] {
  const random = createRandom(seed);
  return Array.from({ length: BASKETS }, (_, i) => {
    const code = ([undefined, 'STAFF10', 'PARTNER'] as const)[i % 3];
    return {
      // The first row is the contact's own (an adult or a child with a ticket to pay), the rest drawn.
      tiers: Array.from({ length: random.int(1, 5) }, (_, row) => random.weighted([['adult', 3], ['child', 3], ['infant', row === 0 ? 0 : 1]] as const)),
      family: random.chance(0.6),
      payment: i % 2 === 0 ? 'card' : 'bank',
      ...(code ? { code } : {}),
    };
  });
}

const totalMinor = async (page: Page) => Number(await page.locator('#live-total-amount').getAttribute('data-total-minor'));

/** Types the code into "Have a code?" (in lower case: codes are case-insensitive) and waits for the page it gives back. */
async function applyCode(page: Page, code: string): Promise<void> {
  await page.locator('#code-details summary').click();
  await page.getByLabel('Code', { exact: true }).fill(code.toLowerCase());
  await Promise.all([page.waitForURL(/\?code=/), page.getByRole('button', { name: 'Apply code' }).click()]);
  await expect.poll(() => page.locator('#code-note').innerText()).toContain(`Code ${code} applied`);
}

/** Fills the form as a member would: the rows added with the page's own button, each ticket chosen. */
async function fillBasket(page: Page, basket: Basket, email: string): Promise<void> {
  await page.getByLabel('Your name').fill('Pat Basket');
  await page.getByLabel('Email').fill(email);
  for (const [index, tier] of basket.tiers.entries()) {
    const n = index + 1;
    if (n > 1) {
      await page.getByRole('button', { name: 'Add another person' }).click();
      await page.getByLabel(`Attendee ${n} name`, { exact: true }).fill(`Kid ${n} Basket`);
    }
    await page.getByLabel(`Attendee ${n} ticket`, { exact: true }).selectOption(tier);
  }
  await page.locator('#family').setChecked(basket.family);
  await page.locator(`#payment-${basket.payment}`).check();
}

/** What the server charged: the amount the card checkout sent to the provider, or the bank registration's stored total. */
async function charged(page: Page, eventId: string, basket: Basket, email: string): Promise<number> {
  if (basket.payment === 'card') {
    await page.waitForURL(`${pages.stack.provider.apiBase}/pay/**`);
    const checkout = await pages.db('checkout_sessions').where({ event_id: eventId }).orderBy('created_at', 'desc').first();
    const sent = pages.stack.provider.sessions.get(checkout.provider_session_id) as { amount_total: number };
    expect(checkout.net_minor + checkout.surcharge_minor).toBe(sent.amount_total);
    return sent.amount_total;
  }
  await page.waitForLoadState();
  expect(await page.locator('#status').textContent()).toBe('Awaiting payment');
  const rows = await pages.db('registrations').where({ event_id: eventId }).select('contact_email_enc', 'total_minor');
  const row = rows.find((candidate) => pages.stack.ctx.cipher.decrypt(candidate.contact_email_enc) === email);
  return row?.total_minor as number;
}

beforeAll(async () => {
  await setSetting(pages.db, 'cardFee.percent', CARD_FEE.percent, new Date());
  await setSetting(pages.db, 'cardFee.fixed', CARD_FEE.fixed, new Date());
});

describe('prices in the browser: early-bird step, a code, the sibling rule, the family maximum and the event’s percent', () => {
  it(`on seeded random baskets (seed ${SEED}) the live total the page shows is what the server charges, by card and by bank transfer`, { timeout: 60_000 }, async () => {
    const pricing = campPricing();
    const event = await insertEvent(pages.db, {
      online_payment: true,
      pass_card_fee: true,
      capacity: 200,
      starts_at: fromReferenceNow({ days: 30 }),
      max_attendees_per_registration: 6,
      pricing: JSON.stringify(pricing),
    });
    for (const code of Object.values(CODES)) {
      await createCode(pages.stack.ctx, { eventSlug: event.slug, code: code.code, percent: code.percent, amount: code.amount, actor: 'office' });
    }
    const until = earlyUntil();
    const changeDay = new Intl.DateTimeFormat(pages.stack.ctx.config.regional.locale, { day: 'numeric', month: 'long', timeZone: 'UTC' }).format(new Date(`${until}T00:00:00Z`));
    const covered = { siblingOff: 0, familyMaxOff: 0, codeOff: 0, discount: 0, surcharge: 0 };

    await withPhonePage(pages.browser, true, async (page) => {
      const violations = cspViolations(page);
      // The page shows the early-bird price now, and when and to what it changes.
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      const body = await page.locator('main').innerText();
      expect(body).toContain(`$300.00 until ${changeDay}, then $350.00`);
      expect(await page.getByLabel('Attendee 1 ticket', { exact: true }).locator('option[value="adult"]').textContent()).toContain('$300.00');
      expect(body).toContain('In one registration, the 2nd Child ticket and later: $25.00 off each.');
      expect(body).toContain('A family pays at most $500.00 for its tickets.');
      // The ticket's name keeps its line beside the longer price ("Adul" / "t" before).
      const nameLines = await page.evaluate(`(() => {
        const range = document.createRange();
        range.selectNodeContents(document.querySelector('.tiers li > span'));
        return new Set(Array.from(range.getClientRects(), (rect) => Math.round(rect.top))).size;
      })()`);
      expect(nameLines).toBe(1);
      await keepScreenshot(page, 'prices-early-bird-page');
      expect(await axeViolations(page)).toEqual([]);

      for (const [index, basket] of drawBaskets(SEED).entries()) {
        // The form's own limit (posts a minute per connection) is not what this test is about.
        await pages.db('rate_limits').delete();
        const email = `basket-${index}@example.org`;
        await page.goto(`${pages.stack.url}/events/${event.slug}`);
        if (basket.code) await applyCode(page, basket.code);
        await fillBasket(page, basket, email);

        const attendees = basket.tiers.map((tier, i) => ({ name: i === 0 ? 'Pat Basket' : `Kid ${i + 1} Basket`, tier }));
        const expected = priceRegistration(
          pricing,
          { attendees, family: basket.family, ...(basket.code ? { code: CODES[basket.code] } : {}) },
          { day: today(), cardFee: basket.payment === 'card' ? CARD_FEE : undefined },
        );
        const shown = await totalMinor(page);
        expect(shown, `basket ${index}: ${JSON.stringify(basket)}`).toBe(expected.total);
        const detail = await page.locator('#live-total-detail').innerText();
        if ((expected.siblingOff ?? 0) > 0) expect(detail).toContain('Sibling discount:');
        if ((expected.familyMaxOff ?? 0) > 0) expect(detail).toContain('Family maximum:');
        if ((expected.codeDiscount ?? 0) > 0) expect(detail).toContain(`Code ${basket.code}:`);
        for (const key of Object.keys(covered) as Array<keyof typeof covered>) covered[key] += expected[key] ?? 0;
        if (index === 1) {
          await keepScreenshot(page, 'prices-basket-with-code');
          expect(await axeViolations(page)).toEqual([]);
        }

        await page.getByRole('button', { name: 'Register' }).click();
        expect(await charged(page, event.id, basket, email), `basket ${index}: ${JSON.stringify(basket)}`).toBe(shown);
      }
      expect(violations).toEqual([]);
    });
    // The draw reached every step of the stacking order, by card and by bank.
    for (const [step, amount] of Object.entries(covered)) expect(amount, `seed ${SEED} never reached ${step}`).toBeGreaterThan(0);
  });
});
