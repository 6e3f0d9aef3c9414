import fs from 'node:fs';
import type { ConnectionOptions } from 'node:tls';

/** The sslmode values libpq knows. */
export const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;

/** Query parameters we turn into TLS options ourselves; pg must not see them (it would apply its own meaning). */
const TLS_PARAMETERS = ['sslmode', 'sslrootcert', 'sslcert', 'sslkey', 'uselibpqcompat'];

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
  const file = (name: string): string | undefined => {
    const value = parsed.searchParams.get(name);
    return value ? fs.readFileSync(value, 'utf8') : undefined;
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
