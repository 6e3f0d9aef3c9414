/**
 * For the knex command-line tool (compiled to dist/knexfile.js):
 *   npx knex --knexfile dist/knexfile.js migrate:status
 * Operators normally use `eventops migrate` instead, which also starts the
 * embedded database in development. Uses DIRECT_URL, else DATABASE_URL.
 */
import type { Knex } from 'knex';
import { loadConfig, loadEnvFile } from './src/config/index.js';
import { migrationConfig } from './src/db/migration-source.js';
import { pgConnectionTarget } from './src/db/ssl.js';

// The knex CLI changes into the knexfile's folder (dist/) before loading it; npx and npm keep where the
// command was typed in INIT_CWD, which is where the operator's .env is.
const cwd = process.env.INIT_CWD ?? process.cwd();
loadEnvFile(cwd);
const { config } = loadConfig(process.env, { cwd });
const url = config.directUrl ?? config.databaseUrl;
if (!url) throw new Error('knexfile: set DATABASE_URL (or DIRECT_URL); the embedded database is only started by `eventops`');

const knexConfig: Knex.Config = {
  client: 'pg',
  connection: pgConnectionTarget(url),
  migrations: migrationConfig,
};

export default knexConfig;
