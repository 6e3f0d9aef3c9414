import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { FORGET_AFTER_DAYS } from '../../src/jobs/forget-contacts.js';
import { purgeSensitiveAnswers } from '../../src/jobs/purge-answers.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { FIXED_TEST_NOW } from '../support/test-now.js';

/**
 * The weekly purge deletes contact details kept for a purpose that has passed: a waiting-list join that
 * lapsed unconfirmed (an address nobody proved wanted anything) and a contact-email change that closed.
 * Without it both stay in the database, encrypted but readable with the keys, for as long as it exists.
 */

const DAY = 86_400_000;
const now = FIXED_TEST_NOW;
const daysAgo = (days: number) => new Date(now.getTime() - days * DAY);
const LONG_AGO = FORGET_AFTER_DAYS + 1;
const RECENTLY = FORGET_AFTER_DAYS - 1;

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const ctx = () => createTestContext({ db: tdb.db, clock: new FixedClock(now) });
const purge = (dryRun = false) => purgeSensitiveAnswers(ctx(), { trigger: 'cli', dryRun });

async function joinEntry(eventId: string, state: string, updatedAt: Date): Promise<string> {
  const cipher = ctx().cipher;
  const [row] = await tdb
    .db('waitlist_entries')
    .insert({
      event_id: eventId,
      name_enc: cipher.encrypt('Stranger Name'),
      email_enc: cipher.encrypt('stranger@example.org'),
      email_hash: `hash-${Math.random()}`,
      places: 2,
      state,
      confirmed_at: state === 'LAPSED' ? null : updatedAt,
      created_at: new Date(updatedAt.getTime() - DAY),
      updated_at: updatedAt,
    })
    .returning<Array<{ id: string }>>('id');
  const id = (row as { id: string }).id;
  await tdb.db('waitlist_history').insert({ entry_id: id, action: 'joined', changes: '{}', actor: 'public', created_at: updatedAt });
  return id;
}

async function emailChange(registrationId: string, fields: Record<string, Date | null>): Promise<string> {
  const cipher = ctx().cipher;
  const requestedAt = fields.requested_at ?? daysAgo(LONG_AGO + 10);
  const [row] = await tdb
    .db('contact_email_changes')
    .insert({
      registration_id: registrationId,
      old_email_enc: cipher.encrypt('old@example.org'),
      new_email_enc: cipher.encrypt('new@example.org'),
      requested_at: requestedAt,
      confirm_by: new Date(requestedAt.getTime() + 2 * DAY),
      ...fields,
    })
    .returning<Array<{ id: string }>>('id');
  return (row as { id: string }).id;
}

describe('purge-answers deletes contact details no longer needed, 30 days after their purpose passed', () => {
  it('a join that lapsed unconfirmed over 30 days ago is deleted with its history; a recent lapse, a waiting entry and an old LEFT entry stay', async () => {
    const event = await insertEvent(tdb.db, { waitlist_enabled: true });
    const oldLapse = await joinEntry(event.id, 'LAPSED', daysAgo(LONG_AGO));
    const recentLapse = await joinEntry(event.id, 'LAPSED', daysAgo(RECENTLY));
    const waiting = await joinEntry(event.id, 'WAITING', daysAgo(LONG_AGO));

    const dry = await purge(true);
    expect(dry.lapsedJoinsForgotten).toBe(1);
    expect(await tdb.db('waitlist_entries').where({ id: oldLapse }).first()).toBeDefined();

    const run = await purge();
    expect(run.lapsedJoinsForgotten).toBe(1);
    expect(await tdb.db('waitlist_entries').where({ id: oldLapse }).first()).toBeUndefined();
    expect(await tdb.db('waitlist_history').where({ entry_id: oldLapse })).toEqual([]);
    expect((await tdb.db('waitlist_entries').whereIn('id', [recentLapse, waiting]).pluck('id')).sort()).toEqual([recentLapse, waiting].sort());
    expect((await purge()).lapsedJoinsForgotten).toBe(0);
  });

  it('closed email changes (undone, replaced, never confirmed, past their undo window) go 30 days after closing; open ones and recently closed ones stay', async () => {
    const event = await insertEvent(tdb.db);
    const registration = await insertRegistration(tdb.db, ctx().cipher, event.id);
    const undone = await emailChange(registration.id, { confirmed_at: daysAgo(LONG_AGO + 5), undo_until: daysAgo(LONG_AGO - 2), undone_at: daysAgo(LONG_AGO) });
    const replaced = await emailChange(registration.id, { replaced_at: daysAgo(LONG_AGO) });
    const neverConfirmed = await emailChange(registration.id, { requested_at: daysAgo(LONG_AGO + 2) });
    const undoWindowOver = await emailChange(registration.id, { confirmed_at: daysAgo(LONG_AGO + 7), undo_until: daysAgo(LONG_AGO) });
    const stillUndoable = await emailChange(registration.id, { requested_at: daysAgo(3), confirmed_at: daysAgo(2), undo_until: new Date(now.getTime() + 5 * DAY) });
    const recentlyUndone = await emailChange(registration.id, { confirmed_at: daysAgo(10), undo_until: new Date(now.getTime() + DAY), undone_at: daysAgo(RECENTLY) });
    const pending = await emailChange(registration.id, { requested_at: daysAgo(1) });

    const run = await purge();
    expect(run.emailChangesForgotten).toBe(4);
    const left = await tdb.db('contact_email_changes').where({ registration_id: registration.id }).pluck('id');
    expect(left.sort()).toEqual([stillUndoable, recentlyUndone, pending].sort());
    for (const gone of [undone, replaced, neverConfirmed, undoWindowOver]) expect(left).not.toContain(gone);
  });
});
