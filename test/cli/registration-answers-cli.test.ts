import { formatInTimeZone } from 'date-fns-tz';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { paymentReference } from '../../src/registrations/reference.js';
import { runCli } from '../support/cli.js';
import { insertEvent } from '../support/factories.js';
import { useOfficeCli } from '../support/office-cli.js';
import { CAMP_PRICING, CAMP_QUESTIONS, campAnswers, insertAnsweredRegistration, setEventQuestions } from '../support/answered-registration.js';

// The office's commands in a subprocess, on the file's own database; registrations are stored as the form stores them.
const office = useOfficeCli();
const osUser = os.userInfo().username;
const cli = (args: string[]) => runCli(args, { env: office.env });

async function campWithFamily() {
  const event = await insertEvent(office.db, { pricing: CAMP_PRICING });
  await setEventQuestions(office.db, event.id, CAMP_QUESTIONS);
  const { attendees, answers } = campAnswers();
  const family = await insertAnsweredRegistration(office.db, office.context().cipher, { eventId: event.id, questions: CAMP_QUESTIONS, attendees, answers });
  return { event, family, reference: paymentReference(family.id) };
}

/** When the consent was given, as the office reads it: in the church's time zone (APP_TIMEZONE, Sydney). */
function consentShownAt(): string {
  const at = campAnswers().answers.attendees[1]?.['photos'] as { at: string };
  return formatInTimeZone(new Date(at.at), 'Australia/Sydney', 'yyyy-MM-dd HH:mm');
}

const SENSITIVE_VALUES = ['peanuts', 'asthma', '2016-09-14', '1988-04-02'];

describe('registrations show: the answers, sensitive ones only with --sensitive', () => {
  it('lists the plain answers by question and attendee, the consent as given, and counts the hidden sensitive ones with the flag that shows them', async () => {
    const { reference } = await campWithFamily();
    const shown = await cli(['registrations', 'show', reference]);
    expect(shown.stderr).toBe('');
    expect(shown.code).toBe(0);
    const answers = shown.stdout.slice(shown.stdout.indexOf('Answers:'), shown.stdout.indexOf('Price:'));
    expect(answers.trimEnd().split('\n')).toEqual([
      'Answers:',
      '  Emergency contact: Joe Camper 0400 111 222',
      '  Takes the bus: yes',
      '  Ruth Camper (Adult):',
      '    Dietary needs: vegetarian',
      '  Kim Camper (Child):',
      '    Dietary needs: no pork',
      `    Photo consent: agreed by Ruth Camper (as guardian of Kim Camper) at ${consentShownAt()}: “Photos of my child may appear in the church newsletter.”`,
      expect.stringMatching(/^ {2}4 sensitive answers hidden: show with --sensitive \(purged on \d{4}-\d{2}-\d{2}\)$/),
    ]);
    for (const value of SENSITIVE_VALUES) expect(shown.stdout).not.toContain(value);

    const json = await cli(['registrations', 'show', reference, '--json']);
    expect(json.code).toBe(0);
    for (const value of SENSITIVE_VALUES) expect(json.stdout).not.toContain(value);
    expect(JSON.parse(json.stdout).registration.answers).toMatchObject({ sensitiveHidden: 4, sensitivePurgedAt: null });
  });

  it('with --sensitive shows them too, marked sensitive: medical notes, allergies and each date of birth', async () => {
    const { reference } = await campWithFamily();
    const shown = await cli(['registrations', 'show', reference, '--sensitive']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('  Medical conditions (sensitive): Ruth: asthma, inhaler in bag\n');
    expect(shown.stdout).toContain('  Ruth Camper (Adult):\n    Date of birth (sensitive): 1988-04-02\n    Dietary needs: vegetarian\n');
    expect(shown.stdout).toContain('    Allergies (sensitive): peanuts (anaphylaxis), EpiPen\n');
    expect(shown.stdout).toContain('    Date of birth (sensitive): 2016-09-14\n');
    expect(shown.stdout).not.toContain('hidden');
  });

  it('keeps the answers to a question removed from the event file hidden, even with --sensitive', async () => {
    const { event, reference } = await campWithFamily();
    await setEventQuestions(office.db, event.id, CAMP_QUESTIONS.filter((q) => q.id !== 'diet' && q.id !== 'allergies'));
    const shown = await cli(['registrations', 'show', reference, '--sensitive']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).not.toContain('vegetarian');
    expect(shown.stdout).not.toContain('peanuts');
    expect(shown.stdout).toContain('Medical conditions (sensitive)');
    // Still stored: the answers are kept, hidden, as removing a question promises.
    const row = await office.db('registrations').where({ id: (await office.db('registrations').where({ event_id: event.id }).first()).id }).first();
    expect(row.answers.attendees[0]).toMatchObject({ diet: 'vegetarian' });
  });

  it('after the purge says the sensitive answers were purged, and when; the plain ones are still shown', async () => {
    const { event, reference, family } = await campWithFamily();
    // The event ended 40 days ago; its sensitive answers are kept 30 days.
    const ended = new Date(Date.now() - 40 * 24 * 3600_000);
    await office.db('events').where({ id: event.id }).update({ starts_at: new Date(ended.getTime() - 2 * 24 * 3600_000), ends_at: ended, sensitive_retention_days: 30 });
    const purge = await cli(['purge-answers']);
    expect(purge.code, purge.stderr).toBe(0);
    expect(purge.stdout).toMatch(/^purge-answers: ok, purged [1-9]\d*\n$/);
    expect(await office.db('registrations').where({ id: family.id }).first()).toMatchObject({ sensitive_answers_enc: null, sensitive_purged_at: expect.any(Date) });

    const shown = await cli(['registrations', 'show', reference, '--sensitive']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/\n {2}sensitive answers purged on \d{4}-\d{2}-\d{2}\n/);
    expect(shown.stdout).toContain('    Dietary needs: vegetarian');
    for (const value of SENSITIVE_VALUES) expect(shown.stdout).not.toContain(value);
    expect(shown.stdout).toMatch(/sensitive answers purged by purge-answers: 30 days after the event ended, the other answers kept/);
  });
});

describe('registrations export: a column per question, sensitive columns only with --include-sensitive and a reason', () => {
  it('without the flag: the plain questions as q.<id> columns, a registration answer on each of its rows, no sensitive value, nothing recorded', async () => {
    const { event, reference } = await campWithFamily();
    const exported = await cli(['registrations', 'export', '--event', event.slug]);
    expect(exported.stderr).toBe('');
    expect(exported.code).toBe(0);
    const rows = parse(exported.stdout, { columns: true, bom: true }) as Array<Record<string, string>>;
    expect(Object.keys(rows[0] ?? {}).filter((header) => header.startsWith('q.'))).toEqual(['q.diet', 'q.photos', 'q.emergency', 'q.bus']);
    expect(rows.map((row) => [row.attendee_name, row.registration_reference, row['q.diet'], row['q.photos'], row['q.emergency'], row['q.bus']])).toEqual([
      ['Ruth Camper', reference, 'vegetarian', '', 'Joe Camper 0400 111 222', 'yes'],
      ['Kim Camper', reference, 'no pork', `agreed by Ruth Camper (as guardian of Kim Camper) at ${consentShownAt()}`, 'Joe Camper 0400 111 222', 'yes'],
    ]);
    for (const value of SENSITIVE_VALUES) expect(exported.stdout).not.toContain(value);
    expect(await office.db('registration_history').where({ action: 'sensitive_exported' })).toEqual([]);
  });

  it('refuses --include-sensitive without --reason (and --reason alone) as a usage error, exporting and recording nothing', async () => {
    const { event } = await campWithFamily();
    const noReason = await cli(['registrations', 'export', '--event', event.slug, '--include-sensitive']);
    expect(noReason.code).toBe(2);
    expect(noReason.stdout).toBe('');
    expect(noReason.stderr).toContain('--include-sensitive needs --reason');
    const emptyReason = await cli(['registrations', 'export', '--event', event.slug, '--include-sensitive', '--reason', '  ']);
    expect(emptyReason.code).toBe(2);
    expect(emptyReason.stdout).toBe('');
    const reasonAlone = await cli(['registrations', 'export', '--event', event.slug, '--reason', 'nurse']);
    expect(reasonAlone.code).toBe(2);
    expect(reasonAlone.stderr).toContain('--reason is for --include-sensitive');
    expect(await office.db('registration_history').where({ action: 'sensitive_exported' })).toEqual([]);
  });

  it('with --include-sensitive --reason: the sensitive columns (date of birth first) and one history entry per exported registration, saying who, when and why', async () => {
    const { event, family, reference } = await campWithFamily();
    // A second registration without any sensitive answer is exported, so recorded, too.
    const single = await insertAnsweredRegistration(office.db, office.context().cipher, {
      eventId: event.id,
      questions: CAMP_QUESTIONS,
      attendees: [{ name: 'Ann Solo', tier: 'adult' }],
      answers: { registration: { emergency: 'Bo Solo' }, attendees: [{ diet: 'none' }] },
    });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-sensitive-'));
    const file = path.join(dir, 'nurse.csv');
    const before = new Date();
    const exported = await cli(['registrations', 'export', '--event', event.slug, '--include-sensitive', '--reason', "camp nurse's list", '--out', file]);
    const after = new Date();
    expect(exported.stderr).toBe('');
    expect(exported.code).toBe(0);
    expect(exported.stdout).toBe(`wrote 3 attendee rows to ${file} (mode 0600); the sensitive answers' export is recorded in the history of 2 registrations\n`);

    const rows = parse(fs.readFileSync(file, 'utf8'), { columns: true, bom: true }) as Array<Record<string, string>>;
    expect(Object.keys(rows[0] ?? {}).filter((header) => header.startsWith('q.'))).toEqual([
      'q.dateOfBirth',
      'q.diet',
      'q.allergies',
      'q.photos',
      'q.emergency',
      'q.medical',
      'q.bus',
    ]);
    expect(rows.map((row) => [row.attendee_name, row['q.dateOfBirth'], row['q.allergies'], row['q.medical']])).toEqual([
      ['Ruth Camper', '1988-04-02', '', 'Ruth: asthma, inhaler in bag'],
      ['Kim Camper', '2016-09-14', 'peanuts (anaphylaxis), EpiPen', 'Ruth: asthma, inhaler in bag'],
      ['Ann Solo', '', '', ''],
    ]);

    const history = await office.db('registration_history').where({ action: 'sensitive_exported' }).orderBy('id');
    expect(history.map((h: { registration_id: string }) => h.registration_id)).toEqual([family.id, single.id]);
    for (const entry of history) {
      expect(entry.actor).toBe(osUser);
      expect(entry.created_at.getTime()).toBeGreaterThanOrEqual(before.getTime() - 1000);
      expect(entry.created_at.getTime()).toBeLessThanOrEqual(after.getTime() + 61_000);
      expect(entry.changes).toMatchObject({ reason: "camp nurse's list", columns: ['Date of birth', 'Allergies', 'Medical conditions'], to: file });
    }
    expect(history.map((h: { changes: { rows: number } }) => h.changes.rows)).toEqual([2, 1]);

    // The office reads it back as a sentence in the registration's history.
    const shown = await cli(['registrations', 'show', reference]);
    expect(shown.stdout).toMatch(
      new RegExp(`\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} sensitive answers exported by ${osUser}: because “camp nurse's list” \\(Date of birth, Allergies, Medical conditions; 2 attendee rows\\)`),
    );
  });

  it('in JSON, the answers keep their types: a consent as given, yes/no as true/false', async () => {
    const { event } = await campWithFamily();
    const exported = await cli(['registrations', 'export', '--event', event.slug, '--format', 'json', '--include-sensitive', '--reason', 'first aid']);
    expect(exported.code).toBe(0);
    const [ruth, kim] = JSON.parse(exported.stdout).attendees as Array<{ answers: Record<string, unknown> }>;
    expect(ruth?.answers).toEqual({
      'q.dateOfBirth': '1988-04-02',
      'q.diet': 'vegetarian',
      'q.allergies': null,
      'q.photos': null,
      'q.emergency': 'Joe Camper 0400 111 222',
      'q.medical': 'Ruth: asthma, inhaler in bag',
      'q.bus': true,
    });
    expect(kim?.answers['q.photos']).toEqual(campAnswers().answers.attendees[1]?.['photos']);
    expect(kim?.answers['q.photos']).toMatchObject({ agreed: true, statement: 'Photos of my child may appear in the church newsletter.', by: 'Ruth Camper', asGuardianOf: 'Kim Camper' });
    const recorded = await office.db('registration_history').where({ action: 'sensitive_exported' }).whereRaw(`changes->>'reason' = 'first aid'`);
    expect(recorded).toHaveLength(1);
    expect(recorded[0].changes.to).toBe('standard output');
  });
});
