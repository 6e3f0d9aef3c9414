import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addUser, createFirstAdmin, listUsers, listUsersByRole } from '../../src/office/users.js';
import { AppError } from '../../src/errors.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

let tdb: TestDatabase;
let ctx: ReturnType<typeof createTestContext>;
beforeAll(async () => {
  tdb = await createTestDatabase();
  ctx = createTestContext({ db: tdb.db });
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  await tdb.db('users').del();
});

async function errorOf(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe('first-admin setup', () => {
  it('concurrent setups create exactly one ADMIN; the others are refused as setup_closed', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => createFirstAdmin(ctx, { email: `admin${i}@example.org`, name: `Admin ${i}` })),
    );
    const created = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(created).toHaveLength(1);
    expect(refused).toHaveLength(7);
    for (const r of refused) expect(r.reason).toMatchObject({ code: 'setup_closed' });
    const rows = await tdb.db('users').select('role', 'created_by_setup');
    expect(rows).toEqual([{ role: 'ADMIN', created_by_setup: true }]);
  });

  it('setup is refused once any user exists, even one who is not an admin', async () => {
    await addUser(ctx, { email: 'staff@example.org', name: 'Staff Member', role: 'STAFF' });
    const error = await errorOf(createFirstAdmin(ctx, { email: 'late@example.org', name: 'Too Late' }));
    expect(error.code).toBe('setup_closed');
    expect(error.message).toContain('users already exist');
    expect(error.exitCode).toBe(1);
    expect(await tdb.db('users').count({ n: '*' }).first()).toEqual({ n: 1 });
  });

  it('a second setup after a successful one is refused', async () => {
    const admin = await createFirstAdmin(ctx, { email: 'first@example.org', name: 'First Admin' });
    expect(admin).toMatchObject({ role: 'ADMIN', email: 'first@example.org', createdBySetup: true });
    expect((await errorOf(createFirstAdmin(ctx, { email: 'second@example.org', name: 'Second' }))).code).toBe('setup_closed');
  });

  it('an invalid email is a usage error and creates nothing', async () => {
    const error = await errorOf(createFirstAdmin(ctx, { email: 'not-an-email', name: 'Someone' }));
    expect(error).toMatchObject({ code: 'invalid_user', exitCode: 2 });
    expect(error.message).toContain('email');
    expect(await tdb.db('users').count({ n: '*' }).first()).toEqual({ n: 0 });
  });
});

describe('users', () => {
  it('add and list return decrypted emails while the table holds no plaintext email', async () => {
    await addUser(ctx, { email: 'Pastor.Sam@Example.org', name: 'Sam Lee', role: 'PASTOR' });
    await addUser(ctx, { email: 'office@example.org', name: 'Office', role: 'STAFF' });
    const users = await listUsers(ctx);
    expect(users.map((u) => [u.email, u.name, u.role])).toEqual([
      ['Pastor.Sam@Example.org', 'Sam Lee', 'PASTOR'],
      ['office@example.org', 'Office', 'STAFF'],
    ]);
    const leaking = await tdb.db.raw<{ rows: unknown[] }>(`SELECT id FROM users u WHERE u::text ILIKE '%example.org%'`);
    expect(leaking.rows).toEqual([]);
    const raw = await tdb.db('users').where({ email_hash: ctx.cipher.lookupHash('email', 'pastor.sam@example.org') }).first();
    expect(raw.name).toBe('Sam Lee');
    expect(ctx.cipher.decrypt(raw.email_enc)).toBe('Pastor.Sam@Example.org');
  });

  it('a second user with the same email, in any case, is refused as user_exists', async () => {
    await addUser(ctx, { email: 'dup@example.org', name: 'First', role: 'STAFF' });
    const error = await errorOf(addUser(ctx, { email: 'DUP@example.org', name: 'Second', role: 'ADMIN' }));
    expect(error.code).toBe('user_exists');
    expect(await tdb.db('users').count({ n: '*' }).first()).toEqual({ n: 1 });
  });

  it('an unknown role is refused naming the valid roles', async () => {
    const error = await errorOf(addUser(ctx, { email: 'x@example.org', name: 'X', role: 'OWNER' }));
    expect(error.code).toBe('invalid_user');
    expect(error.message).toContain('ADMIN, PASTOR, STAFF');
  });

  it('a name with control or bidi characters, or of only invisible characters, is refused as the public form refuses it; /setup and the CLI alike', async () => {
    for (const name of ['Ann\u202eeM', 'Ann\u0007', '\u3164', '\u200b\u2060']) {
      expect((await errorOf(addUser(ctx, { email: 'n@example.org', name, role: 'STAFF' }))).code, JSON.stringify(name)).toBe('invalid_user');
      expect((await errorOf(createFirstAdmin(ctx, { email: 'n@example.org', name }))).code, JSON.stringify(name)).toBe('invalid_user');
    }
    expect(await tdb.db('users').where({ role: 'STAFF' }).count({ n: '*' }).first()).toEqual({ n: 0 });
    expect((await addUser(ctx, { email: 'li@example.org', name: '李小龍', role: 'STAFF' })).name).toBe('李小龍');
  });

  it('listUsersByRole returns only the requested roles with decrypted emails', async () => {
    await addUser(ctx, { email: 'admin@example.org', name: 'Ada', role: 'ADMIN' });
    await addUser(ctx, { email: 'pastor@example.org', name: 'Pat', role: 'PASTOR' });
    await addUser(ctx, { email: 'staff@example.org', name: 'Stu', role: 'STAFF' });
    const recipients = await listUsersByRole(ctx, ['ADMIN', 'PASTOR']);
    expect(recipients.map(({ email, name, role }) => ({ email, name, role }))).toEqual([
      { email: 'admin@example.org', name: 'Ada', role: 'ADMIN' },
      { email: 'pastor@example.org', name: 'Pat', role: 'PASTOR' },
    ]);
    expect(recipients.every((r) => typeof r.id === 'string')).toBe(true);
    expect(await listUsersByRole(ctx, [])).toEqual([]);
  });
});
