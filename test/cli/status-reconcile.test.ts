import { describe, expect, it } from 'vitest';
import { reconcileOverdue } from '../../src/cli/commands/status.js';
import type { OperationsStatus } from '../../src/jobs/status.js';

const statusWith = (reconcileAgeSeconds?: number): OperationsStatus => ({
  jobs: [
    {
      job: 'reconcile',
      ...(reconcileAgeSeconds === undefined
        ? {}
        : { lastRun: { id: 1, trigger: 'cli', startedAt: '2026-11-25T00:00:00.000Z', outcome: 'ok', ageSeconds: reconcileAgeSeconds } }),
    },
  ],
  openAlerts: 0,
  pendingWebsiteSync: 0,
  pendingMail: 0,
  failedMail: 0,
  errorsLastWeek: 0,
});

describe('status warns when card payments run without reconcile', () => {
  it('with card payments on and cron running the jobs, a reconcile never run or not run for over 3 hours is named, with what to do', () => {
    const cron = { cardPayments: true, inAppScheduler: false };
    expect(reconcileOverdue(statusWith(), cron)).toBe(
      'warning: card payments are on and reconcile has never run: a payment whose webhook was lost is not registered until it runs (enable its hourly line in the crontab)',
    );
    expect(reconcileOverdue(statusWith(5 * 3600), cron)).toContain('reconcile has not run since 5h ago');
    expect(reconcileOverdue(statusWith(45 * 60), cron)).toBeUndefined();
  });

  it('says nothing without card payments, or when the in-app scheduler runs reconcile', () => {
    expect(reconcileOverdue(statusWith(), { cardPayments: false, inAppScheduler: false })).toBeUndefined();
    expect(reconcileOverdue(statusWith(), { cardPayments: true, inAppScheduler: true })).toBeUndefined();
  });
});
