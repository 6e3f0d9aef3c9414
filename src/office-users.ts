import type { AppContext } from './context.js';

/** The office's users as every part reads them: who they are, and who gets which email. */

export const USER_ROLES = ['ADMIN', 'PASTOR', 'STAFF'] as const;
export type UserRole = (typeof USER_ROLES)[number];

export interface User {
  id: string;
  name: string;
  email: string;
  role: UserRole;
  createdBySetup: boolean;
  createdAt: Date;
}

export type UserRecipient = Pick<User, 'id' | 'name' | 'email' | 'role'>;

/** What the user services need: shared by the CLI and the HTTP /setup page. */
export type UsersContext = Pick<AppContext, 'db' | 'cipher'>;

export interface UserRow {
  id: string;
  name: string;
  email_enc: string;
  role: UserRole;
  created_by_setup: boolean;
  created_at: Date;
}

export const USER_COLUMNS = ['id', 'name', 'email_enc', 'role', 'created_by_setup', 'created_at'] as const;

export function toUser(ctx: UsersContext, row: UserRow): User {
  return {
    id: row.id,
    name: row.name,
    email: ctx.cipher.decrypt(row.email_enc),
    role: row.role,
    createdBySetup: row.created_by_setup,
    createdAt: row.created_at,
  };
}

export async function listUsers(ctx: UsersContext): Promise<User[]> {
  const rows = await ctx.db('users').select<UserRow[]>([...USER_COLUMNS]).orderBy([{ column: 'created_at' }, { column: 'name' }]);
  return rows.map((row) => toUser(ctx, row));
}

/** Recipients by role, e.g. ADMIN and PASTOR for the clearance digest. */
export async function listUsersByRole(ctx: UsersContext, roles: readonly UserRole[]): Promise<UserRecipient[]> {
  if (roles.length === 0) return [];
  const rows = await ctx.db('users')
    .whereIn('role', [...roles])
    .select<UserRow[]>([...USER_COLUMNS])
    .orderBy([{ column: 'created_at' }, { column: 'name' }]);
  return rows.map((row) => {
    const { id, name, email, role } = toUser(ctx, row);
    return { id, name, email, role };
  });
}
