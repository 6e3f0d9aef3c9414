import type { HistoryEntry } from '../../registrations/history.js';
import { counted } from '../../plural.js';

type Money = (minor: number) => string;
type Minute = (date: Date) => string;

const METHOD_WORDS: Record<string, string> = { bank: 'bank transfer', cash: 'cash', card: 'card', other: 'another way', free: 'nothing to pay' };
const ACTION_WORDS: Partial<Record<string, string>> = { sensitive_exported: 'sensitive answers exported', sensitive_purged: 'sensitive answers purged' };
const SENT_WORDS: Record<string, string> = { receipt: 'the receipt', confirmation: 'the confirmation' };

/**
 * One history entry as `registrations show` writes it: what was done and by whom, then what changed in a
 * sentence ("2 seats freed; the registrant was not notified"), the note last. The JSON form keeps the raw changes.
 */
export function describeHistoryEntry(entry: HistoryEntry, money: Money, minute: Minute): string {
  const what = ACTION_WORDS[entry.action] ?? entry.action.replace(/_/g, ' ');
  const said = changesInWords(entry, money, minute);
  return `${minute(entry.at)} ${what} by ${entry.actor}${said ? `: ${said}` : ''}${entry.note ? ` (note: ${entry.note})` : ''}`;
}

function changesInWords(entry: HistoryEntry, money: Money, minute: Minute): string {
  const c = entry.changes;
  const num = (key: string) => (typeof c[key] === 'number' ? (c[key] as number) : undefined);
  const str = (key: string) => (typeof c[key] === 'string' ? (c[key] as string) : undefined);
  const statusChange = statusWords(c.status);
  const method = str('method');
  const by = method ? ` by ${METHOD_WORDS[method] ?? method}` : '';
  switch (entry.action) {
    case 'registered':
      return sentence([
        str('status'),
        method ? (method === 'free' ? 'nothing to pay' : `${str('status') === 'PAID' ? 'paid' : 'to pay'} by ${METHOD_WORDS[method] ?? method}`) : undefined,
        num('attendees') !== undefined ? counted(num('attendees') as number, 'attendee', 'attendees') : undefined,
        num('totalMinor') !== undefined ? `total ${money(num('totalMinor') as number)}` : undefined,
        num('overCapacityBy') !== undefined ? `${num('overCapacityBy')} over the event's capacity` : undefined,
        num('resolvedAlert') !== undefined ? `answering alert #${num('resolvedAlert')}` : undefined,
      ]);
    case 'payment_recorded':
    case 'marked_paid': {
      const amount = num('amountMinor');
      const paid = num('paidMinor');
      const balance = num('balanceMinor');
      return sentence([
        amount !== undefined ? `${money(amount)} received${by}` : undefined,
        paid !== undefined ? (balance === 0 ? `${money(paid)} paid in full` : `${money(paid)} paid so far`) : undefined,
        balance !== undefined && balance > 0 ? `balance ${money(balance)}` : undefined,
        statusChange,
        c.again === true ? 'recorded although the same payment was recorded in the last 24 hours' : undefined,
      ]);
    }
    case 'credit_recorded':
    case 'credit_reversed': {
      const amount = num('amountMinor');
      const balance = num('balanceMinor');
      return sentence([
        amount !== undefined ? `${money(amount)} ${entry.action === 'credit_recorded' ? 'help from' : 'help taken back to'} ${str('fund') ?? 'a fund'} (credit #${num('creditId') ?? '?'})` : undefined,
        balance !== undefined ? `balance ${money(balance)}` : undefined,
        statusChange,
        c.again === true ? 'recorded although the same credit was recorded in the last 24 hours' : undefined,
      ]);
    }
    case 'cancelled':
    case 'hold_released': {
      const seats = num('seatsFreed');
      const parts = [statusChange, seats !== undefined ? `${counted(seats, 'seat', 'seats')} freed` : undefined];
      const notified = typeof c.notified === 'boolean' ? (c.notified ? 'the registrant was notified' : 'the registrant was not notified') : undefined;
      return [sentence(parts), notified].filter(Boolean).join('; ');
    }
    case 'resent':
      return str('sent') ? `${SENT_WORDS[str('sent') as string] ?? str('sent')} sent again` : '';
    case 'contact_updated':
      return Array.isArray(c.fields) ? `changed ${c.fields.map(String).join(' and ')}` : '';
    case 'hold_reminder':
      return str('releaseAt') ? `reminded that the hold is released on ${minute(new Date(str('releaseAt') as string))}` : '';
    case 'refund_recorded': {
      const amount = num('amountMinor');
      const held = num('heldMinor');
      return sentence([amount !== undefined ? `${money(amount)} paid back${by}` : undefined, held !== undefined ? `${money(held)} still held` : undefined]);
    }
    case 'extras_added': {
      const added = num('addedMinor');
      const total = c.totalMinor as { from?: unknown; to?: unknown } | undefined;
      const recorded = num('cardPaymentRecordedMinor');
      const balance = num('balanceMinor');
      return sentence([
        Array.isArray(c.extras) ? `${c.extras.map(String).join(', ')}${added !== undefined ? ` (${money(added)})` : ''}` : undefined,
        typeof total?.from === 'number' && typeof total.to === 'number' ? `total ${money(total.from)} → ${money(total.to)}` : undefined,
        statusChange,
        recorded !== undefined ? `the card payment of ${money(recorded)} kept as a ledger row` : undefined,
        balance !== undefined ? `balance ${money(balance)}` : undefined,
      ]);
    }
    case 'sensitive_exported':
    case 'sensitive_purged':
      return sensitiveAnswersInWords(entry);
    default:
      return describeChanges(c, money, minute);
  }
}

/** "for the camp nurse's list (Allergies, Date of birth; 2 attendee rows)"; "plain answers kept". */
function sensitiveAnswersInWords(entry: HistoryEntry): string {
  const c = entry.changes;
  if (entry.action === 'sensitive_purged') {
    const days = typeof c.retentionDays === 'number' ? counted(c.retentionDays, 'day', 'days') : undefined;
    return sentence([days ? `${days} after the event ended` : undefined, 'the other answers kept']);
  }
  const columns = Array.isArray(c.columns) ? c.columns.map(String).join(', ') : undefined;
  const rows = typeof c.rows === 'number' ? counted(c.rows, 'attendee row', 'attendee rows') : undefined;
  const detail = [columns, rows].filter(Boolean).join('; ');
  return `${typeof c.reason === 'string' ? `because “${c.reason}”` : 'no reason given'}${detail ? ` (${detail})` : ''}`;
}

function statusWords(status: unknown): string | undefined {
  if (status === null || typeof status !== 'object' || !('to' in status)) return undefined;
  const change = status as { from?: unknown; to: unknown };
  return `${String(change.from ?? 'none')} → ${String(change.to)}`;
}

const sentence = (parts: Array<string | undefined>) => parts.filter((part): part is string => Boolean(part)).join(', ');

/**
 * Changes no sentence above is written for, in words: amounts (keys ending in Minor) as money, a change as
 * "from → to", an instant in the church's time zone, a flag as its name ("not …" when false).
 */
export function describeChanges(changes: Record<string, unknown>, money: Money, minute: Minute): string {
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
  return Object.entries(changes)
    .map(([key, v]) => (v === true ? words(key) : v === false ? `not ${words(key)}` : `${words(key)} ${value(key, v)}`))
    .join(', ');
}
