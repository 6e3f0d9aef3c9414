import fs from 'node:fs';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { pgConnectionTarget } from './ssl.js';

// DATE columns stay 'YYYY-MM-DD' strings: a calendar date has no time zone.
pg.types.setTypeParser(pg.types.builtins.DATE, (value: string) => value);
// int8 (bigserial ids, count(*)) as numbers: our counts and ids stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));

export type Db = Knex;

export interface DbOptions {
  url: string;
  poolMax?: number;
  /** When set, every query appends one JSON line {sql, bindings, durationMs} here. */
  queryLogFile?: string;
  applicationName?: string;
}

export function connectDb(options: DbOptions): Db {
  const db = knexFactory({
    client: 'pg',
    connection: {
      ...pgConnectionTarget(options.url),
      application_name: options.applicationName ?? 'eventops',
      statement_timeout: 120_000,
      connectionTimeoutMillis: 10_000,
    },
    pool: { min: 0, max: options.poolMax ?? 5, idleTimeoutMillis: 10_000 },
    acquireConnectionTimeout: 15_000,
    // Failures reach callers as errors; knex's own console lines would only duplicate them.
    log: { warn: () => undefined, error: () => undefined, deprecate: () => undefined, debug: () => undefined },
  });
  if (options.queryLogFile) attachQueryLog(db, options.queryLogFile);
  return db;
}

function attachQueryLog(db: Db, file: string): void {
  const started = new Map<string, bigint>();
  db.on('query', (query: { __knexQueryUid: string }) => {
    started.set(query.__knexQueryUid, process.hrtime.bigint());
  });
  const finish = (query: { __knexQueryUid: string; sql: string; bindings?: unknown[] }) => {
    const start = started.get(query.__knexQueryUid);
    started.delete(query.__knexQueryUid);
    const durationMs = start === undefined ? null : Number(process.hrtime.bigint() - start) / 1e6;
    fs.appendFileSync(
      file,
      JSON.stringify({ sql: query.sql, bindings: query.bindings?.length ?? 0, durationMs }) + '\n',
    );
  };
  db.on('query-response', (_response: unknown, query: { __knexQueryUid: string; sql: string; bindings?: unknown[] }) =>
    finish(query),
  );
  db.on('query-error', (_error: unknown, query: { __knexQueryUid: string; sql: string; bindings?: unknown[] }) =>
    finish(query),
  );
}
