import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { showRegistration } from '../../src/office/registrations/show.js';
import { exportWithSensitiveAnswers } from '../../src/office/registrations/export.js';
import { planRotation, rotateKeys } from '../../src/crypto/rotate.js';
import { decryptSensitiveAnswers } from '../../src/registrations/answers.js';
import type { AppContext } from '../../src/context.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent } from '../support/factories.js';
import { CAMP_PRICING, CAMP_QUESTIONS, campAnswers, insertAnsweredRegistration, setEventQuestions } from '../support/answered-registration.js';
import { V1_ENV, V2_ENV } from './encrypted-fixture.js';

let tdb: TestDatabase;
let v1: AppContext;
let v2: AppContext;
beforeAll(async () => {
  tdb = await createTestDatabase();
  v1 = createTestContext({ db: tdb.db, env: V1_ENV });
  v2 = createTestContext({ db: tdb.db, env: V2_ENV });
});
afterAll(async () => {
  await tdb.drop();
});

describe('rotate-keys re-encrypts sensitive answers, which stay readable after', () => {
  it('a registration\'s allergies and dates of birth move to the new key and still show and export; a purged one stays empty', async () => {
    const event = await insertEvent(tdb.db, { pricing: CAMP_PRICING });
    await setEventQuestions(tdb.db, event.id, CAMP_QUESTIONS);
    const { attendees, answers } = campAnswers();
    const family = await insertAnsweredRegistration(tdb.db, v1.cipher, { eventId: event.id, questions: CAMP_QUESTIONS, attendees, answers });
    const purged = await insertAnsweredRegistration(tdb.db, v1.cipher, { eventId: event.id, questions: CAMP_QUESTIONS, attendees, answers });
    await tdb.db('registrations').where({ id: purged.id }).update({ sensitive_answers_enc: null, sensitive_purged_at: new Date() });
    const before = await tdb.db('registrations').where({ id: family.id }).first();
    expect(before.sensitive_answers_enc.startsWith('v1:')).toBe(true);

    const plan = await planRotation(v2);
    expect(plan.columns.find((c) => c.table === 'registrations' && c.column === 'sensitive_answers_enc')).toMatchObject({ pending: 1, byVersion: { v1: 1 } });
    await rotateKeys(v2);

    const after = await tdb.db('registrations').where({ id: family.id }).first();
    expect(after.sensitive_answers_enc.startsWith('v2:')).toBe(true);
    expect(after.answers).toEqual(before.answers);
    expect(decryptSensitiveAnswers(v2.cipher, after.sensitive_answers_enc)).toEqual({
      registration: { medical: 'Ruth: asthma, inhaler in bag' },
      attendees: [{ dateOfBirth: '1988-04-02' }, { allergies: 'peanuts (anaphylaxis), EpiPen', dateOfBirth: '2016-09-14' }],
    });
    expect((await tdb.db('registrations').where({ id: purged.id }).first()).sensitive_answers_enc).toBeNull();

    // The office reads them with the new keyring, in show and in the export.
    const shown = await showRegistration(v2, family.id, { sensitive: true });
    expect(shown.answers.attendees[1]?.answers).toContainEqual({ questionId: 'allergies', label: 'Allergies', sensitive: true, value: 'peanuts (anaphylaxis), EpiPen' });
    const exported = await exportWithSensitiveAnswers(v2, event.slug, { reason: 'after rotation', actor: 'office', to: 'standard output' });
    expect(exported.rows.map((row) => row.answers['q.dateOfBirth'])).toEqual(['1988-04-02', '2016-09-14', null, null]);
    expect((await planRotation(v2)).total).toBe(0);
  });
});
