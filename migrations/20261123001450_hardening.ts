import type { Knex } from 'knex';

/**
 * Hardening:
 * - rate_limits: hit counters per (bucket, client key) and window, shared by
 *   every server on the database (failed cron bearers, setup attempts,
 *   confirmation emails per recipient);
 * - route_view_days: page views as one counter per path and UTC day, replacing
 *   one route_views row per view (existing rows are folded into counters);
 * - website_sync_outbox gains an insertion sequence and the event's slug, so
 *   notifications are delivered in order per event.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('rate_limits', (t) => {
    t.text('bucket').notNullable();
    t.text('client_key').notNullable();
    t.integer('hits').notNullable();
    t.timestamp('window_ends_at', { useTz: true }).notNullable();
    t.primary(['bucket', 'client_key']);
    t.index(['window_ends_at']);
  });

  await knex.schema.createTable('route_view_days', (t) => {
    t.text('path').notNullable();
    t.date('day').notNullable();
    t.bigInteger('views').notNullable();
    t.primary(['path', 'day']);
    t.index(['day']);
  });
  await knex.raw(
    `INSERT INTO route_view_days (path, day, views)
     SELECT path, (created_at AT TIME ZONE 'UTC')::date, count(*) FROM route_views GROUP BY 1, 2`,
  );
  await knex.schema.dropTable('route_views');

  await knex.raw('ALTER TABLE website_sync_outbox ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY');
  await knex.raw(`ALTER TABLE website_sync_outbox ADD COLUMN event_slug text GENERATED ALWAYS AS (body->'event'->>'slug') STORED`);
  await knex.raw(`CREATE INDEX website_sync_pending_event_idx ON website_sync_outbox (event_slug, seq) WHERE status = 'PENDING'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS website_sync_pending_event_idx');
  await knex.raw('ALTER TABLE website_sync_outbox DROP COLUMN IF EXISTS event_slug, DROP COLUMN IF EXISTS seq');
  // Daily counters cannot be split back into single views: the old table comes back empty.
  await knex.schema.createTable('route_views', (t) => {
    t.bigIncrements('id');
    t.text('path').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['created_at']);
  });
  await knex.schema.dropTableIfExists('route_view_days');
  await knex.schema.dropTableIfExists('rate_limits');
}
