import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { connectDb, type Db } from '../../src/db/connect.js';
import { startEmbeddedServer, type EmbeddedServer } from '../../src/db/embedded.js';
import { migrateLatest } from '../../src/db/migrate.js';

/** The bench's own PostgreSQL: the product's embedded server in a temporary directory, as the tests use it. */
export interface BenchDatabase {
  adminUrl: string;
  urlFor(database: string): string;
  /** Runs SQL on the maintenance database (CREATE/DROP DATABASE). */
  admin(sql: string): Promise<void>;
  /** A new database: a file copy of `template`, or a freshly migrated one. */
  create(name: string, template?: string): Promise<string>;
  drop(name: string): Promise<void>;
  /** A knex pool on `database`; destroy it before cloning that database. */
  connect(database: string, poolMax?: number): Db;
  stop(): Promise<void>;
}

export const MIGRATED = 'bench_migrated';

export async function startBenchDatabase(tmpDir: string): Promise<BenchDatabase> {
  const server: EmbeddedServer = await startEmbeddedServer({ dataDir: path.join(tmpDir, 'pg', 'data'), persistent: false });
  const urlFor = (database: string) => {
    const url = new URL(server.adminUrl);
    url.pathname = `/${database}`;
    return url.toString();
  };
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: server.adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  const database: BenchDatabase = {
    adminUrl: server.adminUrl,
    urlFor,
    admin,
    async create(name, template) {
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      // FILE_COPY copies the files instead of WAL-logging every page: seconds, not minutes, for a large template.
      await admin(template ? `CREATE DATABASE ${name} TEMPLATE ${template} STRATEGY FILE_COPY` : `CREATE DATABASE ${name}`);
      return urlFor(name);
    },
    async drop(name) {
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
    connect(name, poolMax = 4) {
      return connectDb({ url: urlFor(name), poolMax, applicationName: 'eventops-bench' });
    },
    async stop() {
      await server.stop();
      fs.rmSync(path.join(tmpDir, 'pg'), { recursive: true, force: true });
    },
  };
  await database.create(MIGRATED);
  const db = database.connect(MIGRATED, 1);
  try {
    await migrateLatest(db);
  } finally {
    await db.destroy();
  }
  return database;
}

/** Template hygiene: frozen, analysed and checkpointed, so every clone starts from the same physical state. */
export async function settle(db: Db, tables: string[]): Promise<void> {
  for (const table of tables) await db.raw(`VACUUM (FREEZE, ANALYZE) ${table}`);
  await db.raw('CHECKPOINT');
}
