import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RoundRobinProxy {
  url: string;
  /** Requests forwarded to each backend, in backend order. */
  forwarded: number[];
  close(): Promise<void>;
}

/**
 * A load balancer on loopback: each request goes to the next backend in turn,
 * with the client's address appended to X-Forwarded-For as a real proxy does.
 */
export async function startRoundRobinProxy(backends: string[]): Promise<RoundRobinProxy> {
  let next = 0;
  const forwarded = backends.map(() => 0);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const server = http.createServer((request, response) => {
    const index = next++ % backends.length;
    forwarded[index] = (forwarded[index] ?? 0) + 1;
    const target = new URL(request.url ?? '/', backends[index]);
    const prior = request.headers['x-forwarded-for'];
    const client = request.socket.remoteAddress ?? '';
    const upstream = http.request(
      target,
      {
        method: request.method,
        agent,
        headers: { ...request.headers, host: target.host, 'x-forwarded-for': prior ? `${String(prior)}, ${client}` : client },
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on('error', () => {
      if (!response.headersSent) response.writeHead(502);
      response.end();
    });
    request.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    forwarded,
    async close() {
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
