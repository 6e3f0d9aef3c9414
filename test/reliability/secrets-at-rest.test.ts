import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ANSWERS,
  findLeaks,
  keptSensitiveAnswerLocations,
  offSiteRedirects,
  plainAnswerLocations,
  purgedAnswerLocations,
  runSecretsFlow,
  SECRETS,
  type SecretsFlowResult,
} from '../../soak/cases/secrets-at-rest.js';
import { ROOT } from '../support/cli.js';

let result: SecretsFlowResult;

beforeAll(async () => {
  result = await runSecretsFlow();
}, 120_000);

describe('secrets and member data after a representative flow (setup, import, bank + pay-now, card, alert, mail jobs, rotate-keys)', () => {
  it('the flow really ran: registrations paid, jobs answered, mail delivered, keys rotated', () => {
    expect(result.steps).toMatchObject({
      setup: 201,
      'register bank': 303,
      'register card': 303,
      'card paid': 303,
      'pay-now': 303,
      'pay-now paid': 303,
      'success page': 200,
      'registration page': 200,
      'cron send-reminders': 200,
      'cron send-celebrations': 200,
      'cron send-clearance-digest?force=1': 200,
      'eventops rotate-keys --apply --confirm --json': 0,
    });
    expect(result.steps['queued mail sent']).toBeGreaterThanOrEqual(3);
    expect(result.mailCount).toBeGreaterThanOrEqual(6);
    expect(result.logLines).toBeGreaterThan(20); // one line per request, plus the jobs and the webhook outcomes
  });

  it('wrong setup token, wrong bearer and wrong registration token are refused', () => {
    expect(result.refusals).toEqual({ setup: 403, cronBearer: 401, registrationToken: 404 });
  });

  it('no secret value and no member email, mobile or clearance number appears in any log line or command output', () => {
    expect(findLeaks(result).filter((leak) => leak.where === 'log')).toEqual([]);
  });

  it('a dump of every text and JSON column holds no plaintext member email, mobile, clearance number, secret or checkout payload', () => {
    expect(result.dump.length).toBeGreaterThan(100);
    expect(findLeaks(result).filter((leak) => leak.where === 'database')).toEqual([]);
  });

  it('a sensitive answer (an allergy, a date of birth) is nowhere in the dump in plain text, while the plain answer beside it is found', () => {
    const plainText = (needle: string) => result.dump.filter((entry) => entry.value.toLowerCase().includes(needle.toLowerCase())).map((e) => `${e.table}.${e.column}`);
    expect(plainText(ANSWERS.allergy)).toEqual([]);
    expect(plainText(ANSWERS.dateOfBirth)).toEqual([]);
    // The search works: the non-sensitive answer of the same attendee is there, in registrations.answers.
    expect(plainAnswerLocations(result)).toEqual(['registrations.answers']);
    // And the sensitive ones are stored, encrypted under the rotated key.
    expect(result.dump.filter((e) => e.table === 'registrations' && e.column === 'sensitive_answers_enc').map((e) => e.value.slice(0, 3))).toEqual(['v2:']);
  });

  it('after the purge, the allergy answered on a card payment kept without a registration (UNFULFILLED) is nowhere in the database, not even decrypted with the keys; its payload keeps the plain answer', () => {
    expect(result.steps).toMatchObject({ 'day event card payment (amount differs)': 200, 'day event checkout': 'UNFULFILLED', 'purge-answers checkout payloads': 1 });
    expect(purgedAnswerLocations(result)).toEqual([]);
    // The decrypted search works: the camp's allergy, not yet due, is found in the registration that holds it.
    expect(keptSensitiveAnswerLocations(result)).toEqual(['registrations.sensitive_answers_enc']);
    expect(result.decrypted.filter((e) => e.value.includes(ANSWERS.purgedPlainDiet)).map((e) => `${e.table}.${e.column}`)).toEqual(['checkout_sessions.payload_enc']);
  });

  it('the .env written by init and the development outbox are readable by their owner only', () => {
    expect(result.fileModes).toEqual({ '.env written by init': '600', 'outbox directory': '700', 'outbox .eml': '600' });
  });

  it('redirects, provider success/cancel URLs and emailed links stay on AUTH_URL despite spoofed Host, Origin and X-Forwarded-Host', () => {
    expect(result.redirects.length).toBeGreaterThanOrEqual(8);
    expect(result.mailLinks.length).toBeGreaterThan(0);
    expect(offSiteRedirects(result)).toEqual([]);
  });
});

describe('secret comparisons', () => {
  const source = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

  it('the cron bearer and the setup token are compared with secretsEqual, the registration token with timingSafeEqual', async () => {
    const spy = vi.spyOn(crypto, 'timingSafeEqual');
    try {
      const { bearerMatches } = await import('../../src/http/cron-routes.js');
      const { secretsEqual } = await import('../../src/crypto/field-cipher.js');
      const { verifyRegistrationToken, registrationToken } = await import('../../src/payments/links.js');
      expect(bearerMatches(`Bearer ${SECRETS.CRON_SECRET}`, SECRETS.CRON_SECRET)).toBe(true);
      expect(bearerMatches(`Bearer ${SECRETS.CRON_SECRET}x`, SECRETS.CRON_SECRET)).toBe(false);
      expect(bearerMatches(undefined, SECRETS.CRON_SECRET)).toBe(false);
      expect(secretsEqual('a', SECRETS.SETUP_TOKEN)).toBe(false);
      const id = '6f1c1b9e-0d6b-4a43-9a55-3f8f0b0c2a11';
      expect(verifyRegistrationToken(SECRETS.AUTH_SECRET, id, 1, registrationToken(SECRETS.AUTH_SECRET, id, 1))).toBe(true);
      expect(verifyRegistrationToken(SECRETS.AUTH_SECRET, id, 1, '0'.repeat(64))).toBe(false);
      // Every one of the six comparisons reached timingSafeEqual, the missing bearer too: no early return on a length.
      expect(spy).toHaveBeenCalledTimes(6);
    } finally {
      spy.mockRestore();
    }
    expect(source('src/http/cron-routes.ts')).toMatch(/secretsEqual\(match\?\.\[1\] \?\? '', secret\)/);
    expect(source('src/http/setup-routes.ts')).toMatch(/secretsEqual\(token, ctx\.config\.setupToken/);
    expect(source('src/payments/links.ts')).toMatch(/crypto\.timingSafeEqual\(given, expected\)/);
  });

  it('no secret or token in src/ is compared with === or !== (configuration loading excepted: it compares two settings at boot)', () => {
    const secretName = String.raw`[\w.?]*(?:[sS]ecret|[tT]oken|[bB]earer|[aA]uthorization)[\w?.]*`;
    const comparison = new RegExp(String.raw`${secretName}\s*[!=]==|[!=]==\s*${secretName}|[!=]==\s*\`[^\`]*\$\{${secretName}\}`);
    const offenders: string[] = [];
    for (const file of sourceFiles(path.join(ROOT, 'src'))) {
      const relative = path.relative(ROOT, file);
      if (relative === path.join('src', 'config', 'load.ts')) continue;
      source(relative)
        .split('\n')
        .forEach((line, i) => {
          if (comparison.test(line) && !/(=== |!== )(undefined|null|'')|\.length/.test(line)) offenders.push(`${relative}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offenders).toEqual([]);
  });

  it('nothing in src/ calls the provider refund interface', () => {
    const calls = sourceFiles(path.join(ROOT, 'src')).flatMap((file) =>
      source(path.relative(ROOT, file))
        .split('\n')
        .map((line, i) => ({ line, at: `${path.relative(ROOT, file)}:${i + 1}` }))
        .filter(({ line }) => /\.refunds\.|refunds\.create|\/v1\/refunds/.test(line)),
    );
    expect(calls).toEqual([]);
  });
});

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

afterAll(() => {
  vi.restoreAllMocks();
});
