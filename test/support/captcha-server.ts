import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CaptchaCheck {
  secret: string | null;
  response: string | null;
  remoteip: string | null;
}

export interface CaptchaServer {
  verifyUrl: string;
  /** Every siteverify request, in order. */
  checks: CaptchaCheck[];
  /** Answer later requests after this delay (to exercise the caller's timeout). */
  delayResponses(ms: number): void;
  close(): Promise<void>;
}

/**
 * A local stand-in for Cloudflare Turnstile's siteverify: form-encoded
 * secret + response in, JSON {success, error-codes} out. A token passes once,
 * as a real one does; the secret must match.
 */
export async function startCaptchaServer(options: {
  secret: string;
  validTokens: string[];
  /** Runs before each answer: a test's change made while the registration waits for its bot check. */
  beforeAnswer?: () => Promise<void>;
}): Promise<CaptchaServer> {
  const checks: CaptchaCheck[] = [];
  const unused = new Set(options.validTokens);
  let delay = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const check = { secret: form.get('secret'), response: form.get('response'), remoteip: form.get('remoteip') };
      checks.push(check);
      const errors: string[] = [];
      if (check.secret !== options.secret) errors.push('invalid-input-secret');
      if (!check.response) errors.push('missing-input-response');
      else if (!unused.has(check.response)) errors.push(options.validTokens.includes(check.response) ? 'timeout-or-duplicate' : 'invalid-input-response');
      if (errors.length === 0 && check.response) unused.delete(check.response);
      const body = JSON.stringify({ success: errors.length === 0, 'error-codes': errors, hostname: 'localhost' });
      const answer = () => {
        if (res.destroyed) return;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      };
      setTimeout(() => void (options.beforeAnswer ?? (async () => undefined))().then(answer, answer), delay);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    verifyUrl: `http://127.0.0.1:${port}/turnstile/v0/siteverify`,
    checks,
    delayResponses(ms) {
      delay = ms;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
