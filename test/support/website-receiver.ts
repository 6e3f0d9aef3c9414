import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The raw body, exactly as received (signatures are checked over these bytes). */
  body: string;
}

export interface WebsiteReceiver {
  url: string;
  requests: ReceivedRequest[];
  /** Answer every later request with this status (200 by default) and these extra headers (a redirect's Location). */
  answerWith(status: number, headers?: Record<string, string>): void;
  /** Stop listening: later deliveries find the receiver down. */
  close(): Promise<void>;
}

/** A local website endpoint on 127.0.0.1, port 0, that records each request and answers as told. */
export async function startWebsiteReceiver(): Promise<WebsiteReceiver> {
  const requests: ReceivedRequest[] = [];
  let status = 200;
  let extraHeaders: Record<string, string> = {};
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(status, { 'content-type': 'application/json', ...extraHeaders });
      res.end(status < 300 ? '{"ok":true}' : '{"error":"receiver failure"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let closed = false;
  return {
    url: `http://127.0.0.1:${port}/hooks/eventops`,
    requests,
    answerWith(next, headers = {}) {
      status = next;
      extraHeaders = headers;
    },
    async close() {
      if (closed) return;
      closed = true;
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
