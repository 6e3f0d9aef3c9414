import { z } from 'zod';
import type { AppContext } from '../context.js';
import { isEmailAddress } from '../config/fields.js';
import { UsageError } from '../errors.js';
import {
  ADMIN_SETTING_KEYS,
  DEFAULT_CARD_FEE,
  SETTING_SCHEMAS,
  getSetting,
  getSettings,
  setSetting,
  type SettingKey,
  type SettingValue,
} from '../settings.js';

export type SettingsContext = Pick<AppContext, 'db' | 'clock'>;

export interface AdminSettingView {
  key: SettingKey;
  /** The stored value, else the built-in default, else null. */
  value: unknown;
  source: 'setting' | 'default' | 'unset';
}

/** Built-in values used when nothing is stored: the spec's card fee rate; celebrations stay off until enabled (docs/office.md). */
const DEFAULTS: Partial<Record<SettingKey, unknown>> = {
  'cardFee.percent': DEFAULT_CARD_FEE.percent,
  'cardFee.fixed': DEFAULT_CARD_FEE.fixed,
  'celebrations.birthdays': false,
  'celebrations.anniversaries': false,
};

export function requireAdminSettingKey(key: string): SettingKey {
  const found = ADMIN_SETTING_KEYS.find((k) => k === key);
  if (!found) throw new UsageError(`unknown setting "${key}"`, `valid keys: ${ADMIN_SETTING_KEYS.join(', ')}`);
  return found;
}

/** What a key accepts, in words, derived from its schema. */
export function describeExpectation(key: SettingKey): string {
  const schema = SETTING_SCHEMAS[key];
  if (key === 'cardFee.percent') return 'a percentage from 0 up to (not including) 10, with at most 4 decimals';
  if (schema instanceof z.ZodBoolean) return 'true or false';
  if (schema instanceof z.ZodNumber) {
    const kind = schema.isInt ? 'a whole number' : 'a number';
    return `${kind} from ${schema.minValue ?? '-∞'} to ${schema.maxValue ?? '∞'}`;
  }
  if (schema instanceof z.ZodEmail || (schema instanceof z.ZodPipe && schema.out instanceof z.ZodEmail)) return 'an email address';
  if (schema instanceof z.ZodURL) return 'an http:// or https:// URL such as https://example.org';
  return 'non-empty text';
}

/** Turns command-line text into the key's typed value, checked by its schema. */
export function parseSettingValue<K extends SettingKey>(key: K, raw: string): SettingValue<K> {
  const schema = SETTING_SCHEMAS[key];
  const text = raw.trim();
  let candidate: unknown = text;
  if (schema instanceof z.ZodBoolean) {
    candidate = text === 'true' ? true : text === 'false' ? false : undefined;
  } else if (schema instanceof z.ZodNumber) {
    candidate = /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : undefined;
  }
  const parsed = schema.safeParse(candidate);
  if (!parsed.success) {
    throw new UsageError(`invalid value "${raw}" for ${key}: expected ${describeExpectation(key)}`);
  }
  return parsed.data as SettingValue<K>;
}

function view(key: SettingKey, stored: Partial<Record<SettingKey, unknown>>): AdminSettingView {
  if (stored[key] !== undefined) return { key, value: stored[key], source: 'setting' };
  if (DEFAULTS[key] !== undefined) return { key, value: DEFAULTS[key], source: 'default' };
  return { key, value: null, source: 'unset' };
}

/** Every administrator setting (or one), with its stored value or default. */
export async function getAdminSettings(ctx: SettingsContext, key?: string): Promise<AdminSettingView[]> {
  const keys = key === undefined ? ADMIN_SETTING_KEYS : [requireAdminSettingKey(key)];
  const stored: Partial<Record<SettingKey, unknown>> = await getSettings(ctx.db, keys);
  return keys.map((k) => view(k, stored));
}

export async function setAdminSetting(ctx: SettingsContext, key: string, raw: string): Promise<AdminSettingView> {
  const checkedKey = requireAdminSettingKey(key);
  const value = parseSettingValue(checkedKey, raw);
  await setSetting(ctx.db, checkedKey, value, ctx.clock.now());
  return { key: checkedKey, value, source: 'setting' };
}

/**
 * Recipient of membership-form alerts: Settings, then MEMBERSHIP_SECRETARY_EMAIL, then SMTP_USER, or MAIL_FROM
 * when SMTP_USER is a provider login rather than an address.
 */
export async function resolveMembershipSecretaryEmail(ctx: Pick<AppContext, 'db' | 'config'>): Promise<string | undefined> {
  const smtpUser = ctx.config.smtp?.user;
  const smtpFallback = smtpUser !== undefined && !isEmailAddress(smtpUser) ? ctx.config.mailFrom : smtpUser;
  return (await getSetting(ctx.db, 'membershipSecretaryEmail')) ?? ctx.config.membershipSecretaryEmail ?? smtpFallback;
}
