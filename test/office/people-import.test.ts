import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PeopleImportInvalidError, importPeople } from '../../src/office/people-import.js';
import { listPeople } from '../../src/office/people/list.js';
import { FixedClock } from '../../src/clock.js';
import { NON_ASCII_LOCAL_PART_MESSAGE } from '../../src/contact-rules.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

const fixture = (name: string) => fs.readFileSync(path.join(import.meta.dirname, '../fixtures', name), 'utf8');
const HEADER =
  'first_name,last_name,email,mobile,birth_date,wedding_date,spouse_email,ministry_role,clearance_kind,clearance_number,clearance_expires';
const csv = (...rows: string[]) => [HEADER, ...rows].join('\n') + '\n';

const clock = new FixedClock(new Date('2026-11-22T00:00:00Z'));
let tdb: TestDatabase;
let ctx: ReturnType<typeof createTestContext>;
beforeAll(async () => {
  tdb = await createTestDatabase();
  ctx = createTestContext({ db: tdb.db, clock });
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  await tdb.db('people').del(); // cascades to ministry roles and clearances
});

async function invalidOf(promise: Promise<unknown>): Promise<PeopleImportInvalidError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PeopleImportInvalidError);
  const invalid = error as PeopleImportInvalidError;
  expect(invalid.code).toBe('import_invalid');
  expect(invalid.exitCode).toBe(1);
  return invalid;
}

const byEmail = async (email: string) =>
  tdb.db('people').where({ email_hash: ctx.cipher.lookupHash('email', email) }).first();

/** Every row of the tables the import writes, to prove a re-import or a refused file changed nothing. */
async function snapshot(): Promise<unknown> {
  return {
    people: await tdb.db('people').orderBy('id').select(),
    roles: await tdb.db('ministry_roles').orderBy('id').select(),
    clearances: await tdb.db('clearances').orderBy('id').select(),
  };
}

describe('people import', () => {
  it('imports every row with encrypted email and mobile, found by lookup hash whatever the case', async () => {
    const summary = await importPeople(ctx, fixture('people.csv'));
    expect(summary).toEqual({ rows: 3, created: 3, updated: 0, unchanged: 0 });

    const anna = await byEmail('ANNA.NGUYEN@example.ORG');
    expect(anna).toMatchObject({ first_name: 'Anna', last_name: 'Nguyen', birth_date: '1985-03-14', wedding_date: '2010-10-02' });
    expect(ctx.cipher.decrypt(anna.email_enc)).toBe('Anna.Nguyen@example.org');
    expect(ctx.cipher.decrypt(anna.mobile_enc)).toBe('0412 345 678');
    expect(anna.mobile_hash).toBe(ctx.cipher.lookupHash('mobile', '0412345678'));
    expect((await byEmail('carol.smith@example.org')).birth_month).toBe(2);

    const plaintext = await tdb.db.raw<{ rows: unknown[] }>(
      `SELECT id FROM people p WHERE p::text ILIKE '%example.org%' OR p::text LIKE '%0412%' OR p::text LIKE '%400 111%'`,
    );
    expect(plaintext.rows).toEqual([]);

    const ben = await byEmail('ben.nguyen@example.org');
    const roles = await tdb.db('ministry_roles').orderBy('role').select('person_id', 'role');
    expect(roles).toEqual([
      { person_id: anna.id, role: 'Kids Church' },
      { person_id: ben.id, role: 'Music' },
      { person_id: ben.id, role: 'Welcome' },
    ]);
  });

  it('an email whose domain has accents is stored in its ASCII form and matched by either spelling; accents before the @ are refused, saying why', async () => {
    await importPeople(ctx, csv('Jo,Müller,jo@münchen.de,,1980-02-03,,,,,,'));
    const jo = await byEmail('jo@xn--mnchen-3ya.de');
    expect(ctx.cipher.decrypt(jo.email_enc)).toBe('jo@xn--mnchen-3ya.de');
    expect(await importPeople(ctx, csv('Jo,Müller,jo@MÜNCHEN.DE,,1980-02-03,,,,,,'))).toEqual({ rows: 1, created: 0, updated: 0, unchanged: 1 });

    const error = await invalidOf(importPeople(ctx, csv('José,Luis,josé@example.org,,,,,,,,')));
    expect(error.message).toContain(`row 1 (line 2): email: ${NON_ASCII_LOCAL_PART_MESSAGE}`);
  });

  it('links spouses both ways when only one of them names the other', async () => {
    await importPeople(ctx, fixture('people.csv'));
    const anna = await byEmail('anna.nguyen@example.org');
    const ben = await byEmail('ben.nguyen@example.org');
    expect(anna.spouse_id).toBe(ben.id);
    expect(ben.spouse_id).toBe(anna.id);
    expect((await byEmail('carol.smith@example.org')).spouse_id).toBeNull();
  });

  it('links a spouse who was imported before and is not in this file, and unlinks their former spouse', async () => {
    await importPeople(ctx, fixture('people.csv'));
    await importPeople(ctx, csv('Dan,Smith,dan.smith@example.org,,1988-01-05,2020-06-06,Carol.Smith@example.org,,,,'));
    const carol = await byEmail('carol.smith@example.org');
    const dan = await byEmail('dan.smith@example.org');
    expect(carol.spouse_id).toBe(dan.id);
    expect(dan.spouse_id).toBe(carol.id);

    const summary = await importPeople(ctx, csv('Ed,Other,ed@example.org,,,,carol.smith@example.org,,,,'));
    expect(summary).toEqual({ rows: 1, created: 1, updated: 0, unchanged: 0 });
    expect((await byEmail('carol.smith@example.org')).spouse_id).toBe((await byEmail('ed@example.org')).id);
    expect((await byEmail('dan.smith@example.org')).spouse_id).toBeNull();
  });

  it('stores clearance numbers only encrypted', async () => {
    await importPeople(ctx, fixture('people.csv'));
    const anna = await byEmail('anna.nguyen@example.org');
    const clearance = await tdb.db('clearances').where({ person_id: anna.id }).first();
    expect(clearance).toMatchObject({ kind: 'WWCC', expires_on: '2027-05-01', verified: false });
    expect(ctx.cipher.decrypt(clearance.number_enc)).toBe('WWC1234567E');
    const plaintext = await tdb.db.raw<{ rows: unknown[] }>(`SELECT id FROM clearances c WHERE c::text LIKE '%1234567%'`);
    expect(plaintext.rows).toEqual([]);
    const listed = JSON.stringify(await listPeople(ctx));
    expect(listed).not.toContain('1234567');
    expect(listed).toContain('Anna');
  });

  it('an empty clearance number or expiry cell keeps what is stored (and its verification); the kind matches ignoring case', async () => {
    await importPeople(ctx, fixture('people.csv'));
    const anna = await byEmail('anna.nguyen@example.org');
    await tdb.db('clearances').where({ person_id: anna.id }).update({ verified: true });
    const before = await snapshot();

    const blanks = fixture('people.csv').replace('WWCC,WWC1234567E,2027-05-01', 'wwcc,,');
    expect(await importPeople(ctx, blanks)).toEqual({ rows: 3, created: 0, updated: 0, unchanged: 3 });
    expect(await snapshot()).toEqual(before);

    // A renewal spelled in lower case updates the one clearance, which then needs checking again.
    const renewed = fixture('people.csv').replace('WWCC,WWC1234567E,2027-05-01', 'wwcc,,2032-05-01');
    expect(await importPeople(ctx, renewed)).toMatchObject({ updated: 1 });
    const clearances = await tdb.db('clearances').where({ person_id: anna.id }).select();
    expect(clearances).toHaveLength(1);
    expect(clearances[0]).toMatchObject({ kind: 'WWCC', expires_on: '2032-05-01', verified: false });
    expect(ctx.cipher.decrypt(clearances[0].number_enc)).toBe('WWC1234567E');
  });

  it('re-importing the same file changes nothing and reports every row unchanged', async () => {
    await importPeople(ctx, fixture('people.csv'));
    const before = await snapshot();
    clock.set(new Date('2026-12-01T00:00:00Z'));
    const summary = await importPeople(ctx, fixture('people.csv'));
    expect(summary).toEqual({ rows: 3, created: 0, updated: 0, unchanged: 3 });
    expect(await snapshot()).toEqual(before);
  });

  it('a changed row is updated in place, matched by email ignoring case', async () => {
    await importPeople(ctx, fixture('people.csv'));
    const before = await byEmail('carol.smith@example.org');
    const changed = fixture('people.csv')
      .replace('Carol,Smith,carol.smith@example.org,+61 400 111 222,1990-02-28', 'Carol,Smith-Jones,CAROL.SMITH@example.org,,1990-02-28')
      .replace('WWC1234567E,2027-05-01', 'WWC1234567E,2029-05-01');
    const summary = await importPeople(ctx, changed);
    expect(summary).toEqual({ rows: 3, created: 0, updated: 2, unchanged: 1 });
    const after = await byEmail('carol.smith@example.org');
    expect(after).toMatchObject({ id: before.id, last_name: 'Smith-Jones', mobile_enc: null, mobile_hash: null });
    expect(ctx.cipher.decrypt(after.email_enc)).toBe('CAROL.SMITH@example.org');
    expect(await tdb.db('people').count({ n: '*' }).first()).toEqual({ n: 3 });
    expect((await tdb.db('clearances').first()).expires_on).toBe('2029-05-01');
  });

  it('celebration emails turned off stay off through a re-import of the same file and of a changed row, dates and all', async () => {
    await importPeople(ctx, fixture('people.csv'));
    const off = { celebrations_off_at: new Date('2026-11-10T00:00:00Z'), celebrations_off_note: 'Ben died in October' };
    await tdb.db('people').where({ id: (await byEmail('ben.nguyen@example.org')).id }).update({ ...off, celebrations_off_by: 'office' });
    await tdb.db('people').where({ id: (await byEmail('carol.smith@example.org')).id }).update({ ...off, celebrations_off_note: null, celebrations_off_by: 'unsubscribe' });

    clock.set(new Date('2026-12-01T00:00:00Z'));
    expect(await importPeople(ctx, fixture('people.csv'))).toMatchObject({ unchanged: 3 });
    const changed = fixture('people.csv')
      .replace('Ben,Nguyen,ben.nguyen@example.org,,1983-07-30', 'Ben,Nguyen,BEN.NGUYEN@example.org,0400 999 888,1983-07-31')
      .replace('Carol,Smith,carol.smith@example.org,+61 400 111 222,1990-02-28', 'Carol,Smith-Jones,carol.smith@example.org,,1990-03-01');
    expect(await importPeople(ctx, changed)).toMatchObject({ updated: 2 });

    expect(await byEmail('ben.nguyen@example.org')).toMatchObject({ birth_date: '1983-07-31', celebrations_off_by: 'office', ...off });
    expect(await byEmail('carol.smith@example.org')).toMatchObject({
      last_name: 'Smith-Jones',
      celebrations_off_at: off.celebrations_off_at,
      celebrations_off_by: 'unsubscribe',
      celebrations_off_note: null,
    });
    expect(await byEmail('anna.nguyen@example.org')).toMatchObject({ celebrations_off_at: null, celebrations_off_by: null });
  });

  it('a file with two bad rows imports nothing and names both rows with their lines', async () => {
    await importPeople(ctx, fixture('people.csv'));
    const before = await snapshot();
    const error = await invalidOf(importPeople(ctx, fixture('people-invalid.csv')));
    expect(error.rowErrors.map((e) => [e.row, e.line, e.field])).toEqual([
      [2, 3, 'email'],
      [4, 5, 'birth_date'],
    ]);
    expect(error.message).toContain('row 2 (line 3): email: not a valid email address');
    expect(error.message).toContain('row 4 (line 5): birth_date: expected a real date as YYYY-MM-DD');
    expect(error.message).toContain('nothing imported');
    expect(await snapshot()).toEqual(before);
    expect(await byEmail('dora.valid@example.org')).toBeUndefined();
  });

  it('a birth date written as a spreadsheet shows it (25/11/1990) gets the format message alone, not "in the future" too; a real future date gets only that', async () => {
    const error = await invalidOf(importPeople(ctx, csv('Ann,Day,ann.day@example.org,,25/11/1990,,,,,,', 'Bo,Day,bo.day@example.org,,2099-01-01,,,,,,')));
    expect(error.rowErrors.map((e) => [e.row, e.field, e.problem])).toEqual([
      [1, 'birth_date', 'expected a real date as YYYY-MM-DD'],
      [2, 'birth_date', expect.stringContaining('is in the future')],
    ]);
  });

  it('a spreadsheet export with a byte-order mark and CRLF line endings imports the same as plain CSV', async () => {
    const excel = '\uFEFF' + fixture('people.csv').replace(/\n/g, '\r\n');
    expect(await importPeople(ctx, excel)).toEqual({ rows: 3, created: 3, updated: 0, unchanged: 0 });
    expect(await importPeople(ctx, fixture('people.csv'))).toEqual({ rows: 3, created: 0, updated: 0, unchanged: 3 });
  });

  it('rows without an email are refused because re-import matches people by email', async () => {
    const error = await invalidOf(importPeople(ctx, csv('No,Email,,,,,,,,,')));
    expect(error.message).toContain('row 1 (line 2): email: required (re-import matches people by email)');
  });

  it('checks across rows: the same person twice, a spouse nobody knows, contradicting spouses, clearance without kind', async () => {
    const error = await invalidOf(
      importPeople(
        ctx,
        csv(
          'A,One,a@example.org,,,,b@example.org,,,,',
          'B,Two,b@example.org,,,,c@example.org,,,,',
          'C,Three,c@example.org,,,,,,,,',
          'A,Again,A@EXAMPLE.ORG,,,,,,,,',
          'D,Four,d@example.org,,,,stranger@example.org,,,,',
          'E,Five,e@example.org,,2999-01-01,,,,,X1,',
          'F,Six,f@example.org,12,,,,,,,',
        ),
      ),
    );
    expect(error.rowErrors.map((e) => `${e.row}:${e.field}`)).toEqual([
      '2:spouse_email',
      '4:email',
      '5:spouse_email',
      '6:birth_date',
      '6:clearance_kind',
      '7:mobile',
    ]);
    expect(error.message).toContain('stranger@example.org is neither in this file nor already imported');
    expect(await tdb.db('people').count({ n: '*' }).first()).toEqual({ n: 0 });
  });

  it('a wedding before the birth date, and spouses in one file with different wedding dates, are refused by row', async () => {
    const error = await invalidOf(
      importPeople(
        ctx,
        csv(
          'Gus,Early,gus@example.org,,1990-05-01,1989-06-01,,,,,',
          'Hal,Lee,hal@example.org,,1980-01-01,2005-03-12,ivy@example.org,,,,',
          'Ivy,Lee,ivy@example.org,,1982-01-01,2005-03-21,,,,,',
          'Jo,Ng,jo@example.org,,,2010-10-10,kim@example.org,,,,',
          'Kim,Ng,kim@example.org,,,2010-10-10,,,,,',
        ),
      ),
    );
    expect(error.rowErrors.map((e) => `${e.row}:${e.field}`)).toEqual(['1:wedding_date', '3:wedding_date']);
    expect(error.message).toContain('row 1 (line 2): wedding_date: is before the birth date (1990-05-01)');
    expect(error.message).toContain("row 3 (line 4): wedding_date: differs from the spouse's (2005-03-12 in row 2)");
    expect(await tdb.db('people').count({ n: '*' }).first()).toEqual({ n: 0 });
  });

  it('a spouse already imported and not in the file, named or kept by an empty cell, with a different wedding date is refused by row, naming the spouse', async () => {
    await importPeople(ctx, csv('Tom,N,tom@example.org,,,2000-01-01,,,,,', 'Lan,N,lan@example.org,,,2001-05-05,,,,,', 'Ann,P,ann@example.org,,,2003-03-03,bob@example.org,,,,', 'Bob,P,bob@example.org,,,2003-03-03,,,,,'));
    const before = await tdb.db('people').select('email_hash', 'wedding_date', 'spouse_id').orderBy('email_hash');
    const named = await invalidOf(importPeople(ctx, csv('Tom,N,tom@example.org,,,2000-01-01,lan@example.org,,,,')));
    expect(named.message).toContain("row 1 (line 2): wedding_date: differs from the spouse's (2001-05-05 already imported for lan@example.org)");
    const kept = await invalidOf(importPeople(ctx, csv('Ann,P,ann@example.org,,,2004-04-04,,,,,')));
    expect(kept.message).toContain("row 1 (line 2): wedding_date: differs from the spouse's (2003-03-03 already imported for bob@example.org)");
    expect(await tdb.db('people').select('email_hash', 'wedding_date', 'spouse_id').orderBy('email_hash')).toEqual(before);

    // The same date, or an empty cell on either side, links them.
    expect(await importPeople(ctx, csv('Tom,N,tom@example.org,,,2001-05-05,lan@example.org,,,,'))).toMatchObject({ updated: 1 });
    expect(await importPeople(ctx, csv('Ann,P,ann@example.org,,,,,,,,'))).toMatchObject({ updated: 1 });
  });

  it('blank spreadsheet rows (all cells empty) are skipped, and empty cells after the last column are not data', async () => {
    const text = [
      HEADER + ',,',
      'Anna,Nguyen,anna@example.org,,,,,,,,,,',
      ',,,,,,,,,,',
      ',,,,,,,,,,,,',
      'Ben,Ode,ben@example.org,,,,,,,,',
      '',
    ].join('\r\n');
    expect(await importPeople(ctx, text)).toMatchObject({ rows: 2, created: 2 });
  });

  it('a header column without a name is named as such, not as "unknown " with nothing after it', async () => {
    const error = await invalidOf(importPeople(ctx, HEADER.replace(',spouse_email,', ',,') + '\n'));
    expect(error.message).toContain('(missing spouse_email; unknown (a column without a name))');
  });

  it('a missing or wrong header refuses the file naming the expected header', async () => {
    const noHeader = await invalidOf(importPeople(ctx, 'Anna,Nguyen,anna@example.org,,,,,,,,\n'));
    expect(noHeader.message).toContain(HEADER);
    expect(noHeader.message).toContain('missing first_name');
    const extra = await invalidOf(importPeople(ctx, HEADER + ',notes\n'));
    expect(extra.message).toContain('unknown notes');
    expect((await invalidOf(importPeople(ctx, ''))).message).toContain('empty');
  });
});
