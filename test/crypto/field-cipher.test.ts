import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { createFieldCipher, FieldDecryptError, secretsEqual, type FieldCipher } from '../../src/crypto/field-cipher.js';
import { TEST_KEYS, testEnv } from '../support/env.js';

function cipherFor(overrides: Record<string, string | undefined>): FieldCipher {
  return createFieldCipher(loadConfig(testEnv(overrides)).config.keyring);
}

const v1Only = () => cipherFor({ ENCRYPTION_KEY: TEST_KEYS.v1 });
const v1Explicit = () => cipherFor({ ENCRYPTION_KEY: TEST_KEYS.v1, ENCRYPTION_KEY_V1: TEST_KEYS.v1 });
const v2Current = () =>
  cipherFor({ ENCRYPTION_KEY: TEST_KEYS.v1, ENCRYPTION_KEY_V1: TEST_KEYS.v1, ENCRYPTION_KEY_V2: TEST_KEYS.v2, ENCRYPTION_KEY_ID: 'v2' });

/** Replaces one base64 part of a stored value with the same bytes, one bit flipped. */
function flipBit(stored: string, part: 1 | 2 | 3): string {
  const parts = stored.split(':');
  const bytes = Buffer.from(parts[part] ?? '', 'base64');
  bytes[0] = (bytes[0] ?? 0) ^ 0x01;
  parts[part] = bytes.toString('base64');
  return parts.join(':');
}

describe('field cipher', () => {
  it('decrypts what it encrypted, including empty and non-ASCII text', () => {
    const cipher = v1Only();
    for (const plaintext of ['ruth@example.org', '', 'Zoë Ngô 🎉 +61 412 345 678']) {
      expect(cipher.decrypt(cipher.encrypt(plaintext))).toBe(plaintext);
    }
  });

  it('never stores the plaintext and uses a fresh IV for every write', () => {
    const cipher = v1Only();
    const a = cipher.encrypt('ruth@example.org');
    const b = cipher.encrypt('ruth@example.org');
    expect(a).not.toContain('ruth');
    expect(a).not.toBe(b);
  });

  it('names the key version in the stored form: <version>:<iv>:<tag>:<ciphertext>', () => {
    const stored = v2Current().encrypt('secret');
    expect(stored).toMatch(/^v2:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
    expect(v2Current().versionOf(stored)).toBe('v2');
    expect(v1Only().versionOf(v1Only().encrypt('secret'))).toBe('v1');
  });

  it('writes with ENCRYPTION_KEY_ID and still reads values written under v1 after switching to v2', () => {
    const writtenUnderV1 = v1Explicit().encrypt('0412 345 678');
    const rotated = v2Current();
    expect(rotated.currentVersion).toBe('v2');
    expect(rotated.decrypt(writtenUnderV1)).toBe('0412 345 678');
    const writtenUnderV2 = rotated.encrypt('0412 345 678');
    expect(rotated.versionOf(writtenUnderV2)).toBe('v2');
    expect(rotated.decrypt(writtenUnderV2)).toBe('0412 345 678');
  });

  it('ENCRYPTION_KEY alone acts as key v1, so its values read under an explicit V1 keyring', () => {
    expect(v1Explicit().decrypt(v1Only().encrypt('same key'))).toBe('same key');
  });

  it.each([
    ['iv', 1],
    ['auth tag', 2],
    ['ciphertext', 3],
  ] as const)('rejects a value whose %s was altered with FieldDecryptError', (_name, part) => {
    const cipher = v1Only();
    const tampered = flipBit(cipher.encrypt('pay 100 to account 123'), part);
    expect(() => cipher.decrypt(tampered)).toThrow(FieldDecryptError);
  });

  it('rejects a truncated auth tag instead of checking fewer bytes', () => {
    const cipher = v1Only();
    const parts = cipher.encrypt('value').split(':');
    parts[2] = Buffer.from(parts[2] ?? '', 'base64').subarray(0, 4).toString('base64');
    expect(() => cipher.decrypt(parts.join(':'))).toThrow(FieldDecryptError);
  });

  it('rejects a value relabelled with another key version', () => {
    const cipher = v2Current();
    const relabelled = cipher.encrypt('value').replace(/^v2:/, 'v1:');
    expect(() => cipher.decrypt(relabelled)).toThrow(FieldDecryptError);
  });

  it('rejects text that is not in the stored form, without echoing it', () => {
    const cipher = v1Only();
    for (const stored of ['plain@example.org', 'v1:only:three', '']) {
      expect(() => cipher.decrypt(stored)).toThrow(FieldDecryptError);
    }
    expect(() => cipher.versionOf('plain@example.org')).toThrow(FieldDecryptError);
    try {
      cipher.decrypt('plain@example.org');
    } catch (error) {
      expect((error as Error).message).not.toContain('plain@example.org');
    }
  });

  it('a value under a key version missing from the keyring fails with a message naming ENCRYPTION_KEY_Vn', () => {
    const writtenUnderV2 = v2Current().encrypt('value');
    const cipher = v1Only();
    expect(() => cipher.decrypt(writtenUnderV2)).toThrow(FieldDecryptError);
    expect(() => cipher.decrypt(writtenUnderV2)).toThrow(/ENCRYPTION_KEY_V2/);
    expect(() => cipher.decrypt(writtenUnderV2.replace(/^v2:/, 'v7:'))).toThrow(/ENCRYPTION_KEY_V7/);
  });

  it('failure messages never contain the plaintext', () => {
    const cipher = v1Only();
    const tampered = flipBit(cipher.encrypt('ruth@example.org'), 3);
    expect(() => cipher.decrypt(tampered)).toThrow(FieldDecryptError);
    try {
      cipher.decrypt(tampered);
    } catch (error) {
      expect((error as Error).message).not.toContain('ruth');
    }
  });
});

describe('lookup hashes', () => {
  it('derive from key v1 whichever version writes, so hashes match across keyrings', () => {
    const hashes = [v1Only(), v1Explicit(), v2Current()].map((c) => c.lookupHash('email', 'ruth@example.org'));
    expect(new Set(hashes).size).toBe(1);
    expect(hashes[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(v2Current().lookupHash('mobile', '0412345678')).toBe(v1Only().lookupHash('mobile', '0412345678'));
  });

  it('differ under a different key v1', () => {
    const other = cipherFor({ ENCRYPTION_KEY: TEST_KEYS.v2 });
    expect(other.lookupHash('email', 'ruth@example.org')).not.toBe(v1Only().lookupHash('email', 'ruth@example.org'));
  });

  it('ignore case and surrounding whitespace of an email', () => {
    const cipher = v1Only();
    const expected = cipher.lookupHash('email', 'ruth@example.org');
    expect(cipher.lookupHash('email', '  Ruth@Example.ORG \n')).toBe(expected);
    expect(cipher.lookupHash('email', 'ruth2@example.org')).not.toBe(expected);
  });

  it('ignore spaces, dashes and brackets in a mobile number but keep a leading +', () => {
    const cipher = v1Only();
    const expected = cipher.lookupHash('mobile', '0412345678');
    expect(cipher.lookupHash('mobile', '0412 345 678')).toBe(expected);
    expect(cipher.lookupHash('mobile', ' 0412-345-678 ')).toBe(expected);
    expect(cipher.lookupHash('mobile', '(04) 1234 5678')).toBe(expected);
    expect(cipher.lookupHash('mobile', '+61 412 345 678')).toBe(cipher.lookupHash('mobile', '+61412345678'));
    expect(cipher.lookupHash('mobile', '+61412345678')).not.toBe(cipher.lookupHash('mobile', '61412345678'));
  });

  it('keep emails and mobiles apart even for the same text', () => {
    const cipher = v1Only();
    expect(cipher.lookupHash('email', '0412345678')).not.toBe(cipher.lookupHash('mobile', '0412345678'));
  });
});

describe('secretsEqual', () => {
  it('is true only for identical secrets, including secrets of different lengths', () => {
    expect(secretsEqual('cron-secret', 'cron-secret')).toBe(true);
    expect(secretsEqual('cron-secret', 'cron-secreT')).toBe(false);
    expect(secretsEqual('cron', 'cron-secret')).toBe(false);
    expect(secretsEqual('cron-secret-longer', 'cron-secret')).toBe(false);
    expect(secretsEqual('', 'cron-secret')).toBe(false);
    expect(secretsEqual('', '')).toBe(true);
  });
});
