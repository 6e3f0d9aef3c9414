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

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
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
  await adminQuery(`CREATE DATABASE ${name} TEMPLATE ${inject('templateDatabase')}`);
  const url = new URL(inject('adminDatabaseUrl'));
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
