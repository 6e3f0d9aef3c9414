import type { Command } from 'commander';
import type { CardPaymentFromAlert } from '../../../office/registrations/card-payment-from-alert.js';
import type { RegistrationDetail } from '../../../office/registrations/show.js';
import type { HistoryEntry } from '../../../registrations/history.js';
import { printResult, withContext } from '../../io.js';
import { REGISTRATION_ARGUMENT } from './shared.js';
import { checkinLines } from '../../../door/show-lines.js';

export function registerShowCommand(registrations: Command): void {
  registrations
    .command('show')
    .description('everything about one registration: contact, attendees, answers, price lines, payments, emails, alerts and the history of changes')
    .argument('<id-or-reference>', REGISTRATION_ARGUMENT)
    .option('--sensitive', 'also show the sensitive answers (medical, allergies, date of birth); without it they are counted, not shown')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  $ eventops registrations show 3F2A9C1B\n  $ eventops registrations show 3F2A9C1B --sensitive\n\nExit 1 when no registration (or several) match, 2 for fewer than 8 characters.',
    )
    .action(async (given: string, options: { json?: boolean; sensitive?: boolean }) => {
      await withContext(async (ctx) => {
        const { showRegistration } = await import('../../../office/registrations/show.js');
        const { moneyFormatter } = await import('../../../office/registrations/money.js');
        const { localMinute } = await import('../../../local-time.js');
        const { methodShown } = await import('../../../registrations/paid-by.js');
        const { describeHistoryEntry } = await import('../../../office/registrations/history-words.js');
        const { answersLines } = await import('../../../office/registrations/answers-view.js');
        const { localDay } = await import('../../../local-time.js');
        const detail = await showRegistration(ctx, given, { sensitive: options.sensitive });
        const minute = (date: Date) => localMinute(date, ctx.config.regional.timeZone);
        const words: Words = {
          money: moneyFormatter(ctx.config.regional),
          minute,
          method: methodShown(detail.method, detail.officePaidBy, ctx.config.regional),
          history: (entry) => describeHistoryEntry(entry, moneyFormatter(ctx.config.regional), minute),
          answers: answersLines(detail.answers, minute, (date) => localDay(date, ctx.config.regional.timeZone)),
        };
        printResult(options, { registration: detail }, describe(detail, words));
      });
    });
}

interface Words {
  money: (minor: number) => string;
  minute: (date: Date) => string;
  /** The method, or every method the office received money by with its amount. */
  method: string;
  history: (entry: HistoryEntry) => string;
  /** The "Answers:" block, already in words (answers-view.ts). */
  answers: string[];
}

function describe(r: RegistrationDetail, { money, minute, method, history, answers }: Words): string[] {
  const lines = [
    `Registration ${r.reference} (${r.id})`,
    `  event:    ${r.event.title} (${r.event.slug}), ${minute(r.event.startsAt)}`,
    `  status:   ${r.status}${r.cancelledAt ? ` since ${minute(r.cancelledAt)} (${r.cancelReason ?? 'no reason'})` : ''}${r.paidAt ? `, paid ${minute(r.paidAt)}` : ''}`,
    `  method:   ${method}`,
    `  contact:  ${r.contact.name} <${r.contact.email}>${r.contact.mobile ? `, ${r.contact.mobile}` : ''}`,
    `  created:  ${minute(r.createdAt)}${r.family ? ', one household' : ''}`,
    'Attendees:',
    ...r.attendees.map((a) => `  ${a.name} (${a.tierLabel})`),
    ...(r.addons.length > 0 ? ['Add-ons:', ...r.addons.map((a) => `  ${a.attendee ?? 'registration'}: ${a.label} ${money(a.priceMinor)}`)] : []),
    ...answers,
    `Price:${r.pricedOn ? ` (the prices of ${r.pricedOn}, fixed when it was made)` : ''}`,
    ...r.lines.map((line) => `  ${line.label}: ${money(line.amount)}`),
    ...(r.code ? [`  code ${r.code.code}: took off ${money(r.code.discountMinor)}`] : []),
    `  total ${money(r.totalMinor)}, paid ${money(r.paidMinor)}${r.creditedMinor !== 0 ? `, help ${money(r.creditedMinor)}` : ''}${r.balanceMinor > 0 ? `, balance ${money(r.balanceMinor)}` : ''}`,
    'Payments:',
    ...(r.cardPayments.length + r.officePayments.length === 0 && !r.cardPaymentFromAlert && !r.cardPaymentOfRecord ? ['  none'] : []),
    ...r.cardPayments.map(
      (c) => `  card ${c.status} ${money(c.amountMinor)} started ${minute(c.createdAt)}${c.completedAt ? `, completed ${minute(c.completedAt)}` : ''} ${c.paymentIntentId ?? c.providerSessionId ?? ''}`.trimEnd(),
    ),
    ...(r.cardPaymentFromAlert ? [cardPaymentFromAlertLine(r.cardPaymentFromAlert, money, minute)] : []),
    ...(r.cardPaymentOfRecord
      ? [`  card ${money(r.cardPaymentOfRecord.amountMinor)} paid ${minute(r.cardPaymentOfRecord.paidAt)} ${r.cardPaymentOfRecord.paymentIntentId ?? ''}`.trimEnd()]
      : []),
    ...r.officePayments.map((p) => `  ${p.method} ${money(p.amountMinor)} recorded ${minute(p.recordedAt)} by ${p.recordedBy}${p.note ? `: ${p.note}` : ''}`),
    ...(r.helpRequest
      ? [
          r.helpRequest.state === 'open'
            ? `Help with the cost: asked on the form ${minute(r.helpRequest.requestedAt)}; OPEN: held without the unpaid-hold release until the office decides (credit, mark-paid, or registrations help --decided)`
            : `Help with the cost: asked on the form ${minute(r.helpRequest.requestedAt)}; decided${r.helpRequest.decidedAt ? ` ${minute(r.helpRequest.decidedAt)} by ${r.helpRequest.decidedBy ?? '?'}` : ''}`,
        ]
      : []),
    ...(r.credits.length > 0 ? ['Help with the cost:', ...r.credits.map((c) => creditLine(c, money, minute))] : []),
    ...(r.refundedMinor > 0 ? [`  paid back by hand: ${money(r.refundedMinor)} (see "refund recorded" in the history)`] : []),
    'Emails:',
    ...(r.emails.length === 0 ? ['  none'] : r.emails.map((m) => `  ${minute(m.queuedAt)} ${m.kind} ${m.status}${m.subject ? `: ${m.subject}` : ''}`)),
    'Alerts:',
    ...(r.alerts.length === 0
      ? ['  none']
      : r.alerts.map((a) => `  #${a.id} ${a.kind} ${a.resolvedAt ? `resolved${a.resolution ? `: ${a.resolution}` : ''}` : 'open'}\n    ${a.reason}`)),
    ...checkinLines(r, minute),
    'History:',
    ...(r.history.length === 0 ? ['  none'] : r.history.map((h) => `  ${history(h)}`)),
  ];
  return lines;
}

function creditLine(c: RegistrationDetail['credits'][number], money: (minor: number) => string, minute: (date: Date) => string): string {
  const what =
    c.kind === 'credit'
      ? `  credit #${c.id} ${money(c.amountMinor)} from ${c.fund}${c.reversedBy !== null ? ` (reversed by #${c.reversedBy})` : ''}`
      : `  reversal #${c.id} of credit #${c.reversesId} −${money(c.amountMinor)} to ${c.fund}`;
  return `${what} recorded ${minute(c.recordedAt)} by ${c.recordedBy}${c.note ? `: ${c.note}` : ''}`;
}

function cardPaymentFromAlertLine(c: CardPaymentFromAlert, money: (minor: number) => string, minute: (date: Date) => string): string {
  return `  card ${money(c.amountMinor)} received ${minute(c.receivedAt)} (alert #${c.alertId}), recorded ${minute(c.recordedAt)} ${c.providerReference}`;
}
