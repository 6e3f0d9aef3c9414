import type { Command } from 'commander';
import type { CardPaymentFromAlert } from '../../../admin/registrations/card-payment-from-alert.js';
import type { RegistrationDetail } from '../../../admin/registrations/show.js';
import { printResult, withContext } from '../../io.js';
import { REGISTRATION_ARGUMENT } from './shared.js';

export function registerShowCommand(registrations: Command): void {
  registrations
    .command('show')
    .description('everything about one registration: contact, attendees, price lines, payments, emails, alerts and the history of changes')
    .argument('<id-or-reference>', REGISTRATION_ARGUMENT)
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExample:\n  $ eventops registrations show 3F2A9C1B\n\nExit 1 when no registration (or several) match, 2 for fewer than 8 characters.')
    .action(async (given: string, options: { json?: boolean }) => {
      await withContext(async (ctx) => {
        const { showRegistration } = await import('../../../admin/registrations/show.js');
        const { moneyFormatter } = await import('../../../admin/registrations/money.js');
        const { localMinute } = await import('../../../local-time.js');
        const detail = await showRegistration(ctx, given);
        const minute = (date: Date) => localMinute(date, ctx.config.regional.timeZone);
        printResult(options, { registration: detail }, describe(detail, moneyFormatter(ctx.config.regional), minute));
      });
    });
}

function describe(r: RegistrationDetail, money: (minor: number) => string, minute: (date: Date) => string): string[] {
  const lines = [
    `Registration ${r.reference} (${r.id})`,
    `  event:    ${r.event.title} (${r.event.slug}), ${minute(r.event.startsAt)}`,
    `  status:   ${r.status}${r.cancelledAt ? ` since ${minute(r.cancelledAt)} (${r.cancelReason ?? 'no reason'})` : ''}${r.paidAt ? `, paid ${minute(r.paidAt)}` : ''}`,
    `  method:   ${r.method}`,
    `  contact:  ${r.contact.name} <${r.contact.email}>${r.contact.mobile ? `, ${r.contact.mobile}` : ''}`,
    `  created:  ${minute(r.createdAt)}${r.family ? ', one household' : ''}`,
    'Attendees:',
    ...r.attendees.map((a) => `  ${a.name} (${a.tierLabel})`),
    'Price:',
    ...r.lines.map((line) => `  ${line.label}: ${money(line.amount)}`),
    `  total ${money(r.totalMinor)}, paid ${money(r.paidMinor)}${r.balanceMinor > 0 ? `, balance ${money(r.balanceMinor)}` : ''}`,
    'Payments:',
    ...(r.cardPayments.length + r.officePayments.length === 0 && !r.cardPaymentFromAlert ? ['  none'] : []),
    ...r.cardPayments.map(
      (c) => `  card ${c.status} ${money(c.amountMinor)} started ${minute(c.createdAt)}${c.completedAt ? `, completed ${minute(c.completedAt)}` : ''} ${c.paymentIntentId ?? c.providerSessionId ?? ''}`.trimEnd(),
    ),
    ...(r.cardPaymentFromAlert ? [cardPaymentFromAlertLine(r.cardPaymentFromAlert, money, minute)] : []),
    ...r.officePayments.map((p) => `  ${p.method} ${money(p.amountMinor)} recorded ${minute(p.recordedAt)} by ${p.recordedBy}${p.note ? `: ${p.note}` : ''}`),
    ...(r.refundedMinor > 0 ? [`  paid back by hand: ${money(r.refundedMinor)} (refund_recorded in the history)`] : []),
    'Emails:',
    ...(r.emails.length === 0 ? ['  none'] : r.emails.map((m) => `  ${minute(m.queuedAt)} ${m.kind} ${m.status}${m.subject ? `: ${m.subject}` : ''}`)),
    'Alerts:',
    ...(r.alerts.length === 0
      ? ['  none']
      : r.alerts.map((a) => `  #${a.id} ${a.kind} ${a.resolvedAt ? `resolved${a.resolution ? `: ${a.resolution}` : ''}` : 'open'}\n    ${a.reason}`)),
    'History:',
    ...(r.history.length === 0
      ? ['  none']
      : r.history.map((h) => `  ${minute(h.at)} ${h.action} by ${h.actor}${describeChanges(h.changes, money, minute)}${h.note ? ` (note: ${h.note})` : ''}`)),
  ];
  return lines;
}

/**
 * A history entry's changes in words: amounts (keys ending in Minor) as money, a change as "from → to",
 * an instant in the church's time zone; "amountMinor: 27000" read as cents to nobody.
 */
export function describeChanges(changes: Record<string, unknown>, money: (minor: number) => string, minute: (date: Date) => string): string {
  const words = (key: string) => key.replace(/Minor$/, '').replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  const value = (key: string, v: unknown): string => {
    if (typeof v === 'number' && key.endsWith('Minor')) return money(v);
    if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/.test(v)) return minute(new Date(v));
    if (Array.isArray(v)) return v.map(String).join(', ');
    if (v !== null && typeof v === 'object' && 'to' in v) {
      const change = v as { from?: unknown; to: unknown };
      return `${value(key, change.from ?? 'none')} → ${value(key, change.to)}`;
    }
    return typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v);
  };
  const parts = Object.entries(changes).map(([key, v]) => (v === true ? words(key) : `${words(key)} ${value(key, v)}`));
  return parts.length === 0 ? '' : `: ${parts.join(', ')}`;
}

function cardPaymentFromAlertLine(c: CardPaymentFromAlert, money: (minor: number) => string, minute: (date: Date) => string): string {
  return `  card ${money(c.amountMinor)} received ${minute(c.receivedAt)} (alert #${c.alertId}), recorded ${minute(c.recordedAt)} ${c.providerReference}`;
}
