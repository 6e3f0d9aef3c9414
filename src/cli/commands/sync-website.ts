import type { Command } from 'commander';
import { z } from 'zod';
import { countPendingWebsiteSync, deliverWebsiteSync, type WebsiteSyncResult } from '../../office/website-sync.js';
import { AppError, EXIT } from '../../errors.js';
import { printResult, withContext } from '../io.js';
import { counted } from '../../plural.js';

const optionsSchema = z.object({ json: z.boolean().optional() });
const BATCH = 50;

export function registerSyncWebsiteCommand(program: Command): void {
  program
    .command('sync-website')
    .description('deliver the queued website notifications that are due (event create, update, publish, delete)')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      `
Example:
  $ eventops sync-website --json

Exit 0 when everything due was delivered, 1 when a delivery failed (it stays queued and is
retried with backoff: 1 min, 2, 4, … up to 1 h).`,
    )
    .action(async (rawOptions: unknown) => {
      const options = optionsSchema.parse(rawOptions);
      await withContext(async (ctx) => {
        if (!ctx.config.websiteSync) {
          const pending = await countPendingWebsiteSync(ctx.db);
          printResult(options, { enabled: false, delivered: 0, failed: 0, pending }, [
            'website sync is off (set WEBSITE_SYNC_URL and WEBSITE_SYNC_SECRET to turn it on)',
            ...(pending > 0 ? [`${counted(pending, 'notification', 'notifications')} queued from when it was on`] : []),
          ]);
          return;
        }
        const total: WebsiteSyncResult = { enabled: true, delivered: 0, failed: 0, pending: 0, failures: [] };
        // Batch after batch until nothing due is left or the receiver fails (each run stops at its first failure).
        for (;;) {
          const batch = await deliverWebsiteSync(ctx, { limit: BATCH });
          total.delivered += batch.delivered;
          total.failed += batch.failed;
          total.failures.push(...batch.failures);
          total.pending = batch.pending;
          if (batch.failed > 0 || batch.delivered === 0 || batch.pending === 0) break;
        }
        printResult(options, total, [
          `delivered: ${total.delivered}, failed: ${total.failed}, still pending: ${total.pending}`,
          ...total.failures.map(
            (f) => `  failed ${f.type} ${f.id} (attempt ${f.attempts}): ${f.error}; next try ${f.nextAttemptAt.toISOString()}`,
          ),
        ]);
        if (total.failed > 0) {
          throw new AppError('website_sync_failed', `${counted(total.failed, 'website notification', 'website notifications')} could not be delivered; they stay queued`, {
            exitCode: EXIT.failure,
            suggestion: 'check that WEBSITE_SYNC_URL is reachable; the next run retries them',
          });
        }
      });
    });
}
