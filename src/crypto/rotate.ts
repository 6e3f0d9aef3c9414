import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';
import { FieldDecryptError } from './field-cipher.js';

export interface EncryptedColumn {
  table: string;
  column: string;
  /** Primary key column, for keyset paging and the guarded write-back. */
  key: string;
  keyType: 'uuid' | 'bigint';
}

/** Every encrypted column of the schema. A migration that adds a `*_enc` column must add it here. */
export const ENCRYPTED_COLUMNS: readonly EncryptedColumn[] = [
  { table: 'users', column: 'email_enc', key: 'id', keyType: 'uuid' },
  { table: 'people', column: 'email_enc', key: 'id', keyType: 'uuid' },
  { table: 'people', column: 'mobile_enc', key: 'id', keyType: 'uuid' },
  { table: 'clearances', column: 'number_enc', key: 'id', keyType: 'bigint' },
  { table: 'registrations', column: 'contact_email_enc', key: 'id', keyType: 'uuid' },
  { table: 'registrations', column: 'contact_mobile_enc', key: 'id', keyType: 'uuid' },
  { table: 'registrations', column: 'sensitive_answers_enc', key: 'id', keyType: 'uuid' },
  { table: 'checkout_sessions', column: 'payload_enc', key: 'id', keyType: 'uuid' },
  { table: 'queued_mail', column: 'message_enc', key: 'id', keyType: 'bigint' },
  { table: 'waitlist_entries', column: 'name_enc', key: 'id', keyType: 'uuid' },
  { table: 'waitlist_entries', column: 'email_enc', key: 'id', keyType: 'uuid' },
  { table: 'waitlist_entries', column: 'mobile_enc', key: 'id', keyType: 'uuid' },
  { table: 'contact_email_changes', column: 'old_email_enc', key: 'id', keyType: 'uuid' },
  { table: 'contact_email_changes', column: 'new_email_enc', key: 'id', keyType: 'uuid' },
];

type RotationContext = Pick<AppContext, 'db' | 'cipher' | 'config'>;

export interface ColumnPlan {
  table: string;
  column: string;
  /** Values not yet under the target version. */
  pending: number;
  /** The same values counted by the key version they are stored under. */
  byVersion: Record<string, number>;
}

export interface RotationPlan {
  targetVersion: string;
  columns: ColumnPlan[];
  total: number;
  /** Versions found in stored values that the keyring cannot decrypt: rotation would stop on them. */
  missingKeys: string[];
}

export interface ColumnRotation {
  table: string;
  column: string;
  rotated: number;
  /** Rows changed by someone else between read and write; left for the next run. */
  skipped: number;
}

export interface RotationResult {
  targetVersion: string;
  columns: ColumnRotation[];
  rotated: number;
  skipped: number;
  /**
   * Counted again once the run ends: values still not under the target version (changed while
   * rotating, or written by a process that still writes with an older key). While this is not 0,
   * no older key may be removed.
   */
  remaining: number;
  remainingByVersion: Record<string, number>;
}

export interface RotationProgress {
  table: string;
  column: string;
  /** Rotated so far in this column and in the whole run. */
  columnRotated: number;
  columnPending: number;
  rotated: number;
  pending: number;
}

export interface RotateOptions {
  batchSize?: number;
  /** Called after every written batch; an error thrown here stops the run (already written batches stay rotated). */
  onProgress?: (progress: RotationProgress) => void | Promise<void>;
}

/** LIKE pattern matching values stored under a key version. */
const storedUnder = (version: string): string => `${version}:%`;

/** What a rotation would do: per encrypted column, how many values are not yet under the current key version. */
export async function planRotation(ctx: RotationContext): Promise<RotationPlan> {
  const target = ctx.cipher.currentVersion;
  const columns: ColumnPlan[] = [];
  const versions = new Set<string>();
  for (const { table, column } of ENCRYPTED_COLUMNS) {
    const rows = (await ctx.db(table)
      .select(ctx.db.raw(`split_part(??, ':', 1) AS version`, [column]))
      .count({ count: '*' })
      .whereNotNull(column)
      .andWhere(column, 'not like', storedUnder(target))
      .groupByRaw('1')
      .orderByRaw('1')) as unknown as { version: string; count: number | string }[];
    const byVersion: Record<string, number> = {};
    for (const row of rows) {
      byVersion[row.version] = Number(row.count);
      versions.add(row.version);
    }
    columns.push({ table, column, pending: Object.values(byVersion).reduce((a, b) => a + b, 0), byVersion });
  }
  const missingKeys = [...versions].filter((version) => !ctx.config.keyring.keys.has(version));
  return { targetVersion: target, columns, total: columns.reduce((sum, c) => sum + c.pending, 0), missingKeys };
}

/**
 * Re-encrypts every value not under the current key version, in batches.
 * Each batch is one guarded UPDATE, so a crash leaves every row either old or
 * new and the next run picks up the rest; a second run finds nothing to do.
 */
export async function rotateKeys(ctx: RotationContext, options: RotateOptions = {}): Promise<RotationResult> {
  const batchSize = options.batchSize ?? 500;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new AppError('invalid_batch_size', 'batch size must be a positive integer');
  const plan = await planRotation(ctx);
  const target = plan.targetVersion;
  if (plan.missingKeys.length > 0) throw missingKeysError(plan);
  const columns: ColumnRotation[] = [];
  let rotated = 0;

  for (const spec of ENCRYPTED_COLUMNS) {
    const columnPending = plan.columns.find((c) => c.table === spec.table && c.column === spec.column)?.pending ?? 0;
    const done: ColumnRotation = { table: spec.table, column: spec.column, rotated: 0, skipped: 0 };
    columns.push(done);
    let after: string | number | undefined;
    for (;;) {
      const query = ctx.db(spec.table)
        .select({ key: spec.key, value: spec.column })
        .whereNotNull(spec.column)
        .andWhere(spec.column, 'not like', storedUnder(target))
        .orderBy(spec.key)
        .limit(batchSize);
      if (after !== undefined) query.andWhere(spec.key, '>', after);
      const rows = (await query) as { key: string | number; value: string }[];
      if (rows.length === 0) break;

      const updates = rows.map((row) => ({ key: row.key, old: row.value, fresh: reencrypt(ctx, spec, row) }));
      const written = await writeBatch(ctx, spec, updates);
      done.rotated += written;
      done.skipped += rows.length - written;
      rotated += written;
      after = rows[rows.length - 1]?.key;
      await options.onProgress?.({
        table: spec.table,
        column: spec.column,
        columnRotated: done.rotated,
        columnPending,
        rotated,
        pending: plan.total,
      });
      if (rows.length < batchSize) break;
    }
  }
  const left = await planRotation(ctx);
  const remainingByVersion: Record<string, number> = {};
  for (const column of left.columns) {
    for (const [version, count] of Object.entries(column.byVersion)) remainingByVersion[version] = (remainingByVersion[version] ?? 0) + count;
  }
  return {
    targetVersion: target,
    columns,
    rotated,
    skipped: columns.reduce((sum, c) => sum + c.skipped, 0),
    remaining: left.total,
    remainingByVersion,
  };
}

function missingKeysError(plan: RotationPlan): AppError {
  const variables = plan.missingKeys.map((version) => `ENCRYPTION_KEY_${version.toUpperCase()}`);
  const where = plan.columns
    .filter((c) => plan.missingKeys.some((version) => c.byVersion[version]))
    .map((c) => `${c.table}.${c.column}`);
  return new AppError(
    'rotation_missing_keys',
    `stored values use key ${plan.missingKeys.join(', ')}, which the keyring lacks (${where.join(', ')}); nothing was changed`,
    { suggestion: `set ${variables.join(', ')} to the key those values were written with, then run again` },
  );
}

function reencrypt(ctx: RotationContext, spec: EncryptedColumn, row: { key: string | number; value: string }): string {
  try {
    return ctx.cipher.encrypt(ctx.cipher.decrypt(row.value));
  } catch (error) {
    const reason = error instanceof FieldDecryptError ? error.message : 'unexpected error';
    throw new AppError('rotation_decrypt_failed', `cannot decrypt ${spec.table}.${spec.column} of ${spec.key} ${row.key}: ${reason}`, {
      cause: error,
      suggestion: 'add the missing ENCRYPTION_KEY_Vn to the keyring, or repair that row; rows already rotated stay rotated and a rerun continues',
    });
  }
}

/** One UPDATE per batch; `col = old` skips a row someone changed since it was read instead of overwriting it. */
async function writeBatch(
  ctx: RotationContext,
  spec: EncryptedColumn,
  updates: { key: string | number; old: string; fresh: string }[],
): Promise<number> {
  const values = updates.map(() => `(?::${spec.keyType}, ?::text, ?::text)`).join(', ');
  const bindings = updates.flatMap((u) => [u.key, u.old, u.fresh]);
  const result = (await ctx.db.raw(
    `UPDATE ?? AS t SET ?? = v.fresh FROM (VALUES ${values}) AS v(key, old, fresh) WHERE t.?? = v.key AND t.?? = v.old`,
    [spec.table, spec.column, ...bindings, spec.key, spec.column],
  )) as { rowCount: number | null };
  return result.rowCount ?? 0;
}
