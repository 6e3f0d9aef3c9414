import type { EventAddon, EventPricing } from '../registrations/event-pricing.js';

/**
 * The add-on controls of the registration form (named as addon-fields.ts reads them): in each attendee row its
 * per-attendee add-ons, and once for the registration its per-registration ones. A plain add-on is a checkbox (a
 * 44 px label row, as every choice on the page); one with options, or more than one allowed, is a select. An add-on
 * whose stock is gone shows "sold out" and is disabled. Which ones an attendee may choose (tiers, a required group)
 * is judged by pricing, which the live total shares, and said beside the total as the family chooses.
 */

export interface AddonControlView {
  id: string;
  name: string;
  label: string;
  /** "$20.00 each · Adult tickets only · sold out" */
  hint: string;
  checkbox: boolean;
  checked?: boolean;
  choices?: Array<{ value: string; label: string; selected: boolean }>;
  disabled: boolean;
}

export interface AddonFormViews {
  rows: Array<{ controls: AddonControlView[]; error?: string; legend: string }>;
  registration: AddonControlView[];
  registrationError?: string;
}

function hintOf(addon: EventAddon, pricing: Pick<EventPricing, 'tiers'>, money: (minor: number) => string, soldOut: boolean): string {
  const tiers = addon.tiers ? `${addon.tiers.map((id) => pricing.tiers.find((tier) => tier.id === id)?.label ?? id).join(', ')} tickets only` : undefined;
  const required = addon.required ? (addon.group ? 'choose one of these' : 'required') : undefined;
  return [addon.price === 0 ? 'Free' : money(addon.price), tiers, required, soldOut ? 'sold out' : undefined].filter(Boolean).join(' · ');
}

export function controlsOf(
  addons: readonly EventAddon[],
  pricing: Pick<EventPricing, 'tiers'>,
  prefix: { id: string; name: string },
  typed: Record<string, string[]>,
  money: (minor: number) => string,
  left: ReadonlyMap<string, number>,
): AddonControlView[] {
  return addons.flatMap((addon): AddonControlView[] => {
    const name = `${prefix.name}${addon.id}`;
    const values = typed[name] ?? [];
    const soldOut = left.get(addon.id) === 0;
    const hint = hintOf(addon, pricing, money, soldOut);
    const most = addon.maxPerAttendee ?? 1;
    if (!addon.options && most === 1) {
      return [{ id: `${prefix.id}${addon.id}`, name, label: addon.label, hint, checkbox: true, checked: values.includes('yes') || values.includes('on'), disabled: soldOut }];
    }
    if (!addon.options) {
      const chosen = values[0] ?? '0';
      const choices = Array.from({ length: most + 1 }, (_, n) => ({ value: String(n), label: n === 0 ? 'None' : String(n), selected: String(n) === chosen }));
      return [{ id: `${prefix.id}${addon.id}`, name, label: addon.label, hint, checkbox: false, choices, disabled: soldOut }];
    }
    // One select per unit allowed: two T-shirts may be two sizes.
    return Array.from({ length: most }, (_, unit) => ({
      id: `${prefix.id}${addon.id}${most > 1 ? `-${unit + 1}` : ''}`,
      name,
      label: most > 1 ? `${addon.label} ${unit + 1}` : addon.label,
      hint,
      checkbox: false,
      choices: [{ value: '', label: 'None', selected: !values[unit] }, ...(addon.options ?? []).map((option) => ({ value: option, label: option, selected: values[unit] === option }))],
      disabled: soldOut,
    }));
  });
}

export function addonFormViews(
  pricing: Pick<EventPricing, 'tiers' | 'addons'>,
  rowCount: number,
  typed: Record<string, string[]>,
  errorOf: (field: string) => string | undefined,
  money: (minor: number) => string,
  left: ReadonlyMap<string, number>,
): AddonFormViews {
  const addons = pricing.addons ?? [];
  const perAttendee = addons.filter((addon) => addon.per === 'attendee');
  return {
    rows: Array.from({ length: rowCount }, (_, index) => ({
      legend: `Attendee ${index + 1} extras`,
      controls: controlsOf(perAttendee, pricing, { id: `addon-${index + 1}-`, name: `addon.${index}.` }, typed, money, left),
      error: errorOf(`attendees[${index}].addons`),
    })),
    registration: controlsOf(addons.filter((addon) => addon.per === 'registration'), pricing, { id: 'addon-', name: 'addon.' }, typed, money, left),
    registrationError: errorOf('addons'),
  };
}

/** The form's add-on fields as a refused post typed them, by field name. */
export function typedAddonFields(body: unknown): Record<string, string[]> {
  if (typeof body !== 'object' || body === null) return {};
  return Object.fromEntries(
    Object.entries(body as Record<string, unknown>)
      .filter(([name]) => name.startsWith('addon.'))
      .map(([name, value]) => [name, (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string')]),
  );
}

/** One add-on control: a checkbox row, or a labelled select; its hint tied to it. */
export const ADDON_CONTROL = `{{#if checkbox}}<label class="choice hinted-choice" for="{{id}}"><input id="{{id}}" name="{{name}}" type="checkbox" value="yes"{{#if checked}} checked{{/if}}{{#if disabled}} disabled{{/if}} aria-describedby="{{id}}-hint"> <span>{{label}}<br><span class="muted addon-hint" id="{{id}}-hint">{{hint}}</span></span></label>{{else}}<label for="{{id}}">{{label}} <span class="muted addon-hint" id="{{id}}-hint">({{hint}})</span></label>
<select id="{{id}}" name="{{name}}"{{#if disabled}} disabled{{/if}} aria-describedby="{{id}}-hint">{{#each choices}}<option value="{{value}}"{{#if selected}} selected{{/if}}>{{label}}</option>{{/each}}</select>{{/if}}`;
