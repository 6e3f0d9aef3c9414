import type { Knex } from 'knex';
import type { AppConfig } from '../config/types.js';
import { authSecretKey, signToken, verifyToken } from '../crypto/signed-tokens.js';
import { FIRST_LINK_VERSION, publicBaseUrl } from './links.js';

/**
 * The "Manage your registration" link in every confirmation, receipt and reminder: the registration's id and
 * its manage_link_version (16 + 4 bytes), signed with a key derived from AUTH_SECRET for this use alone. It is
 * not the office's reference nor the registration page's token, though the same version signs both (links.ts):
 * raising it (an email change confirmed or undone, or `registrations resend --new-link`) makes every earlier
 * manage, registration-page and pay-now link stop working, and nothing else does (see "Manage links" in the
 * decisions). Rotating AUTH_SECRET revokes every link at once.
 */

const UUID_BYTES = 16;
const VERSION_BYTES = 4;
/** A new registration's version (the column's default). */
export const FIRST_MANAGE_LINK_VERSION = FIRST_LINK_VERSION;


export interface ManageLink {
  registrationId: string;
  version: number;
}

export function manageToken(authSecret: string, link: ManageLink): string {
  const payload = Buffer.alloc(UUID_BYTES + VERSION_BYTES);
  Buffer.from(link.registrationId.replaceAll('-', ''), 'hex').copy(payload, 0);
  payload.writeUInt32BE(link.version, UUID_BYTES);
  return signToken(authSecretKey(authSecret, 'manage-link'), payload);
}

/** The registration and version a token names, or undefined for anything we did not sign. Whether the version is still current is the caller's check. */
export function readManageToken(authSecret: string, token: string): ManageLink | undefined {
  const payload = verifyToken(authSecretKey(authSecret, 'manage-link'), token);
  if (!payload || payload.length !== UUID_BYTES + VERSION_BYTES) return undefined;
  const hex = payload.subarray(0, UUID_BYTES).toString('hex');
  return {
    registrationId: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`,
    version: payload.readUInt32BE(UUID_BYTES),
  };
}

export function managePath(authSecret: string, link: ManageLink): string {
  return `/manage/${manageToken(authSecret, link)}`;
}

/** The link on the public base URL (AUTH_URL, else APP_URL), as every other link in an email. */
export function manageUrl(config: Pick<AppConfig, 'authUrl' | 'appUrl' | 'authSecret'>, link: ManageLink): string {
  return `${publicBaseUrl(config)}${managePath(config.authSecret, link)}`;
}

/** The link for a registration as it now is, or undefined without a public URL; read in the caller's transaction. */
export async function currentManageUrl(
  db: Knex | Knex.Transaction,
  config: Pick<AppConfig, 'authUrl' | 'appUrl' | 'authSecret'>,
  registrationId: string,
): Promise<string | undefined> {
  if (!(config.authUrl ?? config.appUrl)) return undefined;
  return manageUrl(config, { registrationId, version: await currentLinkVersion(db, registrationId) });
}

/** The registration's link version as it now is (read in the caller's transaction); the first for a row not there. */
export async function currentLinkVersion(db: Knex | Knex.Transaction, registrationId: string): Promise<number> {
  const row = await db('registrations').where({ id: registrationId }).first<{ manage_link_version: number } | undefined>('manage_link_version');
  return row?.manage_link_version ?? FIRST_MANAGE_LINK_VERSION;
}

/**
 * Revokes every link sent so far (the manage link, the registration page's and the pay-now page's tokens): the
 * registration's version goes up by one. Returns the new version.
 */
export async function bumpManageLinkVersion(trx: Knex.Transaction, registrationId: string): Promise<number> {
  const [row] = await trx('registrations')
    .where({ id: registrationId })
    .increment('manage_link_version', 1)
    .returning<Array<{ manage_link_version: number }>>('manage_link_version');
  if (!row) throw new Error(`registration ${registrationId} has no row to revoke the link of`);
  return row.manage_link_version;
}
