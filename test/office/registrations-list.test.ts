import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldForSearch, listRegistrations } from '../../src/office/registrations/list.js';
import { paymentReference } from '../../src/registrations/reference.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent, insertRegistration } from '../support/factories.js';

let tdb: TestDatabase;
let ctx: ReturnType<typeof createTestContext>;
let slug: string;
const ids = new Map<string, string>();

/** One registration per contact, with these attendees (the contact's name when none are given). */
const REGISTRATIONS: Array<{ contact: string; attendees?: string[]; email?: string }> = [
  { contact: 'Sam Member', attendees: ['Sam Member', 'Nam Tran'] },
  { contact: 'Nam Tran' },
  { contact: 'José Muñoz' },
  { contact: 'Kim Park', attendees: ['Kim Park', 'Élodie Brûlé'] },
  // Stored decomposed (NFD), as some keyboards and forms send it: "e" then a combining acute accent.
  { contact: 'Rene Decomposed', attendees: ['Rene Decomposed', 'Ren\u0065\u0301e Dupr\u0065\u0301'] },
  { contact: 'Composed Person', attendees: ['Zoë Hart'] },
  { contact: 'Ann_Lee', attendees: ['100% Sure'] },
  { contact: 'AnnXLee', attendees: ['100 Sure'] },
  { contact: 'Back\\Slash' },
  { contact: 'Plain Person', email: 'plain@example.org' },
  // Stored as the public form keeps a domain with accents: in its ASCII form.
  { contact: 'Jo Müller', email: 'jo@xn--mnchen-3ya.de' },
  { contact: 'Tiernan Doyle' },
];

beforeAll(async () => {
  tdb = await createTestDatabase();
  ctx = createTestContext({ db: tdb.db });
  const event = await insertEvent(tdb.db);
  slug = event.slug;
  for (const [i, r] of REGISTRATIONS.entries()) {
    const names = r.attendees ?? [r.contact];
    const { id } = await insertRegistration(tdb.db, ctx.cipher, event.id, {
      contact_name: r.contact,
      email: r.email ?? `member-${i}@example.org`,
      attendees: JSON.stringify(names.map((name) => ({ name, tier: 'adult' }))),
      attendee_count: names.length,
      created_at: new Date(Date.UTC(2026, 2, 1, 0, i)),
    });
    ids.set(r.contact, id);
  }
});
afterAll(() => tdb.drop());

/** The contacts of the registrations a search lists, in listing order. */
const found = async (search: string) => (await listRegistrations(ctx, { eventSlug: slug, search })).map((r) => r.contactName);

describe('registrations list --search by email', () => {
  it('an address whose domain has accents is found however it is typed: as written (jo@münchen.de) or in the ASCII form it is stored in', async () => {
    expect(await found('jo@münchen.de')).toEqual(['Jo Müller']);
    expect(await found('JO@XN--MNCHEN-3YA.DE')).toEqual(['Jo Müller']);
  });
});

describe('registrations list --search compares names, not the attendees\' JSON, without accents or case', () => {
  it('"Nam", "Tie", "name" and "tier" (the JSON keys) do not list every registration; "Nam" finds Nam Tran as contact and attendee', async () => {
    expect(await found('Nam')).toEqual(['Sam Member', 'Nam Tran']);
    expect(await found('nam tran')).toEqual(['Sam Member', 'Nam Tran']);
    expect(await found('Tie')).toEqual(['Tiernan Doyle']);
    expect(await found('name')).toEqual([]);
    expect(await found('tier')).toEqual(['Tiernan Doyle']);
    // Nor the ticket id stored beside each name.
    expect(await found('adult')).toEqual([]);
  });

  it('"munoz", "jose" and "MUÑOZ" find "José Muñoz"; "elodie" and "brule" find the attendee "Élodie Brûlé"', async () => {
    for (const typed of ['munoz', 'jose', 'José', 'JOSE MUNOZ', 'MUÑOZ', 'sé mu']) expect(await found(typed)).toEqual(['José Muñoz']);
    for (const typed of ['elodie', 'brule', 'Élodie Brûlé', 'ELODIE']) expect(await found(typed)).toEqual(['Kim Park']);
    expect(await found('zoe')).toEqual(['Composed Person']);
  });

  it('a name stored decomposed (NFD) is found by its composed (NFC) spelling and without accents; a composed one by a decomposed search', async () => {
    expect('Renée Dupré'.normalize('NFC')).not.toBe('Ren\u0065\u0301e Dupr\u0065\u0301');
    expect(await found('Renée Dupré'.normalize('NFC'))).toEqual(['Rene Decomposed']);
    expect(await found('renee dupre')).toEqual(['Rene Decomposed']);
    expect(await found('Zoe\u0308')).toEqual(['Composed Person']);
    expect(await found('Jose\u0301')).toEqual(['José Muñoz']);
  });

  it('%, _ and \\ in the search text are literal characters, not LIKE wildcards', async () => {
    expect(await found('n_L')).toEqual(['Ann_Lee']);
    expect(await found('100%')).toEqual(['Ann_Lee']);
    expect(await found('%')).toEqual(['Ann_Lee']);
    expect(await found('_')).toEqual(['Ann_Lee']);
    expect(await found('k\\s')).toEqual(['Back\\Slash']);
    expect(await found('\\')).toEqual(['Back\\Slash']);
  });

  it('keeps the other searches: an exact email address and the start of a reference', async () => {
    expect(await found('Plain@Example.org')).toEqual(['Plain Person']);
    const reference = paymentReference(ids.get('Nam Tran') as string);
    expect((await listRegistrations(ctx, { eventSlug: slug, search: reference.slice(0, 6).toLowerCase() })).map((r) => r.reference)).toContain(reference);
  });

  it('text that is only accents lists nothing (it folds to no letters), and a blank search lists everything as before', async () => {
    expect(await found('\u0301')).toEqual([]);
    expect(await found('  ')).toHaveLength(REGISTRATIONS.length);
  });

  it('folds in TypeScript as the SQL folds: accents removed after decomposing, then lower case letter by letter', () => {
    expect(foldForSearch('José Muñoz')).toBe('jose munoz');
    expect(foldForSearch('Ren\u0065\u0301e')).toBe('renee');
    expect(foldForSearch('İlkay')).toBe('ilkay');
    expect(foldForSearch('ΟΔΟΣ')).toBe('οδοσ');
  });
});
