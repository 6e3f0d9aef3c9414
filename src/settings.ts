import { z } from 'zod';
import { mailAddress } from './contact-rules.js';
import type { Db } from './db/connect.js';

/**
 * Application settings (key/value rows in app_settings). Each key has a schema;
 * `eventops settings set` and every reader go through these definitions.
 */
export const SETTING_SCHEMAS = {
  'church.name': z.string().min(1),
  'church.address': z.string().min(1),
  'church.abn': z.string().min(1),
  // http(s) only: it becomes a link in every email, and z.url() alone accepts javascript: and data:.
  'church.website': z.httpUrl(),
  // Below 10%, at most 4 decimals: the surcharge is computed exactly from these digits.
  'cardFee.percent': z
    .number()
    .min(0)
    .lt(10)
    .refine((percent) => /^\d+(\.\d{1,4})?$/.test(String(percent)), { message: 'at most 4 decimals' }),
  'cardFee.fixed': z.number().int().min(0).max(10_000),
  'celebrations.birthdays': z.boolean(),
  'celebrations.anniversaries': z.boolean(),
  membershipSecretaryEmail: mailAddress('not a valid email address'),
  'bank.accountName': z.string().min(1),
  'bank.bsb': z.string().min(1),
  'bank.accountNumber': z.string().min(1),
  // Written by the clearance digest job, not by hand.
  clearanceDigestLastMonth: z.string().regex(/^\d{4}-\d{2}$/),
  // forcedAt: when the month's round was started by --force (ISO time); absent for the month's first round.
  clearanceDigestDelivered: z.object({ month: z.string(), addresses: z.array(z.string()), forcedAt: z.string().optional() }),
} as const;

export type SettingKey = keyof typeof SETTING_SCHEMAS;
export type SettingValue<K extends SettingKey> = z.infer<(typeof SETTING_SCHEMAS)[K]>;

/** Keys an administrator may set with `eventops settings set`. */
export const ADMIN_SETTING_KEYS: SettingKey[] = [
  'church.name',
  'church.address',
  'church.abn',
  'church.website',
  'cardFee.percent',
  'cardFee.fixed',
  'celebrations.birthdays',
  'celebrations.anniversaries',
  'membershipSecretaryEmail',
  'bank.accountName',
  'bank.bsb',
  'bank.accountNumber',
];

export const DEFAULT_CARD_FEE = { percent: 1.7, fixed: 30 } as const;

export function isSettingKey(key: string): key is SettingKey {
  return Object.hasOwn(SETTING_SCHEMAS, key);
}

export async function getSetting<K extends SettingKey>(db: Db, key: K): Promise<SettingValue<K> | undefined> {
  const row = await db('app_settings').where({ key }).first<{ value: unknown } | undefined>();
  if (!row) return undefined;
  const parsed = SETTING_SCHEMAS[key].safeParse(row.value);
  return parsed.success ? (parsed.data as SettingValue<K>) : undefined;
}

export async function getSettings<K extends SettingKey>(db: Db, keys: K[]): Promise<Partial<{ [P in K]: SettingValue<P> }>> {
  const rows = await db('app_settings').whereIn('key', keys).select<Array<{ key: K; value: unknown }>>('key', 'value');
  return parseSettings<K>(Object.fromEntries(rows.map((row) => [row.key, row.value])) as Partial<Record<K, unknown>>);
}

/** Stored values (as read from app_settings) → the valid ones; a value that fails its schema counts as unset. */
export function parseSettings<K extends SettingKey>(stored: Partial<Record<K, unknown>>): Partial<{ [P in K]: SettingValue<P> }> {
  const result: Partial<{ [P in K]: SettingValue<P> }> = {};
  for (const [key, value] of Object.entries(stored) as Array<[K, unknown]>) {
    if (!isSettingKey(key)) continue;
    const parsed = SETTING_SCHEMAS[key].safeParse(value);
    if (parsed.success) result[key] = parsed.data as SettingValue<K>;
  }
  return result;
}

export async function setSetting<K extends SettingKey>(db: Db, key: K, value: SettingValue<K>, now: Date): Promise<void> {
  const checked = SETTING_SCHEMAS[key].parse(value);
  await db('app_settings')
    .insert({ key, value: JSON.stringify(checked), updated_at: now })
    .onConflict('key')
    .merge(['value', 'updated_at']);
}

/** The card fee rate from Settings, default 1.7% + 30 minor units. */
export async function getCardFeeRate(db: Db): Promise<{ percent: number; fixed: number }> {
  return cardFeeRateFrom(await getSettings(db, [...CARD_FEE_KEYS]));
}

export const CARD_FEE_KEYS = ['cardFee.percent', 'cardFee.fixed'] as const satisfies SettingKey[];

/** The card fee rate from settings already read (getCardFeeRate's rule). */
export function cardFeeRateFrom(s: Partial<{ [K in (typeof CARD_FEE_KEYS)[number]]: SettingValue<K> }>): { percent: number; fixed: number } {
  return { percent: s['cardFee.percent'] ?? DEFAULT_CARD_FEE.percent, fixed: s['cardFee.fixed'] ?? DEFAULT_CARD_FEE.fixed };
}

export interface BankDetails {
  accountName: string;
  bsb: string;
  accountNumber: string;
}

export const BANK_KEYS = ['bank.accountName', 'bank.bsb', 'bank.accountNumber'] as const satisfies SettingKey[];

/** Bank-transfer details from Settings; undefined until all three are filled in. */
export async function getBankDetails(db: Db): Promise<BankDetails | undefined> {
  return bankDetailsFrom(await getSettings(db, [...BANK_KEYS]));
}

/** The bank-transfer details from settings already read (getBankDetails's rule). */
export function bankDetailsFrom(s: Partial<{ [K in (typeof BANK_KEYS)[number]]: SettingValue<K> }>): BankDetails | undefined {
  const accountName = s['bank.accountName'];
  const bsb = s['bank.bsb'];
  const accountNumber = s['bank.accountNumber'];
  return accountName && bsb && accountNumber ? { accountName, bsb, accountNumber } : undefined;
}
