import type { Knex } from 'knex';
import { countRateLimitHit } from '../db/rate-limits.js';
import { AppError } from '../errors.js';

/**
 * Guessing codes on the public form is limited per client (publicClient's key, as every public limit is): each
 * post whose code is refused counts one guess, in the rate_limits table every server shares; once a client has
 * made CODE_GUESSES_PER_WINDOW in a window, every post of it that carries a code is refused until the window ends,
 * before the code is looked at, so the answer says nothing of that code. A code that is taken costs nothing.
 */
export const CODE_GUESSES_PER_WINDOW = 10;
export const CODE_GUESS_WINDOW_MS = 15 * 60_000;
const BUCKET = 'code-guesses';

export class CodeGuessLimitError extends AppError {
  constructor(retryAfterMs: number) {
    const minutes = Math.max(1, Math.ceil(retryAfterMs / 60_000));
    super('code_guesses', `Too many codes that could not be used were tried from this connection. Please try again in ${minutes} ${minutes === 1 ? 'minute' : 'minutes'}, or register without a code.`, {
      httpStatus: 429,
    });
    this.name = 'CodeGuessLimitError';
  }
}

/** Refuses a post with a code from a client that has used its guesses for the window. */
export async function assertCodeGuessesLeft(db: Knex, client: string, now: Date): Promise<void> {
  const row = await db('rate_limits').where({ bucket: BUCKET, client_key: client }).first<{ hits: number; window_ends_at: Date } | undefined>('hits', 'window_ends_at');
  if (row && row.window_ends_at > now && row.hits >= CODE_GUESSES_PER_WINDOW) throw new CodeGuessLimitError(row.window_ends_at.getTime() - now.getTime());
}

/** One more refused code from this client (after the refusing transaction rolled back). */
export async function countRefusedCode(db: Knex, client: string, now: Date): Promise<void> {
  await countRateLimitHit(db, { bucket: BUCKET, key: client, windowMs: CODE_GUESS_WINDOW_MS, now });
}
