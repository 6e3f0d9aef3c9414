import type { AppConfig } from '../config/types.js';
import type { Db } from '../db/connect.js';
import { getSettings, type SettingKey, type SettingValue } from '../settings.js';

/** Who an email is from, as shown in its header and footer. */
export interface ChurchIdentity {
  name: string;
  address?: string;
  abn?: string;
  website?: string;
}

export const DEFAULT_CHURCH_NAME = 'Our church';

/** The settings an identity is made of. */
export const CHURCH_IDENTITY_KEYS = ['church.name', 'church.address', 'church.abn', 'church.website'] as const satisfies SettingKey[];
export type ChurchIdentitySettings = Partial<{ [K in (typeof CHURCH_IDENTITY_KEYS)[number]]: SettingValue<K> }>;

/** Settings first (an administrator's latest word), then the CHURCH_* variables, then a neutral name. */
export async function loadChurchIdentity(db: Db, config: AppConfig): Promise<ChurchIdentity> {
  return churchIdentityFrom(await getSettings(db, [...CHURCH_IDENTITY_KEYS]), config);
}

/** The identity from settings already read (e.g. in the statement that needed them anyway). */
export function churchIdentityFrom(s: ChurchIdentitySettings, config: AppConfig): ChurchIdentity {
  return {
    name: s['church.name'] ?? config.church.name ?? DEFAULT_CHURCH_NAME,
    address: s['church.address'] ?? config.church.address,
    abn: s['church.abn'] ?? config.church.abn,
    website: s['church.website'] ?? config.church.website,
  };
}
