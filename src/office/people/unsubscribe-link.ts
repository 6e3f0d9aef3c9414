import type { AppConfig, Keyring } from '../../config/types.js';
import { purposeKey, signToken, verifyToken } from '../../crypto/signed-tokens.js';
import { publicBaseUrl } from '../../payments/links.js';

const PURPOSE = 'celebrations-unsubscribe';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UUID_BYTES = 16;
/** A birthday email names its person; a couple's anniversary email, both spouses. */
const MOST_PEOPLE = 2;
/** Derived once per keyring: a celebration run signs a link for every email it sends. */
const keys = new WeakMap<Keyring, Buffer>();

function unsubscribeKey(keyring: Keyring): Buffer {
  let key = keys.get(keyring);
  if (!key) {
    key = purposeKey(keyring, PURPOSE);
    keys.set(keyring, key);
  }
  return key;
}

/**
 * The token of the unsubscribe link in a celebration email: the ids of the people the email
 * greets (16 bytes each), signed with a key derived from key v1 for this use alone. Nothing is
 * stored, and nobody can make one for someone else. A couple's is 66 characters.
 */
export function celebrationsUnsubscribeToken(keyring: Keyring, personIds: readonly string[]): string {
  const ids = [...personIds].sort();
  if (ids.length === 0 || ids.length > MOST_PEOPLE || !ids.every((id) => UUID.test(id))) {
    throw new Error(`an unsubscribe link names one or two people by id, not ${ids.length}`);
  }
  return signToken(unsubscribeKey(keyring), Buffer.concat(ids.map((id) => Buffer.from(id.replaceAll('-', ''), 'hex'))));
}

/** The people a token names, or undefined for anything that is not a token we made. */
export function personIdsOfUnsubscribeToken(keyring: Keyring, token: string): string[] | undefined {
  const payload = verifyToken(unsubscribeKey(keyring), token);
  if (!payload || payload.length % UUID_BYTES !== 0 || payload.length > MOST_PEOPLE * UUID_BYTES) return undefined;
  const ids: string[] = [];
  for (let at = 0; at < payload.length; at += UUID_BYTES) {
    const hex = payload.subarray(at, at + UUID_BYTES).toString('hex');
    ids.push(`${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`);
  }
  return ids;
}

export function celebrationsUnsubscribePath(token: string): string {
  return `/celebrations/unsubscribe/${encodeURIComponent(token)}`;
}

/** The link, on the public base URL (AUTH_URL, else APP_URL), as every other link in an email. */
export function celebrationsUnsubscribeUrl(config: Pick<AppConfig, 'authUrl' | 'appUrl' | 'keyring'>, personIds: readonly string[]): string {
  return `${publicBaseUrl(config)}${celebrationsUnsubscribePath(celebrationsUnsubscribeToken(config.keyring, personIds))}`;
}
