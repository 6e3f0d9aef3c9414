import type { Db } from './connect.js';

export type LeaseResult =
  | { acquired: true; expiresAt: Date }
  | { acquired: false; holder: string; acquiredAt: Date; expiresAt: Date };

/**
 * Takes the named lease in one statement: inserted when free, taken over when
 * expired (a crashed holder), refused while another holder's lease is live.
 */
export async function takeLease(
  db: Db,
  lease: { name: string; holder: string; now: Date; ttlMs: number },
): Promise<LeaseResult> {
  const expiresAt = new Date(lease.now.getTime() + lease.ttlMs);
  const taken = await db.raw<{ rows: Array<{ expires_at: Date }> }>(
    `INSERT INTO leases (name, holder, acquired_at, expires_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (name) DO UPDATE
       SET holder = EXCLUDED.holder, acquired_at = EXCLUDED.acquired_at, expires_at = EXCLUDED.expires_at
       WHERE leases.expires_at <= EXCLUDED.acquired_at OR leases.holder = EXCLUDED.holder
     RETURNING expires_at`,
    [lease.name, lease.holder, lease.now, expiresAt],
  );
  if (taken.rows.length > 0) return { acquired: true, expiresAt };
  const current = await db('leases').where({ name: lease.name }).first<{ holder: string; acquired_at: Date; expires_at: Date }>();
  if (!current) return takeLease(db, lease); // released between the two statements
  return { acquired: false, holder: current.holder, acquiredAt: current.acquired_at, expiresAt: current.expires_at };
}

/** Extends a lease this holder still owns; false when it was lost (expired and taken). */
export async function renewLease(
  db: Db,
  lease: { name: string; holder: string; now: Date; ttlMs: number },
): Promise<boolean> {
  const updated = await db('leases')
    .where({ name: lease.name, holder: lease.holder })
    .update({ expires_at: new Date(lease.now.getTime() + lease.ttlMs) });
  return updated === 1;
}

export async function releaseLease(db: Db, lease: { name: string; holder: string }): Promise<void> {
  await db('leases').where({ name: lease.name, holder: lease.holder }).delete();
}
