import { pino, type Logger as PinoLogger, type DestinationStream } from 'pino';
import { pathForLog } from './secret-paths.js';

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
      serializers: { req: requestForLog },
    },
    options.destination ?? pino.destination({ fd: 2, sync: true }),
  );
}

interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
}

/**
 * The request as a log line shows it: the path without its query string, which
 * carries registration tokens (?token=…) and provider session ids, and without
 * the tokens in the path of a secret route (pathForLog). Replaces fastify's
 * default request serializer (pino's own serializers take precedence).
 */
function requestForLog(request: LoggedRequest): Record<string, string | undefined> {
  return { method: request.method, url: request.url === undefined ? undefined : pathForLog(request.url), host: request.host, remoteAddress: request.ip };
}

export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
