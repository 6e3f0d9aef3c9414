import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deliverQueuedMail } from '../../src/mail/queue.js';
import { resendableFields } from '../../src/http/registration-form.js';
import { decryptSensitiveAnswers, type Question } from '../../src/registrations/answers.js';
import { insertEvent } from '../support/factories.js';
import { useSinkAndMailer } from '../support/mail-fixture.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';

const T0 = new Date('2026-11-22T00:00:00Z');
// 9 am on 6 December 2026 in Sydney (the test zone): 5 December in UTC.
const STARTS = new Date('2026-12-05T22:00:00Z');

const mail = useSinkAndMailer();
let harness: PaymentsHarness;

beforeAll(async () => {
  harness = await startPaymentsHarness({ now: T0, env: mail.sink.configEnv() });
  harness.ctx.mailer = async () => mail.mailer;
});
afterAll(() => harness.close());
beforeEach(async () => {
  harness.ctx.clock.set(T0);
  await harness.tdb.db.raw('TRUNCATE registrations, events, queued_mail, rate_limits, checkout_sessions CASCADE');
});

const QUESTIONS: Question[] = [
  { id: 'diet', label: 'Dietary needs', type: 'text', appliesTo: 'attendee' },
  { id: 'allergy', label: 'Any allergy?', type: 'yesno', appliesTo: 'attendee', required: true },
  { id: 'allergyDetails', label: 'Allergy details', type: 'longtext', appliesTo: 'attendee', showIf: { question: 'allergy', equals: 'yes' }, sensitive: true, required: true },
  { id: 'shirt', label: 'Shirt size', type: 'choice', appliesTo: 'attendee', tiers: ['child'], options: ['S', 'M'] },
  { id: 'photos', label: 'We agree that photos may appear in church publications.', type: 'consent', appliesTo: 'registration' },
];
const PRICING = {
  tiers: [
    { id: 'adult', label: 'Adult', price: 0 },
    { id: 'child', label: 'Child', price: 0, minAge: 5, maxAge: 12 },
  ],
};
const PRICED = { tiers: [{ id: 'adult', label: 'Adult', price: 12000 }, { ...PRICING.tiers[1], price: 6000 }] };

const questionEvent = (overrides: Record<string, unknown> = {}) =>
  insertEvent(harness.tdb.db, { starts_at: STARTS, pricing: JSON.stringify(PRICING), questions: JSON.stringify(QUESTIONS), ...overrides });

type Fields = Record<string, string | string[]>;
function postForm(slug: string, fields: Fields) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) for (const v of [value].flat()) params.append(key, v);
  return fetch(`${harness.server.url}/events/${slug}/register`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    body: params.toString(),
  });
}
function postJson(slug: string, body: unknown) {
  return fetch(`${harness.server.url}/events/${slug}/register`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  });
}

/** Jo (adult) in row 1, an empty row 2, Kim (child, 8 on the first day) in row 3: Kim's answers are q.2.*. */
const familyForm = (overrides: Fields = {}): Fields => ({
  name: 'Jo Citizen',
  email: 'jo@example.org',
  mobile: '',
  attendee_name: ['Jo Citizen', '', 'Kim Citizen'],
  attendee_tier: ['adult', 'adult', 'child'],
  'q.0.diet': 'Vegetarian',
  'q.0.allergy': 'yes',
  'q.0.allergyDetails': 'Peanuts and sesame',
  'q.2.allergy': 'no',
  'q.2.allergyDetails': 'dropped: the allergy is no',
  'q.2.shirt': 'M',
  'q.2.dateOfBirth': '2018-06-01',
  'q.photos': 'yes',
  ...overrides,
});

const rowsOf = (eventId: string) => harness.tdb.db('registrations').where({ event_id: eventId }).orderBy('created_at').select();

describe('the public form stores plain answers in registrations.answers and sensitive ones only encrypted', () => {
  it('a form post: each attendee from its own row, the showIf-dropped answer gone, the consent recorded, Peanuts and the date of birth nowhere in plain text', async () => {
    const event = await questionEvent();
    const response = await postForm(event.slug, familyForm());
    expect(response.status).toBe(303);

    const [row] = await rowsOf(event.id);
    expect(row.answers).toEqual({
      registration: { photos: { agreed: true, statement: QUESTIONS[4]?.label, at: T0.toISOString(), by: 'Jo Citizen' } },
      attendees: [{ diet: 'Vegetarian', allergy: true }, { allergy: false, shirt: 'M' }],
    });
    const plainRow = JSON.stringify(row);
    expect(plainRow).not.toContain('Peanuts');
    expect(plainRow).not.toContain('2018-06-01');
    expect(plainRow).not.toContain('dropped');
    expect(decryptSensitiveAnswers(harness.ctx.cipher, row.sensitive_answers_enc)).toEqual({
      registration: {},
      attendees: [{ allergyDetails: 'Peanuts and sesame' }, { dateOfBirth: '2018-06-01' }],
    });
  });

  it('a JSON post: top-level answers and attendees[i].answers, yes/no as true/false, a child\'s consent naming the guardian', async () => {
    const event = await questionEvent({ questions: JSON.stringify([...QUESTIONS, { id: 'swim', label: 'May swim', type: 'consent', appliesTo: 'attendee' }]) });
    const response = await postJson(event.slug, {
      name: 'Jo Citizen',
      email: 'jo@example.org',
      answers: { photos: true },
      attendees: [
        { name: 'Jo Citizen', tier: 'adult', answers: { allergy: false } },
        { name: 'Kim Citizen', tier: 'child', answers: { allergy: true, allergyDetails: 'Bees', dateOfBirth: '2018-06-01', swim: true } },
      ],
    });
    expect(response.status).toBe(303);
    const [row] = await rowsOf(event.id);
    expect(row.answers.attendees).toEqual([
      { allergy: false },
      { allergy: true, swim: { agreed: true, statement: 'May swim', at: T0.toISOString(), by: 'Jo Citizen', asGuardianOf: 'Kim Citizen' } },
    ]);
    expect(JSON.stringify(row)).not.toContain('Bees');
    expect(decryptSensitiveAnswers(harness.ctx.cipher, row.sensitive_answers_enc).attendees).toEqual([{}, { allergyDetails: 'Bees', dateOfBirth: '2018-06-01' }]);
  });
});

describe('a missing required answer or a date of birth outside the age limit refuses the post with its message', () => {
  it('the form comes back with each message beside its field, and nothing is registered', async () => {
    const event = await questionEvent();
    const response = await postForm(event.slug, familyForm({ 'q.0.allergyDetails': '', 'q.2.dateOfBirth': '2012-01-01' }));
    expect(response.status).toBe(400);
    const html = (await response.text()).replaceAll('&#x3D;', '=');
    expect(html).toContain('Allergy details: please answer this question');
    expect(html).toContain('Date of birth: Child tickets are for ages 5 to 12 on the first day of the event, and Kim Citizen will be 14');
    expect(html).toMatch(/id="q-3-dateOfBirth-error"/);
    expect(await rowsOf(event.id)).toEqual([]);
  });

  it('a JSON post is answered 400 with the problems by field', async () => {
    const event = await questionEvent();
    const response = await postJson(event.slug, {
      name: 'Jo Citizen',
      email: 'jo@example.org',
      attendees: [{ name: 'Kim Citizen', tier: 'child', answers: { allergy: false, dateOfBirth: '2023-01-01' } }],
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { fields: Array<{ field: string; message: string }> } } & Record<string, unknown>;
    expect(JSON.stringify(body)).toContain('q.0.dateOfBirth');
    expect(JSON.stringify(body)).toContain('Kim Citizen will be 3');
    expect(await rowsOf(event.id)).toEqual([]);
  });
});

describe('a card registration stages its answers and the confirmed payment stores them', () => {
  it('no registration until the webhook; then the answers plain and encrypted as for the other payments', async () => {
    const event = await questionEvent({ pricing: JSON.stringify(PRICED), online_payment: true });
    const response = await postForm(event.slug, familyForm({ payment: 'card' }));
    expect(response.status).toBe(303);
    expect(await rowsOf(event.id)).toEqual([]);
    const staged = await harness.tdb.db('checkout_sessions').where({ event_id: event.id }).first();
    expect(staged.payload_enc).not.toContain('Peanuts');

    const delivered = await harness.provider.deliver('checkout.session.completed', staged.provider_session_id);
    expect(delivered.status).toBe(200);
    const [row] = await rowsOf(event.id);
    expect(row).toMatchObject({ status: 'PAID', payment_method: 'card' });
    expect(row.answers.attendees).toEqual([{ diet: 'Vegetarian', allergy: true }, { allergy: false, shirt: 'M' }]);
    expect(JSON.stringify(row)).not.toContain('Peanuts');
    expect(decryptSensitiveAnswers(harness.ctx.cipher, row.sensitive_answers_enc).attendees).toEqual([
      { allergyDetails: 'Peanuts and sesame' },
      { dateOfBirth: '2018-06-01' },
    ]);

    // The receipt is a card payer's confirmation: it lists the same plain answers, never a sensitive one.
    await deliverQueuedMail(harness.ctx, { limit: 10 });
    const receipt = mail.sink.messages.find((message) => message.subject?.startsWith('Receipt'));
    expect(receipt?.text).toMatch(/Jo Citizen\n- Dietary needs: Vegetarian\n- Any allergy\?: Yes/);
    expect(receipt?.html).toContain('Shirt size: M');
    for (const part of [receipt?.text, receipt?.html]) {
      expect(part).not.toContain('Peanuts');
      expect(part).not.toMatch(/2018|June/);
    }
  });
});

describe('the confirmation email lists the non-sensitive answers, labelled per attendee, and never a sensitive one', () => {
  it('names Jo\'s and Kim\'s answers and the consent; the allergy details and the date of birth are absent', async () => {
    const event = await questionEvent();
    expect((await postForm(event.slug, familyForm())).status).toBe(303);
    await deliverQueuedMail(harness.ctx, { limit: 10 });
    const [message] = mail.sink.messages;
    expect(message?.text).toMatch(/Jo Citizen\n- Dietary needs: Vegetarian\n- Any allergy\?: Yes/);
    expect(message?.text).toMatch(/Kim Citizen\n- Any allergy\?: No\n- Shirt size: M/);
    expect(message?.text).toContain('We agree that photos may appear in church publications.: Given by Jo Citizen');
    expect(message?.html).toContain('Shirt size: M');
    for (const part of [message?.text, message?.html]) {
      expect(part).not.toContain('Peanuts');
      expect(part).not.toContain('Allergy details');
      expect(part).not.toContain('Date of birth');
      expect(part).not.toMatch(/2018|June/);
    }
  });
});

describe('"Send again" on the error page carries the answers too', () => {
  it('keeps every q.* field, a multichoice repeated', () => {
    const sent = resendableFields({ name: 'Jo', 'q.photos': 'yes', 'q.0.allergy': 'no', 'q.meals': ['Lunch', 'Dinner'], other: 'x' });
    expect(sent).toEqual([
      { name: 'name', value: 'Jo' },
      { name: 'q.photos', value: 'yes' },
      { name: 'q.0.allergy', value: 'no' },
      { name: 'q.meals', value: 'Lunch' },
      { name: 'q.meals', value: 'Dinner' },
    ]);
  });
});
