import { pino, type Logger as PinoLogger, type DestinationStream } from 'pino';

export type Logger = PinoLogger;

/**
 * Structured JSON log lines on stderr (stdout is kept for command output).
 * Known secret-bearing fields are redacted wherever they appear.
 */
export function createLogger(options: { level?: string; destination?: DestinationStream } = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: undefined,
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers["stripe-signature"]',
          'req.headers.cookie',
          '*.password',
          '*.secret',
          '*.token',
          '*.authorization',
        ],
        censor: '[redacted]',
      },
    },
    options.destination ?? pino.destination({ fd: 2, sync: true }),
  );
}

export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
