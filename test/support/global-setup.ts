import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedServer, type EmbeddedServer } from '../../src/db/embedded.js';
import { connectDb } from '../../src/db/connect.js';
import { migrateLatest } from '../../src/db/migrate.js';
import { resolveChromium } from './chromium.js';

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    templateDatabase: string;
  }
}

const TEMPLATE = 'eventops_template';

/**
 * One PostgreSQL per test run: the embedded server in a temporary directory, or
 * TEST_DATABASE_URL. A migrated template database makes each test file's own
 * database a fast clone.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // CLI tests run the installed command (the bundle `npm run build` makes): build it once, before any file starts.
  // tsc still emits on type errors; `npm test` type-checks separately, so a type error fails there, not here.
  try {
    execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'pipe' });
  } catch {
    process.stderr.write('warning: the build reported type errors; CLI tests run what was emitted\n');
  }
  execFileSync(process.execPath, ['scripts/bundle-cli.mjs'], { stdio: 'pipe' });
  // The event page's script, served from dist/assets by the server the browser tests start.
  execFileSync(process.execPath, ['scripts/bundle-browser.mjs'], { stdio: 'pipe' });
  // Unpack a packaged Chromium once, here, rather than in parallel browser test files.
  process.env.CHROMIUM_PATH = (await resolveChromium()).path;
  let server: EmbeddedServer | undefined;
  let tmp: string | undefined;
  let adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-test-pg-'));
    server = await startEmbeddedServer({ dataDir: path.join(tmp, 'data'), persistent: false });
    adminUrl = server.adminUrl;
  }
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${TEMPLATE}`);
  await admin.end();

  const templateUrl = new URL(adminUrl);
  templateUrl.pathname = `/${TEMPLATE}`;
  const db = connectDb({ url: templateUrl.toString(), poolMax: 1 });
  await migrateLatest(db);
  await db.destroy();

  project.provide('adminDatabaseUrl', adminUrl);
  project.provide('templateDatabase', TEMPLATE);
  return async () => {
    await server?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  };
}
