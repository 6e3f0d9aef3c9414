import { describe, expect, it } from 'vitest';
import { managePath } from '../../src/payments/manage-link.js';
import { answerColumns, decryptSensitiveAnswers, type Question, type RegistrationAnswers } from '../../src/registrations/answers.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { useServerWithSink } from '../support/server-fixture.js';

const T0 = new Date('2026-11-22T00:00:00Z');
const STARTS = new Date('2026-12-05T08:00:00Z');
const web = useServerWithSink({ now: T0, truncate: 'registrations, events, users, queued_mail, operations_alerts, rate_limits, app_settings' });
const { clock, mail, context } = web;

const QUESTIONS: Question[] = [
  { id: 'diet', label: 'Dietary needs', type: 'text', appliesTo: 'attendee' },
  { id: 'allergy', label: 'Any allergy?', type: 'yesno', appliesTo: 'attendee', required: true },
  { id: 'allergyDetails', label: 'Allergy details', type: 'longtext', appliesTo: 'attendee', showIf: { question: 'allergy', equals: 'yes' }, sensitive: true },
  { id: 'photos', label: 'We agree that photos of our family may appear in church publications.', type: 'consent', appliesTo: 'registration' },
];
const PRICING = {
  tiers: [
    { id: 'adult', label: 'Adult', price: 12000 },
    { id: 'child', label: 'Child', price: 6000, minAge: 5, maxAge: 12 },
  ],
};
const CONSENT = { agreed: true as const, statement: QUESTIONS[3]?.label as string, at: '2026-11-01T10:00:00.000Z', by: 'Jo Citizen' };
const ANSWERS: RegistrationAnswers = {
  registration: { photos: CONSENT },
  attendees: [
    { diet: 'Vegetarian', allergy: true, allergyDetails: 'Peanuts' },
    { allergy: false, dateOfBirth: '2018-03-14' },
  ],
};

/** Handlebars writes "=" in attribute values as &#x3D;, which browsers read as "=". */
const unescapeEquals = (html: string) => html.replaceAll('&#x3D;', '=');

async function get(path: string) {
  const response = await fetch(`${web.server.url}${path}`, { redirect: 'manual', headers: { accept: 'text/html' } });
  return { status: response.status, headers: response.headers, html: unescapeEquals(await response.text()) };
}

type Fields = Record<string, string | string[]>;
async function post(path: string, fields: Fields) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) for (const v of [value].flat()) params.append(key, v);
  const response = await fetch(`${web.server.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: params.toString(),
  });
  return { status: response.status, headers: response.headers, html: unescapeEquals(await response.text()) };
}

async function answeredRegistration(eventOverrides: Record<string, unknown> = {}) {
  const ctx = context();
  const event = await insertEvent(web.tdb.db, { starts_at: STARTS, pricing: JSON.stringify(PRICING), questions: JSON.stringify(QUESTIONS), ...eventOverrides });
  const { id } = await insertRegistration(web.tdb.db, ctx.cipher, event.id, {
    email: 'jo@example.org',
    contact_name: 'Jo Citizen',
    status: 'PENDING',
    attendees: JSON.stringify([
      { name: 'Jo Citizen', tier: 'adult' },
      { name: 'Kim Citizen', tier: 'child' },
    ]),
    attendee_count: 2,
    line_items: JSON.stringify([
      { label: 'Adult — Jo Citizen', amount: 12000, kind: 'ticket' },
      { label: 'Child — Kim Citizen', amount: 6000, kind: 'ticket' },
    ]),
    total_minor: 18000,
    ...answerColumns(ctx.cipher, QUESTIONS, ANSWERS),
  });
  return { id, path: managePath(ctx.config.authSecret, { registrationId: id, version: 1 }) };
}

const stored = async (id: string) => {
  const row = await web.tdb.db('registrations').where({ id }).first();
  return { plain: row.answers as RegistrationAnswers, sensitive: decryptSensitiveAnswers(context().cipher, row.sensitive_answers_enc), enc: row.sensitive_answers_enc as string };
};
const historyOf = (id: string) => web.tdb.db('registration_history').where({ registration_id: id }).orderBy('id').select('action', 'actor', 'changes');

/** The form as the manage page gives it, with `changes` over the stored answers. */
const corrected = (changes: Fields = {}): Fields => ({
  'q.photos': 'yes',
  'q.0.diet': 'Vegetarian',
  'q.0.allergy': 'yes',
  'q.0.allergyDetails': 'Peanuts',
  'q.1.allergy': 'no',
  'q.1.dateOfBirth': '2018-03-14',
  ...changes,
});

describe('the family sees its answers on the manage page, sensitive ones too, and never in an email', () => {
  it('shows each answer under its attendee, the date of birth and the consent record, and the form filled with them', async () => {
    const { path } = await answeredRegistration();
    const page = await get(path);
    expect(page.status).toBe(200);
    expect(page.html).toContain('<h2 id="answers-heading">Your answers</h2>');
    expect(page.html).toContain('<dt>Allergy details</dt><dd>Peanuts</dd>');
    expect(page.html).toContain('<dt>Date of birth</dt><dd>14 March 2018</dd>');
    expect(page.html).toMatch(/<dt>We agree that photos[^<]*<\/dt><dd>Given by Jo Citizen, [^<]*1 November 2026/);
    // The correction form, filled: the sensitive answer in its textarea, the yes ticked, the child's date of birth.
    expect(page.html).toContain(`<form method="post" action="${path}/answers" id="answers">`);
    expect(page.html).toMatch(/<textarea id="q-1-allergyDetails" name="q.0.allergyDetails"[^>]*>Peanuts<\/textarea>/);
    expect(page.html).toMatch(/<input id="q-1-allergy" name="q.0.allergy" type="radio" value="yes" checked>/);
    expect(page.html).toMatch(/<input id="q-2-dateOfBirth" name="q.1.dateOfBirth" type="date" value="2018-03-14"/);
    // The adult's row asks no date of birth: only the age-limited tier does.
    expect(page.html).not.toContain('name="q.0.dateOfBirth"');
    expect(mail.sink.messages).toEqual([]);
  });
});

describe('the family corrects its answers until changes close', () => {
  it('stores a corrected sensitive answer encrypted and a plain one in answers, and records which questions changed, never the values', async () => {
    const { id, path } = await answeredRegistration();
    const before = await stored(id);
    const saved = await post(`${path}/answers`, corrected({ 'q.0.allergyDetails': 'Peanuts and cashews', 'q.1.diet': 'No pork' }));
    expect(saved.status).toBe(303);
    expect(saved.headers.get('location')).toBe(`${path}?done=answers`);

    const after = await stored(id);
    expect(after.plain).toEqual({ registration: { photos: CONSENT }, attendees: [{ diet: 'Vegetarian', allergy: true }, { allergy: false, diet: 'No pork' }] });
    expect(after.sensitive).toEqual({ registration: {}, attendees: [{ allergyDetails: 'Peanuts and cashews' }, { dateOfBirth: '2018-03-14' }] });
    expect(after.enc).not.toBe(before.enc);
    expect(after.enc).not.toContain('cashews');

    const history = await historyOf(id);
    expect(history).toEqual([
      { action: 'answers_updated', actor: 'registrant', changes: { questions: ['attendees[0].allergyDetails', 'attendees[1].diet'], client: expect.any(String) } },
    ]);
    expect(JSON.stringify(history)).not.toContain('cashews');
    expect((await get(`${path}?done=answers`)).html).toContain('Your answers are saved.');
    const queued = await web.tdb.db('queued_mail').count<Array<{ count: string }>>('* as count');
    expect(Number(queued[0]?.count)).toBe(0);
  });

  it('keeps the first consent record while it is still given, and drops an answer whose showIf is no longer met', async () => {
    const { id, path } = await answeredRegistration();
    const saved = await post(`${path}/answers`, corrected({ 'q.0.allergy': 'no' }));
    expect(saved.status).toBe(303);
    const after = await stored(id);
    expect(after.plain.registration).toEqual({ photos: CONSENT });
    expect(after.plain.attendees[0]).toEqual({ diet: 'Vegetarian', allergy: false });
    expect(after.sensitive.attendees[0] ?? {}).toEqual({});
    expect((await historyOf(id))[0]?.changes).toMatchObject({ questions: ['attendees[0].allergy', 'attendees[0].allergyDetails'] });
  });

  it('says nothing changed when the answers were already so, and records nothing', async () => {
    const { id, path } = await answeredRegistration();
    const same = await post(`${path}/answers`, corrected());
    expect(same.headers.get('location')).toBe(`${path}?done=answers-unchanged`);
    expect(await historyOf(id)).toEqual([]);
  });

  it('refuses a date of birth outside the ticket\'s age limit and a required answer left out, with the message on the page and nothing changed', async () => {
    const { id, path } = await answeredRegistration();
    const before = await stored(id);
    const tooOld = await post(`${path}/answers`, corrected({ 'q.1.dateOfBirth': '2010-01-01' }));
    expect(tooOld.status).toBe(400);
    expect(tooOld.html).toContain('Please check your answers below; nothing was changed.');
    expect(tooOld.html).toMatch(/<ul class="error" id="answer-errors" role="alert"><li>[^<]+<\/li>/);
    // What was typed is given back, tied to its message.
    expect(tooOld.html).toMatch(/<input id="q-2-dateOfBirth" name="q.1.dateOfBirth" type="date" value="2010-01-01"[^>]*aria-describedby="q-2-dateOfBirth-help q-2-dateOfBirth-error" aria-invalid="true">/);
    expect(tooOld.html).toContain('Date of birth: Child tickets are for ages 5 to 12 on the first day of the event, and Kim Citizen will be 16');
    expect(tooOld.html).toMatch(/<p class="error field-error" id="q-2-dateOfBirth-error">[^<]+<\/p>/);

    const missing = await post(`${path}/answers`, corrected({ 'q.1.allergy': [] }));
    expect(missing.status).toBe(400);
    expect(missing.html).toMatch(/<p class="error field-error" id="q-2-allergy-error">[^<]+<\/p>/);
    const after = await stored(id);
    expect(after.plain).toEqual(before.plain);
    expect(after.sensitive).toEqual(before.sensitive);
    expect(await historyOf(id)).toEqual([]);
  });

  it('refuses a correction once changes have closed, still showing the answers but no form', async () => {
    const { id, path } = await answeredRegistration({ changes_close_at: new Date(T0.getTime() + 60_000) });
    clock.set(new Date(T0.getTime() + 120_000));
    const page = await get(path);
    expect(page.html).toContain('<dt>Allergy details</dt><dd>Peanuts</dd>');
    expect(page.html).not.toContain('id="answers"');
    const before = await stored(id);
    const refused = await post(`${path}/answers`, corrected({ 'q.0.diet': 'Vegan' }));
    expect(refused.status).toBe(409);
    expect(refused.html).toContain('Changes on this page have closed for this event. Please contact the church office.');
    expect((await stored(id)).plain).toEqual(before.plain);
    expect(await historyOf(id)).toEqual([]);
  });
});
