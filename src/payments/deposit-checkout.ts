import type { EventRecord } from '../registrations/event-record.js';
import { depositFor, depositOffered, scheduleFor, type PaymentChoice } from '../registrations/balance-terms.js';
import type { Schedule } from '../registrations/deposits.js';
import { CARD_FEE_LINE_LABEL, cardSurcharge, type CardFeeRate, type PricedLine, type PricedRegistration } from '../registrations/pricing.js';

export const DEPOSIT_LINE_LABEL = 'Deposit';
export const PART_PAYMENT_LINE_LABEL = 'Payment towards the balance';

/** The first card payment of a registration paying in parts: its deposit, the card fee computed on it alone, and the schedule. */
export interface FirstCardPayment {
  /** The registration as priced, without a card fee: its total is fixed, and each payment carries its own fee. */
  priced: PricedRegistration;
  schedule: Schedule;
  netMinor: number;
  surchargeMinor: number;
  lines: PricedLine[];
}

/**
 * What a card registration choosing a deposit (or instalments) pays now; undefined when it pays its whole
 * total (chose so, the event takes no deposit, its total is at or below the deposit, or the balance is already due).
 */
export function firstCardPayment(
  event: Pick<EventRecord, 'balanceTerms' | 'passCardFee'>,
  choice: PaymentChoice | undefined,
  priced: PricedRegistration,
  input: { attendees: number; today: string; cardFee: CardFeeRate | undefined },
): FirstCardPayment | undefined {
  const schedule = scheduleChosen(event, choice, priced.net, input);
  if (!schedule) return undefined;
  const netMinor = depositFor(event.balanceTerms as NonNullable<EventRecord['balanceTerms']>, input.attendees, priced.net);
  const surchargeMinor = event.passCardFee && input.cardFee ? cardSurcharge(netMinor, input.cardFee) : 0;
  const withoutFee: PricedRegistration = { ...priced, lines: priced.lines.filter((line) => line.kind !== 'fee'), surcharge: 0, total: priced.net };
  return { priced: withoutFee, schedule, netMinor, surchargeMinor, lines: partPaymentLines(DEPOSIT_LINE_LABEL, netMinor, surchargeMinor) };
}

/** The schedule a registration (card or bank) takes with its choice, or none when it pays its whole total. */
export function scheduleChosen(
  event: Pick<EventRecord, 'balanceTerms'>,
  choice: PaymentChoice | undefined,
  netMinor: number,
  input: { attendees: number; today: string },
): Schedule | undefined {
  const terms = event.balanceTerms;
  if (choice === undefined || choice === 'full' || !depositOffered(terms, input.attendees, netMinor, input.today)) return undefined;
  const chosen = choice === 'instalments' && terms.instalments ? 'instalments' : 'deposit';
  return { choice: chosen, steps: scheduleFor(terms, chosen, { attendees: input.attendees, total: netMinor, today: input.today }) };
}

/** The provider's lines for a part payment: one line for the part, and its card fee. */
export function partPaymentLines(label: string, netMinor: number, surchargeMinor: number): PricedLine[] {
  const lines: PricedLine[] = [{ label, amount: netMinor, kind: 'registration' }];
  if (surchargeMinor > 0) lines.push({ label: CARD_FEE_LINE_LABEL, amount: surchargeMinor, kind: 'fee' });
  return lines;
}
