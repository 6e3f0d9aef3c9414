import crypto from 'node:crypto';
import type { Keyring } from '../config/types.js';
import { purposeKey } from './signed-tokens.js';

/**
 * AES-256-GCM field encryption. Stored form: `<version>:<iv>:<tag>:<ciphertext>`
 * (base64 parts), so a value written under v1 stays readable after rotation.
 */
export interface FieldCipher {
  readonly currentVersion: string;
  encrypt(plaintext: string): string;
  decrypt(stored: string): string;
  /** The key version a stored value was written with; throws FieldDecryptError when it is not an encrypted value. */
  versionOf(stored: string): string;
  /** HMAC-SHA256 under key v1 of the normalised value, hex. */
  lookupHash(kind: LookupKind, value: string): string;
}

export type LookupKind = 'email' | 'mobile';

const ALGORITHM = 'aes-256-gcm';
// GCM accepts tags as short as 4 bytes unless told otherwise; a truncated tag would weaken the integrity check.
const AUTH_TAG_BYTES = 16;

export function normaliseEmail(value: string): string {
  return value.trim().toLowerCase();
}

/** Digits only, with a leading + kept, so "0412 345 678" and "0412345678" match. */
export function normaliseMobile(value: string): string {
  const trimmed = value.trim();
  const digits = trimmed.replace(/\D/g, '');
  return trimmed.startsWith('+') ? `+${digits}` : digits;
}

export class FieldDecryptError extends Error {
  readonly code = 'field_decrypt_failed';
  constructor(message: string) {
    super(message);
    this.name = 'FieldDecryptError';
  }
}

/**
 * A stored value names a key version this process has no key for: written by a process
 * that already has a newer key (mid-rotation), not damaged. Distinct from a value that
 * fails to decrypt under a key this process has, which no restart will fix.
 */
export class UnknownKeyVersionError extends FieldDecryptError {
  constructor(readonly version: string) {
    super(`no encryption key for version ${version}; set ENCRYPTION_KEY_${version.toUpperCase()}`);
    this.name = 'UnknownKeyVersionError';
  }
}

export function createFieldCipher(keyring: Keyring): FieldCipher {
  const keyFor = (version: string): Buffer => {
    const key = keyring.keys.get(version);
    if (!key) throw new UnknownKeyVersionError(version);
    return key;
  };
  // Key v1 must exist (UnknownKeyVersionError names the variable otherwise): the lookup hashes derive from it.
  keyFor('v1');
  const lookupKey = purposeKey(keyring, 'lookup-hash');

  return {
    currentVersion: keyring.currentId,
    encrypt(plaintext) {
      const iv = crypto.randomBytes(12);
      const cipher = crypto.createCipheriv(ALGORITHM, keyFor(keyring.currentId), iv);
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [keyring.currentId, iv.toString('base64'), cipher.getAuthTag().toString('base64'), ciphertext.toString('base64')].join(':');
    },
    decrypt(stored) {
      const parts = stored.split(':');
      if (parts.length !== 4) throw new FieldDecryptError('stored value is not in the encrypted field format');
      const [version, iv, tag, ciphertext] = parts as [string, string, string, string];
      const key = keyFor(version);
      try {
        const decipher = crypto.createDecipheriv(ALGORITHM, key, Buffer.from(iv, 'base64'), { authTagLength: AUTH_TAG_BYTES });
        decipher.setAuthTag(Buffer.from(tag, 'base64'));
        return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64')), decipher.final()]).toString('utf8');
      } catch {
        throw new FieldDecryptError(`cannot decrypt a value written with key ${version}: wrong key or tampered data`);
      }
    },
    versionOf(stored) {
      const end = stored.indexOf(':');
      if (end <= 0) throw new FieldDecryptError('stored value is not in the encrypted field format');
      return stored.slice(0, end);
    },
    lookupHash(kind, value) {
      const normalised = kind === 'email' ? normaliseEmail(value) : normaliseMobile(value);
      return crypto.createHmac('sha256', lookupKey).update(`${kind}:${normalised}`).digest('hex');
    },
  };
}

/** Compares two secrets in constant time (lengths are hashed first so they may differ). */
export function secretsEqual(given: string, expected: string): boolean {
  const a = crypto.createHash('sha256').update(given).digest();
  const b = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(a, b);
}
