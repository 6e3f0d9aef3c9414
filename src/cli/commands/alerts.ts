import type { Command } from 'commander';
import { z } from 'zod';
import type { AlertParties } from '../../payments/alert-parties.js';
import type { OperationsAlert } from '../../payments/alerts.js';
import { printResult, withContext } from '../io.js';
import { parseOrUsage } from '../usage.js';

const listOptionsSchema = z.object({ all: z.boolean().optional(), json: z.boolean().optional() });
const resolveSchema = z.object({
  id: z.coerce.number({ error: 'must be a number' }).int({ error: 'must be a whole number' }).positive({ error: 'must be positive' }),
  note: z.string().trim().min(1, { error: 'must not be empty' }).max(2000, { error: 'at most 2000 characters' }).optional(),
  json: z.boolean().optional(),
});

export function registerAlertsCommands(program: Command): void {
  const alerts = program
    .command('alerts')
    .description('operations alerts: payments kept without a registration, partial refunds and other cases for a person');
  alerts
    .command('list')
    .description('list open alerts (oldest first), or every alert with --all: when, kind, amount, the registration and payer, the card payment, and what happened')
    .option('--all', 'include resolved alerts')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExamples:\n  $ eventops alerts list\n  $ eventops alerts list --all --json')
    .action(async (raw: unknown) => {
      const options = parseOrUsage(listOptionsSchema, raw, 'alerts list');
      await withContext(async (ctx) => {
        const { listOperationsAlerts } = await import('../../payments/alerts.js');
        const { localDay, localMinute } = await import('../../local-time.js');
        const { moneyFormatter } = await import('../../office/registrations/money.js');
        const { alertParties } = await import('../../payments/alert-parties.js');
        const alerts = await listOperationsAlerts(ctx.db, { all: options.all });
        const parties = await alertParties(ctx, alerts);
        const found = alerts.map((alert) => ({ ...alert, ...(parties.get(alert.id) ?? { reference: null, payerName: null }) }));
        const money = moneyFormatter(ctx.config.regional);
        const { timeZone } = ctx.config.regional;
        const when = { day: (date: Date) => localDay(date, timeZone), minute: (date: Date) => localMinute(date, timeZone) };
        const empty = options.all ? 'no alerts yet' : 'no open alerts';
        printResult(options, { alerts: found }, found.length === 0 ? empty : found.map((alert) => describeAlert(alert, money, when)));
      });
    });
  alerts
    .command('resolve')
    .description('mark an alert handled, with a note of what was done')
    .argument('<id>', 'alert id, as shown by `eventops alerts list`')
    .option('--note <text>', 'what was done, e.g. "refunded by hand in the dashboard" or "registered manually"')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExample:\n  $ eventops alerts resolve 12 --note "added to the waiting list; payer agreed by phone"\n\nExit 1 when the alert does not exist or is already resolved, 2 for an invalid id.',
    )
    .action(async (id: string, raw: Record<string, unknown>) => {
      const options = parseOrUsage(resolveSchema, { ...raw, id }, 'alerts resolve', ['id']);
      await withContext(async (ctx) => {
        const { resolveOperationsAlert } = await import('../../payments/alerts.js');
        const resolved = await resolveOperationsAlert(ctx.db, options.id, options.note, ctx.clock.now(), ctx.config.regional.timeZone);
        printResult(options, { alert: resolved }, `resolved alert ${resolved.id} (${resolved.kind})`);
      });
    });
}

/** Times in APP_TIMEZONE: `when` formats them. */
function describeAlert(
  alert: OperationsAlert & AlertParties,
  money: (minor: number) => string,
  when: { day: (date: Date) => string; minute: (date: Date) => string },
): string {
  const parts = [
    `#${alert.id}`,
    when.minute(alert.createdAt),
    alert.kind,
    alert.amountMinor === null ? undefined : money(alert.amountMinor),
    alert.reference === null ? undefined : `registration ${alert.reference}`,
    alert.payerName === null ? undefined : `payer ${alert.payerName}`,
    alert.paymentIntentId ?? alert.providerSessionId ?? undefined,
    alert.resolvedAt ? `resolved ${when.day(alert.resolvedAt)}${alert.resolution ? `: ${alert.resolution}` : ''}` : undefined,
  ].filter((part): part is string => part !== undefined);
  return `${parts.join('  ')}\n    ${alert.reason}`;
}
