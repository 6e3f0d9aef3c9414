import type { AppConfig } from '../config/types.js';
import type { Db } from '../db/connect.js';
import { getSettings } from '../settings.js';

/** Who an email is from, as shown in its header and footer. */
export interface ChurchIdentity {
  name: string;
  address?: string;
  abn?: string;
  website?: string;
}

export const DEFAULT_CHURCH_NAME = 'Our church';

/** Settings first (an administrator's latest word), then the CHURCH_* variables, then a neutral name. */
export async function loadChurchIdentity(db: Db, config: AppConfig): Promise<ChurchIdentity> {
  const s = await getSettings(db, ['church.name', 'church.address', 'church.abn', 'church.website']);
  return {
    name: s['church.name'] ?? config.church.name ?? DEFAULT_CHURCH_NAME,
    address: s['church.address'] ?? config.church.address,
    abn: s['church.abn'] ?? config.church.abn,
    website: s['church.website'] ?? config.church.website,
  };
}
