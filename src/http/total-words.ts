import { moneyFormatter } from '../money-format.js';
import { cardSurcharge, priceRegistration, type AttendeeChoice, type PricedRegistration } from '../registrations/pricing.js';
import type { LiveTotalConfig } from './live-total-config.js';
import type { AddonPick } from '../registrations/addons.js';

/**
 * What the total box under the event page's form says, in the church's locale and currency: written by the
 * page's script as the family types (assets/live-total.ts) and by the server for a page it fills in itself (a
 * waiting-list offer's places), so both read alike. Pure: no DOM, no database.
 */

/** The choices on the form, read as the server reads a form post (registration-form.ts). */
export interface FormBasket {
  attendees: AttendeeChoice[];
  /** Per-registration add-ons (each attendee's are on the attendee). */
  addons?: AddonPick[];
  family: boolean;
  payment: string;
  /** On an event with a deposit: 'full', 'deposit' or 'instalments'. */
  payPlan?: string;
}

/** The server's own pricing of these choices: the card fee only on a card payment of an event that passes it on. */
export function priceBasket(config: LiveTotalConfig, basket: FormBasket): PricedRegistration | undefined {
  if (basket.attendees.length === 0) return undefined;
  const cardFee = basket.payment === 'card' ? config.cardFee : undefined;
  return priceRegistration(
    config.pricing,
    { attendees: basket.attendees, family: basket.family, addons: basket.addons, ...(config.code ? { code: config.code } : {}) },
    { cardFee, day: config.day },
  );
}

/** "Total for 1 person", "Total for 3 people". */
export function totalHeading(attendeeCount: number): string {
  return `Total for ${attendeeCount === 1 ? '1 person' : `${attendeeCount} people`}`;
}

/** What the total box says about a priced basket: the amount, and the waiver, discount and card fee beside it. */
export function describeTotal(config: LiveTotalConfig, basket: FormBasket, priced: PricedRegistration): { amount: string; details: string[] } {
  const money = moneyFormatter(config);
  const details: string[] = [];
  const waiver = config.pricing.familyWaiver;
  if (basket.family && waiver && priced.attendeeCount > waiver.maxChargedTickets) {
    const most = waiver.maxChargedTickets;
    details.push(`Family waiver: you pay for the ${most === 1 ? 'most expensive ticket' : `${most} most expensive tickets`} only.`);
  }
  if ((priced.siblingOff ?? 0) > 0) details.push(`Sibling discount: ${money(priced.siblingOff ?? 0)} off.`);
  if ((priced.familyMaxOff ?? 0) > 0) details.push(`Family maximum: ${money(priced.familyMaxOff ?? 0)} off.`);
  if (priced.code && (priced.codeDiscount ?? 0) > 0) details.push(`Code ${priced.code}: ${money(priced.codeDiscount ?? 0)} off.`);
  if (priced.discount > 0) details.push(`Discount: ${money(priced.discount)} off.`);
  const dueNow = depositDueNow(config, basket, priced);
  if (dueNow) {
    // Paying in parts, each card payment carries its own fee: the total is what the places cost.
    details.push(...dueNow.details);
    return { amount: money(priced.total - priced.surcharge), details };
  }
  if (priced.surcharge > 0) details.push(`Includes a ${money(priced.surcharge)} card processing fee.`);
  return { amount: priced.total === 0 ? 'Free' : money(priced.total), details };
}

/** A deposit or instalment plan chosen: what is paid now (its card fee on the deposit alone) and when the rest is due. */
function depositDueNow(config: LiveTotalConfig, basket: FormBasket, priced: PricedRegistration): { details: string[] } | undefined {
  const plan = config.deposit;
  if (!plan || (basket.payPlan !== 'deposit' && basket.payPlan !== 'instalments')) return undefined;
  const net = priced.total - priced.surcharge;
  const deposit = Math.min(plan.perAttendee !== undefined ? plan.perAttendee * priced.attendeeCount : (plan.perRegistration ?? net), net);
  if (deposit >= net || config.day >= plan.balanceDueAt) return undefined;
  const money = moneyFormatter(config);
  const fee = basket.payment === 'card' && config.cardFee ? cardSurcharge(deposit, config.cardFee) : 0;
  const by = new Intl.DateTimeFormat(config.locale, { dateStyle: 'long', timeZone: 'UTC' }).format(new Date(`${plan.balanceDueAt}T00:00:00Z`));
  const rest = net - deposit;
  return {
    details: [
      `Due now: ${money(deposit + fee)}${fee > 0 ? ` (the deposit and a ${money(fee)} card processing fee)` : ' (the deposit)'}.`,
      basket.payPlan === 'instalments' && plan.instalments ? `Then ${money(rest)} in ${plan.instalments} payments, the last by ${by}.` : `Then ${money(rest)} by ${by}.`,
    ],
  };
}
