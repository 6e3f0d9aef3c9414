import type { AddonPick } from '../registrations/addons.js';

/**
 * The add-ons a registration post chooses. A form post names them `addon.<row>.<id>` (row: the attendee row, from 0,
 * as the questions' `q.<row>.<id>`) or `addon.<id>` for a per-registration one; each non-empty value is one unit:
 * an option (a T-shirt's size) for an add-on with options, else "yes" (a ticked box) or a count ("2"). A JSON post
 * gives `attendees[i].addons` and `addons` as lists of `{ "addon": id, "option"?: text }`. Only read here: what may
 * be chosen is judged by pricing (registrations/addons.ts), with everything else.
 */

const MAX_UNITS_PER_FIELD = 20;
const FIELD = /^addon\.(?:(\d{1,3})\.)?([A-Za-z][A-Za-z0-9_-]{0,39})$/;

export interface AddonFields {
  /** By attendee row (the submitted row's position). */
  rows: Map<number, AddonPick[]>;
  registration: AddonPick[];
  problem?: string;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function unitsOf(addon: string, value: string): AddonPick[] {
  const text = value.trim();
  if (text === '' || text === '0') return [];
  if (text === 'yes' || text === 'on') return [{ addon }];
  if (/^\d{1,2}$/.test(text)) return Array.from({ length: Math.min(Number(text), MAX_UNITS_PER_FIELD + 1) }, () => ({ addon }));
  return [{ addon, option: text }];
}

export function addonFieldsOfForm(body: Record<string, unknown>): AddonFields {
  const fields: AddonFields = { rows: new Map(), registration: [] };
  for (const [name, raw] of Object.entries(body)) {
    const match = FIELD.exec(name);
    if (!match) continue;
    const values = (Array.isArray(raw) ? raw : [raw]).filter((v): v is string => typeof v === 'string').slice(0, MAX_UNITS_PER_FIELD);
    const picks = values.flatMap((value) => unitsOf(match[2] as string, value));
    if (match[1] === undefined) fields.registration.push(...picks);
    else fields.rows.set(Number(match[1]), [...(fields.rows.get(Number(match[1])) ?? []), ...picks]);
  }
  return fields;
}

function picksOfJson(value: unknown): AddonPick[] | undefined {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.length > 100) return undefined;
  const picks: AddonPick[] = [];
  for (const item of value) {
    if (!isRecord(item) || typeof item.addon !== 'string' || (item.option !== undefined && typeof item.option !== 'string')) return undefined;
    picks.push({ addon: item.addon, ...(typeof item.option === 'string' ? { option: item.option } : {}) });
  }
  return picks;
}

export function addonFieldsOfJson(body: Record<string, unknown>): AddonFields {
  const fields: AddonFields = { rows: new Map(), registration: [] };
  const registration = picksOfJson(body.addons);
  if (!registration) return { ...fields, problem: 'a list of {"addon": id, "option"?: text}' };
  fields.registration = registration;
  const rows = Array.isArray(body.attendees) ? body.attendees : [];
  for (const [index, row] of rows.entries()) {
    const picks = picksOfJson(isRecord(row) ? row.addons : undefined);
    if (!picks) return { ...fields, problem: `attendee ${index + 1}: a list of {"addon": id, "option"?: text}` };
    if (picks.length > 0) fields.rows.set(index, picks);
  }
  return fields;
}

/** The form's add-on field names in a post, for the error page's "Send again". */
export function addonFieldNames(body: Record<string, unknown>): string[] {
  return Object.keys(body).filter((name) => FIELD.test(name));
}
