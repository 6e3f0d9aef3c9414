import { PricingError } from '../../registrations/pricing.js';
import type { LiveTotalConfig } from '../live-total-config.js';
import { describeTotal, priceBasket, totalHeading, type FormBasket } from '../total-words.js';
import { addonFieldsOfForm } from '../addon-fields.js';

/** Named rows only: the server ignores a row whose name is blank, whatever ticket it shows. */
export function basketOf(form: HTMLFormElement): FormBasket {
  const data = new FormData(form);
  const names = data.getAll('attendee_name').map(String);
  const tiers = data.getAll('attendee_tier').map(String);
  // Add-ons read as the server reads the post (addon-fields.ts), by the row they were chosen on.
  const fields: Record<string, string[]> = {};
  data.forEach((value, key) => {
    if (key.startsWith('addon.')) fields[key] = [...(fields[key] ?? []), String(value)];
  });
  const extras = addonFieldsOfForm(fields);
  const attendees = names
    .map((name, index) => {
      const addons = extras.rows.get(index);
      return { name: name.trim(), tier: tiers[index] ?? '', ...(addons && addons.length > 0 ? { addons } : {}) };
    })
    .filter((row) => row.name !== '');
  const addons = extras.registration.length > 0 ? { addons: extras.registration } : {};
  return { attendees, family: data.get('family') === 'on', payment: String(data.get('payment') ?? ''), payPlan: String(data.get('pay_plan') ?? ''), ...addons };
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
      const { amount: total, details } = describeTotal(config, basket, priced);
      say(totalHeading(priced.attendeeCount), total, details, priced.total);
    } catch (error) {
      if (!(error instanceof PricingError)) throw error;
      say('Total', '—', [error.message.charAt(0).toUpperCase() + error.message.slice(1) + '.'], undefined);
    }
  };
  refresh();
  return { refresh };
}
