import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startEmbeddedServer } from '../../src/db/embedded.js';

async function fsyncOf(adminUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return (await client.query<{ fsync: string }>('SHOW fsync')).rows[0]?.fsync ?? '';
  } finally {
    await client.end();
  }
}

describe('embedded PostgreSQL durability', () => {
  it('the development database (persistent, .eventops/pg) flushes to disk; only a throwaway server (the tests’) runs with fsync off', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-fsync-'));
    fs.chmodSync(dir, 0o755); // as root the server runs as "postgres", which must reach the data directory
    try {
      const kept = await startEmbeddedServer({ dataDir: path.join(dir, 'kept'), persistent: true });
      try {
        expect(await fsyncOf(kept.adminUrl)).toBe('on');
      } finally {
        await kept.stop();
      }
      const throwaway = await startEmbeddedServer({ dataDir: path.join(dir, 'throwaway'), persistent: false });
      try {
        expect(await fsyncOf(throwaway.adminUrl)).toBe('off');
      } finally {
        await throwaway.stop();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
