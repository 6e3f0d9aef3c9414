/**
 * Errors that reach the command line or an HTTP answer carry a stable code,
 * an exit code, and, where it helps, a suggestion of what to do next.
 */
export class AppError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly options: { exitCode?: number; suggestion?: string; httpStatus?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
  }
  get exitCode(): number {
    return this.options.exitCode ?? 1;
  }
  get suggestion(): string | undefined {
    return this.options.suggestion;
  }
  get httpStatus(): number {
    return this.options.httpStatus ?? 500;
  }
}

export const EXIT = { ok: 0, failure: 1, usage: 2, leaseHeld: 75, config: 78 } as const;

export class UsageError extends AppError {
  constructor(message: string, suggestion?: string) {
    super('usage', message, { exitCode: EXIT.usage, suggestion, httpStatus: 400 });
    this.name = 'UsageError';
  }
}

export class NotFoundError extends AppError {
  constructor(what: string, suggestion?: string) {
    super('not_found', `${what} not found`, { exitCode: EXIT.failure, suggestion, httpStatus: 404 });
    this.name = 'NotFoundError';
  }
}

export class LeaseHeldError extends AppError {
  constructor(
    readonly lease: string,
    readonly heldSince: Date,
  ) {
    super('lease_held', `another run holds "${lease}" since ${heldSince.toISOString()}`, {
      exitCode: EXIT.leaseHeld,
      httpStatus: 409,
      suggestion: 'wait for the other run to finish; a crashed run releases it when its lease expires',
    });
    this.name = 'LeaseHeldError';
  }
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
