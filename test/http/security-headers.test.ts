import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent } from '../support/factories.js';
import { startTestServer, type TestServer } from '../support/http.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

async function withServer<T>(env: Record<string, string | undefined>, run: (server: TestServer) => Promise<T>): Promise<T> {
  const server = await startTestServer(createTestContext({ db: tdb.db, env }));
  try {
    return await run(server);
  } finally {
    await server.close();
  }
}

function directives(csp: string | null): Map<string, string[]> {
  return new Map(
    (csp ?? '')
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .filter((words) => words[0])
      .map(([name, ...values]) => [name as string, values]),
  );
}

describe('security headers', () => {
  it('a page allows only its own nonced inline script and styles, cannot be framed, is not sniffed and sends no referrer', async () => {
    const event = await insertEvent(tdb.db);
    await withServer({}, async (server) => {
      const response = await fetch(`${server.url}/events/${event.slug}`);
      expect(response.status).toBe(200);
      const csp = directives(response.headers.get('content-security-policy'));
      const scriptNonce = csp.get('script-src')?.find((v) => v.startsWith("'nonce-"))?.slice(7, -1);
      const styleNonce = csp.get('style-src')?.find((v) => v.startsWith("'nonce-"))?.slice(7, -1);
      expect(scriptNonce).toMatch(/^[0-9a-f]{32}$/);
      expect(styleNonce).toMatch(/^[0-9a-f]{32}$/);
      expect(csp.get('script-src')).not.toContain("'unsafe-inline'");
      expect(csp.get('style-src')).not.toContain("'unsafe-inline'");
      expect(csp.get('default-src')).toEqual(["'self'"]);
      expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
      expect(csp.get('object-src')).toEqual(["'none'"]);
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      // AUTH_URL is http in these tests: no HSTS, no upgrading.
      expect(response.headers.get('strict-transport-security')).toBeNull();
      expect(csp.has('upgrade-insecure-requests')).toBe(false);

      // Every script and inline block carries this response's nonce; the page's script comes from our own
      // address (script-src 'self'), as JavaScript; nothing runs from an attribute.
      const html = await response.text();
      const scripts = [...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1] ?? '');
      const styles = [...html.matchAll(/<style([^>]*)>/g)].map((m) => m[1] ?? '');
      expect(scripts.length).toBeGreaterThan(0);
      expect(styles.length).toBeGreaterThan(1);
      for (const attributes of scripts) expect(attributes).toMatch(new RegExp(`^ nonce="${scriptNonce}"(?: src="/assets/[0-9a-f]{16}/registration-form\\.js")?$`));
      const source = /src="([^"]+)"/.exec(scripts.find((attributes) => attributes.includes('src=')) ?? '')?.[1];
      expect(source).toBeDefined();
      const script = await fetch(`${server.url}${source}`);
      expect(script.status).toBe(200);
      expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(script.headers.get('x-content-type-options')).toBe('nosniff');
      for (const attributes of styles) expect(attributes).toBe(` nonce="${styleNonce}"`);
      expect(html).not.toMatch(/\son[a-z]+=/i);
      expect(html).not.toMatch(/\sstyle=/i);

      // A new nonce for every response.
      const again = directives((await fetch(`${server.url}/events/${event.slug}`)).headers.get('content-security-policy'));
      expect(again.get('script-src')).not.toContain(`'nonce-${scriptNonce}'`);
    });
  });

  it('forms may post only to us, redirected at most to the card provider; the captcha widget is allowed only when configured', async () => {
    await withServer({ PSP_SECRET_KEY: 'sk_test_x', PSP_WEBHOOK_SECRET: 'whsec_x', CAPTCHA_SECRET_KEY: 'secret', CAPTCHA_SITE_KEY: 'site' }, async (server) => {
      const csp = directives((await fetch(`${server.url}/healthz`)).headers.get('content-security-policy'));
      expect(csp.get('form-action')).toEqual(["'self'", 'https://checkout.stripe.com']);
      expect(csp.get('script-src')).toContain('https://challenges.cloudflare.com');
      expect(csp.get('frame-src')).toEqual(['https://challenges.cloudflare.com']);
    });
    await withServer({}, async (server) => {
      const csp = directives((await fetch(`${server.url}/healthz`)).headers.get('content-security-policy'));
      expect(csp.get('form-action')).toEqual(["'self'"]);
      expect(csp.get('frame-src')).toEqual(["'none'"]);
    });
  });

  it('an address fastify refuses before routing (cannot be decoded, a part too long) answers the one error body with every security header', async () => {
    await withServer({ AUTH_URL: 'https://events.church.example' }, async (server) => {
      const routed = (await fetch(`${server.url}/healthz`)).headers;
      const cases: Array<[string, number, string]> = [
        ['/events/%E0%A4%A', 400, 'bad_url'],
        ['/registrations/%ZZ', 400, 'bad_url'],
        [`/events/${'a'.repeat(101)}`, 414, 'url_too_long'],
      ];
      for (const [path, status, code] of cases) {
        const response = await fetch(`${server.url}${path}`);
        expect(response.status, path).toBe(status);
        expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(await response.json()).toEqual({ error: { code, message: expect.any(String) } });
        // The same policy, less the nonces a routed answer gets for its inline blocks.
        const withoutNonces = (csp: string | null) => (csp ?? '').replace(/ 'nonce-[0-9a-f]+'/g, '');
        expect(response.headers.get('content-security-policy'), path).toBe(withoutNonces(routed.get('content-security-policy')));
        for (const header of ['x-frame-options', 'x-content-type-options', 'referrer-policy', 'strict-transport-security']) {
          expect(response.headers.get(header), `${path} ${header}`).toBe(routed.get(header));
        }
      }
    });
  });

  it('HSTS and upgrade-insecure-requests are sent when AUTH_URL is https', async () => {
    await withServer({ AUTH_URL: 'https://events.church.example' }, async (server) => {
      const response = await fetch(`${server.url}/healthz`);
      expect(response.headers.get('strict-transport-security')).toBe('max-age=31536000');
      expect(directives(response.headers.get('content-security-policy')).has('upgrade-insecure-requests')).toBe(true);
    });
  });
});
