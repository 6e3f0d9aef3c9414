import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

/** Clock ticks per second of /proc/<pid>/stat's times: 100 on every Linux the bench runs on (USER_HZ). */
const TICKS_PER_SECOND = 100;

/** CPU time (user + system) a live process has used, from /proc; undefined when it is gone or not on Linux. */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name (which may hold spaces) in parentheses: utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** CPU time of the embedded PostgreSQL: its postmaster and every process it runs now (the backends of open connections). */
export function postgresCpuMs(dataDir: string): number | undefined {
  let postmaster: number;
  try {
    postmaster = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return undefined;
  }
  let total = processCpuMs(postmaster) ?? 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === postmaster) total += processCpuMs(Number(entry)) ?? 0;
    } catch {
      // The process ended while the list was read.
    }
  }
  return total;
}

export interface PageCpu {
  views: number;
  /** CPU milliseconds per page view: the server's process, and the database's (backends that stay open over the burst). */
  serverMs: number;
  databaseMs: number;
}

/**
 * CPU per page view, measured apart from the wall clock (which a busy machine stretches for both sides alike): `views`
 * GETs of `target`, `concurrency` at a time, with the server's and the database's CPU read before and after. The
 * database backends of the server's pool must be open already (the rush leaves them open).
 */
export async function measurePageCpu(input: { port: number; target: string; pid: number | undefined; dataDir: string; views: number; concurrency: number }): Promise<PageCpu | undefined> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: input.concurrency });
  const get = () =>
    new Promise<void>((resolve, reject) => {
      const request = http.get({ host: '127.0.0.1', port: input.port, path: input.target, agent }, (response) => {
        response.resume();
        response.on('end', () => (response.statusCode === 200 ? resolve() : reject(new Error(`page answered ${response.statusCode}`))));
      });
      request.on('error', reject);
    });
  try {
    for (let i = 0; i < input.concurrency; i++) await get();
    const serverBefore = processCpuMs(input.pid);
    const databaseBefore = postgresCpuMs(input.dataDir);
    let sent = 0;
    await Promise.all(
      Array.from({ length: input.concurrency }, async () => {
        while (sent < input.views) {
          sent += 1;
          await get();
        }
      }),
    );
    // The server counts a page view after answering it: let those writes land before reading the database's CPU.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const serverAfter = processCpuMs(input.pid);
    const databaseAfter = postgresCpuMs(input.dataDir);
    if (serverBefore === undefined || serverAfter === undefined || databaseBefore === undefined || databaseAfter === undefined) return undefined;
    return { views: input.views, serverMs: (serverAfter - serverBefore) / input.views, databaseMs: (databaseAfter - databaseBefore) / input.views };
  } finally {
    agent.destroy();
  }
}
