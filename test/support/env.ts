import crypto from 'node:crypto';
import { loadConfig, type AppConfig } from '../../src/config/index.js';

export const TEST_KEYS = {
  v1: crypto.createHash('sha256').update('eventops test key v1').digest().toString('base64'),
  v2: crypto.createHash('sha256').update('eventops test key v2').digest().toString('base64'),
};

/** A valid minimal environment for tests; override or unset (undefined) any variable. */
export function testEnv(overrides: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    NODE_ENV: 'test',
    AUTH_SECRET: 'test-auth-secret-that-is-at-least-32-bytes-long',
    ENCRYPTION_KEY: TEST_KEYS.v1,
    AUTH_URL: 'http://127.0.0.1:3000',
    CRON_SECRET: 'test-cron-secret',
    CHURCH_NAME: 'Grace Community Church',
    ...overrides,
  };
}

export function testConfig(overrides: Record<string, string | undefined> = {}, cwd?: string): AppConfig {
  return loadConfig(testEnv(overrides), { cwd }).config;
}
