import { z } from 'zod';
import { mailAddress } from '../contact-rules.js';
import type { AppContext } from '../context.js';
import { AppError, EXIT } from '../errors.js';
import { hasControlCharacters, hasVisibleLetterOrDigit } from '../text-rules.js';
import { USER_COLUMNS, USER_ROLES, toUser, type User, type UserRow, type UsersContext } from '../office-users.js';

export { listUsers, listUsersByRole, USER_ROLES, type User, type UserRecipient, type UserRole, type UsersContext } from '../office-users.js';

const userInputSchema = z.object({
  email: mailAddress('not a valid email address'),
  name: z
    .string()
    .trim()
    .min(1, { error: 'must not be empty', abort: true })
    .refine((name) => !hasControlCharacters(name), { error: 'remove the control characters', abort: true })
    .refine(hasVisibleLetterOrDigit, { error: 'needs at least one visible letter or digit' }),
  role: z.enum(USER_ROLES, { error: `must be one of ${USER_ROLES.join(', ')}` }),
});

const UNIQUE_VIOLATION = '23505';

function validate(input: { email: string; name: string; role: string }): z.infer<typeof userInputSchema> {
  const parsed = userInputSchema.safeParse({ ...input, email: input.email.trim() });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new AppError('invalid_user', `invalid user: ${problems.join('; ')}`, { exitCode: EXIT.usage, httpStatus: 400 });
  }
  return parsed.data;
}

function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === UNIQUE_VIOLATION;
}

function setupClosed(cause?: unknown): AppError {
  return new AppError('setup_closed', 'setup is closed: users already exist', {
    httpStatus: 409,
    suggestion: 'an administrator adds further users with `eventops users add`',
    cause,
  });
}

/**
 * Creates the first ADMIN, only while the users table is empty. The database
 * decides: the insert is conditional on no users, and the unique partial index
 * users_single_setup_admin refuses a second setup row when two calls race.
 */
export async function createFirstAdmin(ctx: UsersContext, input: { email: string; name: string }): Promise<User> {
  const { email, name } = validate({ ...input, role: 'ADMIN' });
  let rows: UserRow[];
  try {
    const result = await ctx.db.raw<{ rows: UserRow[] }>(
      `INSERT INTO users (name, email_enc, email_hash, role, created_by_setup)
       SELECT ?, ?, ?, 'ADMIN', true
       WHERE NOT EXISTS (SELECT 1 FROM users)
       RETURNING ${USER_COLUMNS.join(', ')}`,
      [name, ctx.cipher.encrypt(email), ctx.cipher.lookupHash('email', email)],
    );
    rows = result.rows;
  } catch (error) {
    if (isUniqueViolation(error)) throw setupClosed(error);
    throw error;
  }
  const row = rows[0];
  if (!row) throw setupClosed();
  return toUser(ctx, row);
}

export async function addUser(ctx: UsersContext, input: { email: string; name: string; role: string }): Promise<User> {
  const { email, name, role } = validate(input);
  const rows = await ctx.db('users')
    .insert({ name, email_enc: ctx.cipher.encrypt(email), email_hash: ctx.cipher.lookupHash('email', email), role })
    .onConflict('email_hash')
    .ignore()
    .returning<UserRow[]>([...USER_COLUMNS]);
  const row = rows[0];
  if (!row) {
    throw new AppError('user_exists', `a user with email ${email} already exists`, {
      httpStatus: 409,
      suggestion: 'run `eventops users list` to see who has access',
    });
  }
  return toUser(ctx, row);
}
