import { moneyFormatter } from '../../money-format.js';
import { PricingError, priceRegistration, type AttendeeChoice, type PricedRegistration } from '../../registrations/pricing.js';
import type { LiveTotalConfig } from '../live-total-config.js';

/** The choices on the form, read as the server reads a form post (registration-form.ts). */
export interface FormBasket {
  attendees: AttendeeChoice[];
  family: boolean;
  payment: string;
}

/** Named rows only: the server ignores a row whose name is blank, whatever ticket it shows. */
export function basketOf(form: HTMLFormElement): FormBasket {
  const data = new FormData(form);
  const names = data.getAll('attendee_name').map(String);
  const tiers = data.getAll('attendee_tier').map(String);
  const attendees = names
    .map((name, index) => ({ name: name.trim(), tier: tiers[index] ?? '' }))
    .filter((row) => row.name !== '');
  return { attendees, family: data.get('family') === 'on', payment: String(data.get('payment') ?? '') };
}

/** The server's own pricing of these choices: the card fee only on a card payment of an event that passes it on. */
export function priceBasket(config: LiveTotalConfig, basket: FormBasket): PricedRegistration | undefined {
  if (basket.attendees.length === 0) return undefined;
  const cardFee = basket.payment === 'card' ? config.cardFee : undefined;
  return priceRegistration(
    config.pricing,
    { attendees: basket.attendees, family: basket.family, ...(config.code ? { code: config.code } : {}) },
    { cardFee, day: config.day },
  );
}

/** What the total box says about a priced basket, in the church's locale and currency. */
export function describeTotal(config: LiveTotalConfig, basket: FormBasket, priced: PricedRegistration): { amount: string; details: string[] } {
  const money = moneyFormatter(config);
  const details: string[] = [];
  const waiver = config.pricing.familyWaiver;
  if (basket.family && waiver && priced.attendeeCount > waiver.maxChargedTickets) {
    const most = waiver.maxChargedTickets;
    details.push(`Family waiver: you pay for the ${most === 1 ? 'most expensive ticket' : `${most} most expensive tickets`} only.`);
  }
  if ((priced.siblingOff ?? 0) > 0) details.push(`Sibling discount: ${money(priced.siblingOff ?? 0)} off.`);
  if (priced.code && (priced.codeDiscount ?? 0) > 0) details.push(`Code ${priced.code}: ${money(priced.codeDiscount ?? 0)} off.`);
  if ((priced.familyMaxOff ?? 0) > 0) details.push(`Family maximum: ${money(priced.familyMaxOff ?? 0)} off.`);
  if (priced.discount > 0) details.push(`Discount: ${money(priced.discount)} off.`);
  if (priced.surcharge > 0) details.push(`Includes a ${money(priced.surcharge)} card processing fee.`);
  return { amount: priced.total === 0 ? 'Free' : money(priced.total), details };
}

export interface LiveTotal {
  /** Prices the form again and says so, when what it says changed (the box is a polite live region). */
  refresh(): void;
}

/**
 * The total box under the form (#live-total, hidden until this script shows it): the amount for the named rows,
 * with the waiver, the discount and the card fee said beside it, recomputed on every change.
 */
export function showLiveTotal(form: HTMLFormElement): LiveTotal {
  const box = form.querySelector<HTMLElement>('#live-total');
  const amount = box?.querySelector<HTMLElement>('#live-total-amount');
  const heading = box?.querySelector<HTMLElement>('#live-total-label');
  const detail = box?.querySelector<HTMLElement>('#live-total-detail');
  const raw = box?.getAttribute('data-pricing');
  if (!box || !amount || !heading || !detail || !raw) return { refresh: () => {} };
  const config = JSON.parse(raw) as LiveTotalConfig;
  box.hidden = false;

  const say = (label: string, total: string, details: string[], minor: number | undefined) => {
    if (heading.textContent !== label) heading.textContent = label;
    if (amount.textContent !== total) amount.textContent = total;
    const text = details.join(' ');
    if (detail.textContent !== text) detail.textContent = text;
    detail.hidden = text === '';
    if (minor === undefined) amount.removeAttribute('data-total-minor');
    else amount.setAttribute('data-total-minor', String(minor));
  };

  const refresh = () => {
    const basket = basketOf(form);
    try {
      const priced = priceBasket(config, basket);
      if (!priced) {
        say('Total', '—', [], undefined);
        return;
      }
      const people = priced.attendeeCount === 1 ? '1 person' : `${priced.attendeeCount} people`;
      const { amount: total, details } = describeTotal(config, basket, priced);
      say(`Total for ${people}`, total, details, priced.total);
    } catch (error) {
      if (!(error instanceof PricingError)) throw error;
      say('Total', '—', [error.message.charAt(0).toUpperCase() + error.message.slice(1) + '.'], undefined);
    }
  };
  refresh();
  return { refresh };
}
