import crypto from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { connectDb, type Db } from '../../src/db/connect.js';

export interface TestDatabase {
  url: string;
  name: string;
  db: Db;
  drop(): Promise<void>;
}

/**
 * The server and template database the global setup prepared: provided by
 * vitest, or, outside vitest (the soak runner, plain node), named by
 * EVENTOPS_TEST_ADMIN_URL and EVENTOPS_TEST_TEMPLATE.
 */
function databaseServer(): { adminUrl: string; template: string } {
  const adminUrl = process.env.EVENTOPS_TEST_ADMIN_URL;
  const template = process.env.EVENTOPS_TEST_TEMPLATE;
  if (adminUrl && template) return { adminUrl, template };
  return { adminUrl: inject('adminDatabaseUrl'), template: inject('templateDatabase') };
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseServer().adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A fresh, migrated database of its own (a clone of the template), so test files run in parallel safely. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `t_${crypto.randomBytes(6).toString('hex')}`;
  const server = databaseServer();
  await adminQuery(`CREATE DATABASE ${name} TEMPLATE ${server.template}`);
  const url = new URL(server.adminUrl);
  url.pathname = `/${name}`;
  const db = connectDb({ url: url.toString(), poolMax: 10 });
  return {
    url: url.toString(),
    name,
    db,
    async drop() {
      await db.destroy();
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}
