import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { connectDb } from '../../src/db/connect.js';
import { AppError } from '../../src/errors.js';
import { startEmbeddedServer, type EmbeddedServer } from '../../src/db/embedded.js';
import { runCli } from '../support/cli.js';
import { testEnv } from '../support/env.js';

/**
 * A PostgreSQL with TLS on: the embedded server with ssl=on and a certificate
 * issued by a private CA for the host name db.internal (so connecting to
 * 127.0.0.1 is a host-name mismatch), plus an unrelated CA.
 */
let server: EmbeddedServer;
let dir: string;
const file = (name: string) => path.join(dir, name);
const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

function makeCertificates(): void {
  for (const ca of ['ca', 'other-ca']) {
    openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=eventops test ${ca}`, '-keyout', `${ca}.key`, '-out', `${ca}.crt`);
  }
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=db.internal', '-keyout', 'server.key', '-out', 'server.csr');
  fs.writeFileSync(file('san.ext'), 'subjectAltName=DNS:db.internal\n');
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', 'san.ext', '-out', 'server.crt');
  fs.chmodSync(file('server.key'), 0o600);
  // As root the embedded server runs as "postgres": its key must belong to that user.
  if (os.userInfo().uid === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    fs.chownSync(file('server.key'), uid, gid);
  }
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-tls-'));
  fs.chmodSync(dir, 0o755);
  makeCertificates();
  server = await startEmbeddedServer({
    dataDir: path.join(dir, 'pg', 'data'),
    persistent: false,
    postgresFlags: ['-c', 'ssl=on', '-c', `ssl_cert_file=${file('server.crt')}`, '-c', `ssl_key_file=${file('server.key')}`],
  });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const urlWith = (query: string) => `${server.adminUrl}?${query}`;

/** Whether this connection is encrypted, as the server sees it. */
async function encrypted(query: string): Promise<boolean> {
  const db = connectDb({ url: urlWith(query), poolMax: 1 });
  try {
    const result = await db.raw<{ rows: Array<{ ssl: boolean }> }>('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
    return result.rows[0]?.ssl ?? false;
  } finally {
    await db.destroy();
  }
}

describe('?sslmode= follows libpq', () => {
  it('require: encrypted, the certificate not verified (a private CA is fine), and no SECURITY WARNING', async () => {
    const warnings = vi.spyOn(process, 'emitWarning');
    try {
      expect(await encrypted('sslmode=require')).toBe(true);
      expect(await encrypted('sslmode=prefer')).toBe(true);
      expect(warnings.mock.calls.map((call) => String(call[0]))).toEqual([]);
    } finally {
      warnings.mockRestore();
    }
  });

  it('disable: not encrypted', async () => {
    expect(await encrypted('sslmode=disable')).toBe(false);
  });

  it('verify-ca: the chain is verified against sslrootcert, the host name is not', async () => {
    expect(await encrypted(`sslmode=verify-ca&sslrootcert=${file('ca.crt')}`)).toBe(true);
    await expect(encrypted(`sslmode=verify-ca&sslrootcert=${file('other-ca.crt')}`)).rejects.toThrow(/certificate/i);
  });

  it('verify-full: the chain and the host name are verified', async () => {
    // The certificate names db.internal, not 127.0.0.1.
    await expect(encrypted(`sslmode=verify-full&sslrootcert=${file('ca.crt')}`)).rejects.toThrow(/db\.internal|altnames|host/i);
    await expect(encrypted(`sslmode=verify-full&sslrootcert=${file('other-ca.crt')}`)).rejects.toThrow(/certificate/i);
  });

  it('require with sslrootcert is verified against it, as libpq does', async () => {
    expect(await encrypted(`sslmode=require&sslrootcert=${file('ca.crt')}`)).toBe(true);
    await expect(encrypted(`sslmode=require&sslrootcert=${file('other-ca.crt')}`)).rejects.toThrow(/certificate/i);
  });

  it('a command on DATABASE_URL ?sslmode=require connects and prints no warning into the cron log', async () => {
    const result = await runCli(['migrate', 'status', '--json'], { env: testEnv({ DATABASE_URL: urlWith('sslmode=require') }) });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toHaveProperty('pending');
  });

  it('a TLS file gone by the time of connecting is an error naming the parameter, the file and the reason, exit 78', () => {
    const connect = () => connectDb({ url: urlWith('sslmode=verify-ca&sslrootcert=/nonexistent/ca.crt'), poolMax: 1 });
    expect(connect).toThrow(AppError);
    expect(connect).toThrow('cannot read the sslrootcert file /nonexistent/ca.crt named in the database URL (ENOENT)');
    expect(() => connect()).toThrow(expect.objectContaining({ exitCode: 78 }));
  });

  it('config check refuses an unknown sslmode and verify-ca without sslrootcert, naming the variable', async () => {
    for (const query of ['sslmode=required', 'sslmode=verify-ca']) {
      const result = await runCli(['config', 'check'], { env: testEnv({ DATABASE_URL: `postgres://u:p@db.example.org/church?${query}` }) });
      expect(result.code).toBe(78);
      expect(result.stderr).toContain('DATABASE_URL');
    }
  });
});
