import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import addressparser from 'nodemailer/lib/addressparser/index.js';

export interface MailApiRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  idempotencyKey: string | undefined;
  body: Record<string, unknown>;
  /** `body.from` read as one RFC 5322 mailbox (name '' when there is none); undefined when it is not one. */
  from: { name: string; address: string } | undefined;
}

export interface MailApiServer {
  url: string;
  key: string;
  /** Requests that carried the right bearer key, answered or not. */
  requests: MailApiRequest[];
  /**
   * Requests the service actually sent. Like Resend, a request whose idempotency key was already
   * answered 200 gets that stored answer back and is not sent again; a refused request stores nothing.
   */
  sent: MailApiRequest[];
  /** The next `count` authorised requests are answered with `status` (e.g. 429, 500, 422). */
  failNext(count: number, status: number): void;
  /** The next `count` authorised requests are never answered. */
  stallNext(count: number): void;
  /** Authorised requests that `match` are answered with `status` until this is called again (no `match`: none are). */
  failWhere(match: ((request: MailApiRequest) => boolean) | undefined, status?: number): void;
  close(): Promise<void>;
  /** MAILAPI_* and MAIL_FROM variables that point the application at this server. */
  configEnv(): Record<string, string>;
}

const ERROR_NAMES: Record<number, string> = {
  422: 'validation_error',
  429: 'rate_limit_exceeded',
  500: 'internal_server_error',
};

/** A local stand-in for a Resend-style mail API: `POST /emails` with a bearer key. */
export async function startMailApiServer(options: { key?: string } = {}): Promise<MailApiServer> {
  const key = options.key ?? 're_test_key_for_eventops';
  const requests: MailApiRequest[] = [];
  const sent: MailApiRequest[] = [];
  /** The stored 200 answer per idempotency key. */
  const answered = new Map<string, unknown>();
  const failures: number[] = [];
  let failing: { match: (request: MailApiRequest) => boolean; status: number } | undefined;
  let stalls = 0;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const answer = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.headers.authorization !== `Bearer ${key}`) {
        answer(401, { statusCode: 401, name: 'missing_api_key', message: 'Missing or invalid API key' });
        return;
      }
      if (req.method !== 'POST' || req.url !== '/emails') {
        answer(404, { statusCode: 404, name: 'not_found', message: 'Not found' });
        return;
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        answer(400, { statusCode: 400, name: 'invalid_json', message: 'Body is not JSON' });
        return;
      }
      const request: MailApiRequest = {
        method: req.method,
        path: req.url,
        authorization: req.headers.authorization,
        idempotencyKey: typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : undefined,
        body,
        from: mailboxOf(body.from),
      };
      requests.push(request);
      if (stalls > 0) {
        stalls -= 1;
        return;
      }
      // As Resend: the sender is `address` or `Name <address>`, anything else is refused.
      if (request.from === undefined) {
        answer(422, { statusCode: 422, name: 'validation_error', message: 'Invalid `from` field' });
        return;
      }
      const failure = failures.shift();
      if (failure !== undefined) {
        answer(failure, { statusCode: failure, name: ERROR_NAMES[failure] ?? 'application_error', message: 'failing on request' });
        return;
      }
      if (failing?.match(request)) {
        answer(failing.status, { statusCode: failing.status, name: ERROR_NAMES[failing.status] ?? 'application_error', message: 'failing on request' });
        return;
      }
      const stored = request.idempotencyKey === undefined ? undefined : answered.get(request.idempotencyKey);
      if (stored !== undefined) {
        answer(200, stored);
        return;
      }
      const response = { id: crypto.randomUUID() };
      if (request.idempotencyKey !== undefined) answered.set(request.idempotencyKey, response);
      sent.push(request);
      answer(200, response);
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    key,
    requests,
    sent,
    failNext(count, status) {
      for (let i = 0; i < count; i++) failures.push(status);
    },
    stallNext(count) {
      stalls += count;
    },
    failWhere(match, status = 422) {
      failing = match ? { match, status } : undefined;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    configEnv() {
      return { MAILAPI_KEY: key, MAILAPI_URL: url, MAIL_FROM: 'events@example.org' };
    },
  };
}

function mailboxOf(value: unknown): { name: string; address: string } | undefined {
  if (typeof value !== 'string') return undefined;
  const parsed = addressparser(value, { flatten: true });
  const [mailbox] = parsed;
  return parsed.length === 1 && mailbox && /^[^\s@<>]+@[^\s@<>]+$/.test(mailbox.address) ? mailbox : undefined;
}
