import { buildServer } from '../../src/http/server.js';
import type { AppContext } from '../../src/context.js';

export interface TestServer {
  url: string;
  close(): Promise<void>;
}

/** The real server on a free loopback port, for real HTTP requests. */
export async function startTestServer(ctx: AppContext): Promise<TestServer> {
  const server = await buildServer(ctx, { packageVersion: '0.0.0-test' });
  const address = await server.app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url: address,
    async close() {
      await server.app.close();
      await server.idle();
    },
  };
}
