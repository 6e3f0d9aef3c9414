import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { connectDb } from '../../src/db/connect.js';
import { startEmbeddedServer, type EmbeddedServer } from '../../src/db/embedded.js';
import { testEnv } from '../support/env.js';

/** A PostgreSQL on the same small server, reached through its Unix socket: the usual set-up without TCP. */
let server: EmbeddedServer;
let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-socket-'));
  // As root the server runs as "postgres", which must create its socket here.
  fs.chmodSync(dir, 0o777);
  server = await startEmbeddedServer({
    dataDir: path.join(dir, 'pg', 'data'),
    persistent: false,
    postgresFlags: ['-c', `unix_socket_directories=${dir}`],
  });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('DATABASE_URL naming a Unix socket directory', () => {
  it('postgresql:///db?host=/socket/dir is accepted by the configuration and connects through the socket', async () => {
    const admin = new URL(server.adminUrl);
    const query = new URLSearchParams({ host: dir, port: String(server.port), user: decodeURIComponent(admin.username), password: decodeURIComponent(admin.password) });
    const url = `postgresql:///postgres?${query.toString()}`;
    const { config } = loadConfig(testEnv({ DATABASE_URL: url }));
    const db = connectDb({ url: config.databaseUrl as string, poolMax: 1 });
    try {
      // No server address: the connection came through the socket, not TCP.
      const { rows } = await db.raw<{ rows: Array<{ address: string | null }> }>('SELECT inet_server_addr()::text AS address');
      expect(rows).toEqual([{ address: null }]);
    } finally {
      await db.destroy();
    }
  });

  it('a URL with neither a host nor a socket directory is still refused', () => {
    const refused = (() => {
      try {
        loadConfig(testEnv({ DATABASE_URL: 'postgresql:///postgres?host=relative/dir' }));
        return [];
      } catch (error) {
        if (error instanceof ConfigError) return error.problems.map((problem) => problem.variable);
        throw error;
      }
    })();
    expect(refused).toEqual(['DATABASE_URL']);
  });
});
