import { createRequire } from 'node:module';
import { pino, type Logger as PinoLogger, type DestinationStream } from 'pino';
import { pathForLog } from './secret-paths.js';

export type Logger = PinoLogger;

/** How log lines are written: one JSON object a line (for machines), or pino-pretty's readable lines (for a person at a terminal). */
export type LogFormat = 'json' | 'pretty';

/**
 * LOG_FORMAT when it is set; otherwise readable lines when the log's destination (stderr) is a terminal,
 * a person watching, and JSON lines everywhere else (systemd, a container, cron, a pipe), which log tools parse.
 */
export function chooseLogFormat(setting: LogFormat | undefined, stderrIsTerminal: boolean): LogFormat {
  return setting ?? (stderrIsTerminal ? 'pretty' : 'json');
}

export interface LoggerOptions {
  level?: string;
  /** Where the lines go; stderr when absent (stdout is kept for command output). */
  destination?: DestinationStream;
  /** JSON unless said. */
  format?: LogFormat;
  /** Pretty lines in colour: only for a terminal that shows them. */
  colour?: boolean;
}

/**
 * Log lines on stderr (stdout is kept for command output), JSON or pretty (chooseLogFormat).
 * Known secret-bearing fields are redacted wherever they appear, before either format writes them.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const out = options.destination ?? pino.destination({ fd: 2, sync: true });
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
    options.format === 'pretty' ? prettyDestination(out, options.colour ?? false) : out,
  );
}

/**
 * Each JSON line pino wrote (redacted already) rewritten by pino-pretty, in the same call: no worker thread,
 * nothing buffered, so the last lines before an exit are not lost. pino-pretty is required here, only when
 * pretty lines are asked for, rather than imported: a cron job (never a terminal) starts without parsing it.
 */
function prettyDestination(out: DestinationStream, colour: boolean): DestinationStream {
  const load = createRequire(import.meta.url);
  const { prettyFactory } = load('pino-pretty') as typeof import('pino-pretty');
  const prettify = prettyFactory({ colorize: colour, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' });
  return { write: (line: string) => out.write(prettify(line)) };
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
