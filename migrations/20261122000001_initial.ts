import type { Knex } from 'knex';

/**
 * The whole schema of the first release. Encrypted columns (`*_enc`) hold the
 * versioned AES-256-GCM form from src/crypto; `*_hash` columns hold the HMAC
 * lookup hashes derived from key v1. All times are timestamptz (UTC).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE EXTENSION IF NOT EXISTS pgcrypto');

  await knex.schema.createTable('users', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable();
    t.text('email_enc').notNullable();
    t.text('email_hash').notNullable().unique();
    t.text('role').notNullable();
    // Only the /setup path sets this; the unique index makes "first admin" a database fact.
    t.boolean('created_by_setup').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check(`role IN ('ADMIN','PASTOR','STAFF')`, [], 'users_role_check');
  });
  await knex.raw('CREATE UNIQUE INDEX users_single_setup_admin ON users (created_by_setup) WHERE created_by_setup');

  await knex.schema.createTable('people', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('first_name').notNullable();
    t.text('last_name').notNullable();
    t.text('email_enc');
    t.text('email_hash').unique();
    t.text('mobile_enc');
    t.text('mobile_hash');
    t.date('birth_date');
    t.date('wedding_date');
    t.uuid('spouse_id').references('people.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  // Month/day columns so "who celebrates today" is an index lookup, not a scan.
  await knex.raw(`
    ALTER TABLE people
      ADD COLUMN birth_month smallint GENERATED ALWAYS AS (extract(month FROM birth_date)::smallint) STORED,
      ADD COLUMN birth_day smallint GENERATED ALWAYS AS (extract(day FROM birth_date)::smallint) STORED,
      ADD COLUMN wedding_month smallint GENERATED ALWAYS AS (extract(month FROM wedding_date)::smallint) STORED,
      ADD COLUMN wedding_day smallint GENERATED ALWAYS AS (extract(day FROM wedding_date)::smallint) STORED
  `);
  await knex.raw('CREATE INDEX people_birthday_idx ON people (birth_month, birth_day) WHERE birth_date IS NOT NULL');
  await knex.raw('CREATE INDEX people_anniversary_idx ON people (wedding_month, wedding_day) WHERE wedding_date IS NOT NULL');
  await knex.raw('CREATE INDEX people_mobile_hash_idx ON people (mobile_hash)');

  await knex.schema.createTable('ministry_roles', (t) => {
    t.bigIncrements('id');
    t.uuid('person_id').notNullable().references('people.id').onDelete('CASCADE');
    t.text('role').notNullable();
    t.unique(['person_id', 'role']);
  });

  await knex.schema.createTable('clearances', (t) => {
    t.bigIncrements('id');
    t.uuid('person_id').notNullable().references('people.id').onDelete('CASCADE');
    t.text('kind').notNullable();
    t.text('number_enc');
    t.date('expires_on');
    t.boolean('verified').notNullable().defaultTo(false);
    t.unique(['person_id', 'kind']);
    t.index(['expires_on']);
  });

  await knex.schema.createTable('events', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('slug').notNullable().unique();
    t.text('title').notNullable();
    t.text('description');
    t.text('location');
    t.timestamp('starts_at', { useTz: true }).notNullable();
    t.integer('capacity');
    t.boolean('published').notNullable().defaultTo(false);
    t.timestamp('deleted_at', { useTz: true });
    t.boolean('online_payment').notNullable().defaultTo(false);
    t.boolean('pass_card_fee').notNullable().defaultTo(false);
    t.jsonb('pricing').notNullable().defaultTo(knex.raw(`'{"tiers":[]}'::jsonb`));
    t.timestamp('reminder_at', { useTz: true });
    t.timestamp('reminder_claimed_at', { useTz: true });
    t.timestamp('reminder_sent_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check('capacity IS NULL OR capacity >= 0', [], 'events_capacity_check');
  });
  await knex.raw(
    'CREATE INDEX events_reminder_due_idx ON events (reminder_at) WHERE reminder_sent_at IS NULL AND deleted_at IS NULL',
  );

  await knex.schema.createTable('registrations', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('event_id').notNullable().references('events.id');
    t.text('status').notNullable();
    t.text('contact_name').notNullable();
    t.text('contact_email_enc').notNullable();
    t.text('contact_email_hash').notNullable();
    t.text('contact_mobile_enc');
    t.jsonb('attendees').notNullable();
    t.integer('attendee_count').notNullable();
    t.boolean('family').notNullable().defaultTo(false);
    t.text('payment_method').notNullable();
    t.jsonb('line_items').notNullable();
    t.integer('total_minor').notNullable();
    t.integer('surcharge_minor').notNullable().defaultTo(0);
    t.text('payment_intent_id').unique();
    t.timestamp('paid_at', { useTz: true });
    t.timestamp('cancelled_at', { useTz: true });
    t.text('cancel_reason');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check(`status IN ('PENDING','PAID','CANCELLED')`, [], 'registrations_status_check');
    t.check(`payment_method IN ('free','bank','card')`, [], 'registrations_method_check');
    t.check('total_minor >= 0 AND attendee_count > 0', [], 'registrations_amounts_check');
    t.index(['event_id', 'status']);
  });

  await knex.schema.createTable('checkout_sessions', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('event_id').notNullable().references('events.id');
    t.text('status').notNullable().defaultTo('OPEN');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.text('payload_enc');
    t.uuid('registration_id').references('registrations.id');
    t.integer('net_minor').notNullable();
    t.integer('surcharge_minor').notNullable().defaultTo(0);
    t.text('provider_session_id').unique();
    t.text('provider_url');
    t.text('payment_intent_id');
    t.text('unfulfilled_reason');
    t.timestamp('completed_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check(`status IN ('OPEN','COMPLETED','EXPIRED','UNFULFILLED')`, [], 'checkout_sessions_status_check');
    t.check('payload_enc IS NULL OR registration_id IS NULL', [], 'checkout_sessions_payload_or_registration');
  });
  await knex.raw(`CREATE INDEX checkout_sessions_open_expiry_idx ON checkout_sessions (expires_at) WHERE status = 'OPEN'`);
  await knex.raw(
    `CREATE INDEX checkout_sessions_open_registration_idx ON checkout_sessions (registration_id) WHERE status = 'OPEN'`,
  );
  await knex.raw('CREATE INDEX checkout_sessions_payment_intent_idx ON checkout_sessions (payment_intent_id)');

  await knex.schema.createTable('app_settings', (t) => {
    t.text('key').primary();
    t.jsonb('value').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('error_logs', (t) => {
    t.bigIncrements('id');
    t.text('fingerprint').notNullable();
    t.text('error_class').notNullable();
    t.text('message').notNullable();
    t.text('stack');
    t.text('source').notNullable();
    t.jsonb('context');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['created_at']);
    t.index(['fingerprint', 'created_at']);
  });

  await knex.schema.createTable('route_views', (t) => {
    t.bigIncrements('id');
    t.text('path').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['created_at']);
  });

  await knex.schema.createTable('leases', (t) => {
    t.text('name').primary();
    t.text('holder').notNullable();
    t.timestamp('acquired_at', { useTz: true }).notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
  });

  await knex.schema.createTable('job_runs', (t) => {
    t.bigIncrements('id');
    t.text('job').notNullable();
    t.text('trigger').notNullable();
    t.timestamp('started_at', { useTz: true }).notNullable();
    t.timestamp('finished_at', { useTz: true });
    t.text('outcome');
    t.jsonb('summary');
    t.text('error');
    t.check(`trigger IN ('cli','http','scheduler')`, [], 'job_runs_trigger_check');
    t.check(`outcome IS NULL OR outcome IN ('ok','partial','failed','skipped')`, [], 'job_runs_outcome_check');
    t.index(['job', 'started_at']);
  });

  await knex.schema.createTable('processed_webhook_events', (t) => {
    t.text('event_id').primary();
    t.text('type').notNullable();
    t.timestamp('processed_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('operations_alerts', (t) => {
    t.bigIncrements('id');
    t.text('kind').notNullable();
    t.text('reason').notNullable();
    t.jsonb('details').notNullable().defaultTo('{}');
    t.text('checkout_session_id');
    t.text('provider_session_id');
    t.text('payment_intent_id');
    t.integer('amount_minor');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('resolved_at', { useTz: true });
    t.text('resolution');
    t.index(['resolved_at']);
  });

  await knex.schema.createTable('pending_reversals', (t) => {
    t.text('payment_intent_id').primary();
    t.text('kind').notNullable();
    t.text('provider_event_id').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('queued_mail', (t) => {
    t.bigIncrements('id');
    t.text('kind').notNullable();
    // The whole rendered message (recipients included) is encrypted at rest.
    t.text('message_enc').notNullable();
    t.text('status').notNullable().defaultTo('PENDING');
    t.integer('attempts').notNullable().defaultTo(0);
    t.timestamp('next_attempt_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('claimed_until', { useTz: true });
    t.text('last_error');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('sent_at', { useTz: true });
    t.check(`status IN ('PENDING','SENT','FAILED')`, [], 'queued_mail_status_check');
  });
  await knex.raw(`CREATE INDEX queued_mail_pending_idx ON queued_mail (next_attempt_at) WHERE status = 'PENDING'`);

  await knex.schema.createTable('website_sync_outbox', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('type').notNullable();
    t.jsonb('body').notNullable();
    t.text('status').notNullable().defaultTo('PENDING');
    t.integer('attempts').notNullable().defaultTo(0);
    t.timestamp('next_attempt_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('claimed_until', { useTz: true });
    t.text('last_error');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('delivered_at', { useTz: true });
    t.check(`status IN ('PENDING','DELIVERED')`, [], 'website_sync_status_check');
  });
  await knex.raw(
    `CREATE INDEX website_sync_pending_idx ON website_sync_outbox (next_attempt_at, created_at) WHERE status = 'PENDING'`,
  );

  await knex.schema.createTable('celebration_claims', (t) => {
    t.uuid('person_id').notNullable().references('people.id').onDelete('CASCADE');
    t.text('kind').notNullable();
    t.integer('year').notNullable();
    t.timestamp('claimed_at', { useTz: true }).notNullable();
    t.timestamp('sent_at', { useTz: true });
    t.primary(['person_id', 'kind', 'year']);
    t.check(`kind IN ('birthday','anniversary')`, [], 'celebration_claims_kind_check');
  });

  await knex.schema.createTable('scheduler_periods', (t) => {
    t.text('period_key').primary();
    t.text('job').notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.timestamp('last_attempt_at', { useTz: true });
    t.timestamp('claimed_until', { useTz: true });
    t.timestamp('done_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'scheduler_periods',
    'celebration_claims',
    'website_sync_outbox',
    'queued_mail',
    'pending_reversals',
    'operations_alerts',
    'processed_webhook_events',
    'job_runs',
    'leases',
    'route_views',
    'error_logs',
    'app_settings',
    'checkout_sessions',
    'registrations',
    'events',
    'clearances',
    'ministry_roles',
    'people',
    'users',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
