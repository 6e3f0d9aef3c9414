import crypto from 'node:crypto';
import type { Keyring } from '../config/types.js';

/**
 * A key of its own for one use (`purpose`), derived from key v1: HMAC-SHA256 of
 * `eventops:<purpose>` under v1, as the lookup hashes' key is. v1 never changes, so what is
 * signed with it stays valid through key rotation, and no two uses share a key.
 */
export function purposeKey(keyring: Keyring, purpose: string): Buffer {
  const v1 = keyring.keys.get('v1');
  if (!v1) throw new Error('the keyring has no key v1');
  return crypto.createHmac('sha256', v1).update(`eventops:${purpose}`).digest();
}

const secretKeys = new Map<string, Buffer>();

/**
 * A link key of its own for one use, derived from AUTH_SECRET: HMAC-SHA256 of `eventops:<purpose>` under it.
 * Cached, since every link on a page is signed with it; a changed secret starts the cache afresh.
 */
export function authSecretKey(authSecret: string, purpose: string): Buffer {
  const name = `${purpose}\u0000${authSecret}`;
  let key = secretKeys.get(name);
  if (!key) {
    key = crypto.createHmac('sha256', authSecret).update(`eventops:${purpose}`).digest();
    if (secretKeys.size > 16) secretKeys.clear();
    secretKeys.set(name, key);
  }
  return key;
}

/** 128 bits of the MAC: unguessable, and short enough for a link's path part (at most 100 characters). */
const MAC_BYTES = 16;

/**
 * `<payload>.<MAC>`, both base64url; the MAC is HMAC-SHA256 of the payload, cut to 128 bits.
 * The payload travels in the clear, so nothing is stored to find it again; without the key no
 * MAC can be made for another payload.
 */
export function signToken(key: Buffer, payload: Buffer): string {
  return `${payload.toString('base64url')}.${mac(key, payload).toString('base64url')}`;
}

/** The payload of a token signed with `key`, or undefined for anything else (tampered, cut short, made up); compared in constant time. */
export function verifyToken(key: Buffer, token: string): Buffer | undefined {
  const parts = token.split('.');
  if (parts.length !== 2) return undefined;
  const [payloadText = '', macText = ''] = parts;
  const payload = Buffer.from(payloadText, 'base64url');
  // Buffer.from ignores what is not base64url: only the canonical spelling of the bytes is the token.
  if (payload.length === 0 || payload.toString('base64url') !== payloadText) return undefined;
  const given = Buffer.from(macText, 'base64url');
  if (given.length !== MAC_BYTES || given.toString('base64url') !== macText) return undefined;
  return crypto.timingSafeEqual(given, mac(key, payload)) ? payload : undefined;
}

function mac(key: Buffer, payload: Buffer): Buffer {
  return crypto.createHmac('sha256', key).update(payload).digest().subarray(0, MAC_BYTES);
}
