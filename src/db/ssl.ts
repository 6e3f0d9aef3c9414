import fs from 'node:fs';
import path from 'node:path';
import type { ConnectionOptions } from 'node:tls';
import { AppError, EXIT } from '../errors.js';

/** The sslmode values libpq knows. */
export const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;

/** Query parameters we turn into TLS options ourselves; pg must not see them (it would apply its own meaning). */
const TLS_PARAMETERS = ['sslmode', 'sslrootcert', 'sslcert', 'sslkey', 'uselibpqcompat'];

/** Query parameters that name a file read when connecting. */
const TLS_FILE_PARAMETERS = ['sslrootcert', 'sslcert', 'sslkey'] as const;

/** The file's text, or why it cannot be read (ENOENT, EACCES, EISDIR). */
function readFileOrReason(file: string, cwd: string): { text: string } | { reason: string } {
  try {
    return { text: fs.readFileSync(path.resolve(cwd, file), 'utf8') };
  } catch (error) {
    return { reason: (error as NodeJS.ErrnoException).code ?? String(error) };
  }
}

/**
 * Each TLS file a connection URL names that cannot be read, as "sslrootcert file /x (ENOENT)", so the
 * configuration check refuses it instead of every command failing when it first connects.
 */
export function unreadableTlsFiles(url: string, cwd: string): string[] {
  const params = new URL(url).searchParams;
  return TLS_FILE_PARAMETERS.flatMap((name) => {
    const file = params.get(name);
    const read = file ? readFileOrReason(file, cwd) : undefined;
    return read && 'reason' in read ? [`${name} file ${file} (${read.reason})`] : [];
  });
}

export interface PgConnectionTarget {
  connectionString: string;
  /** undefined: pg decides from the URL (no sslmode given). */
  ssl?: false | ConnectionOptions;
}

/**
 * `?sslmode=` with libpq's meaning. pg 8 treats `require` and `verify-ca` as
 * `verify-full` (so a private-CA database cannot be reached with `require`)
 * and prints a SECURITY WARNING on every process that connects. Here:
 * `disable`/`allow` no TLS; `prefer`/`require` encrypted, not verified (with
 * `sslrootcert`, verified against it as libpq does); `verify-ca` the chain
 * against `sslrootcert`, any host name; `verify-full` the chain (against
 * `sslrootcert`, else the system's CAs) and the host name.
 */
export function pgConnectionTarget(url: string): PgConnectionTarget {
  const parsed = new URL(url);
  const mode = parsed.searchParams.get('sslmode');
  if (mode === null) return { connectionString: url };
  const file = (name: (typeof TLS_FILE_PARAMETERS)[number]): string | undefined => {
    const value = parsed.searchParams.get(name);
    if (!value) return undefined;
    const read = readFileOrReason(value, process.cwd());
    if ('text' in read) return read.text;
    throw new AppError('database_tls_file', `cannot read the ${name} file ${value} named in the database URL (${read.reason})`, {
      exitCode: EXIT.config,
      suggestion: `check ${name}= in DATABASE_URL or DIRECT_URL and that the user running eventops may read the file`,
    });
  };
  const ca = file('sslrootcert');
  const clientCertificate = { cert: file('sslcert'), key: file('sslkey') };
  for (const name of TLS_PARAMETERS) parsed.searchParams.delete(name);
  const connectionString = parsed.toString();
  const anyHostName = () => undefined;
  switch (mode) {
    case 'disable':
    case 'allow':
      return { connectionString, ssl: false };
    case 'prefer':
    case 'require':
      return {
        connectionString,
        ssl: ca ? { ...clientCertificate, ca, checkServerIdentity: anyHostName } : { ...clientCertificate, rejectUnauthorized: false },
      };
    case 'verify-ca':
      if (!ca) throw new Error('sslmode=verify-ca needs sslrootcert=<file of the CA certificate>');
      return { connectionString, ssl: { ...clientCertificate, ca, checkServerIdentity: anyHostName } };
    case 'verify-full':
      return { connectionString, ssl: { ...clientCertificate, ...(ca ? { ca } : {}) } };
    default:
      throw new Error(`sslmode=${mode} is not one of ${SSL_MODES.join(', ')}`);
  }
}
