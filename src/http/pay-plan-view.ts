import type { BalanceTerms } from '../registrations/balance-terms.js';
import type { LiveTotalConfig } from './live-total-config.js';

/** The event page's pay-plan choice, offered only on an event that takes a deposit (its balance terms). */
export interface PayPlanOption {
  value: 'full' | 'deposit' | 'instalments';
  label: string;
  hint: string;
  checked: boolean;
}

export function payPlanOptions(
  terms: BalanceTerms | null,
  chosen: string | undefined,
  dueDay: (day: string) => string,
  money: (minor: number) => string,
): PayPlanOption[] | undefined {
  if (!terms) return undefined;
  const each = 'perAttendee' in terms.deposit ? `${money(terms.deposit.perAttendee)} a person` : `${money(terms.deposit.perRegistration)} a registration`;
  const options: PayPlanOption[] = [
    { value: 'full', label: 'The whole amount now', hint: 'Nothing more to pay later.', checked: false },
    { value: 'deposit', label: 'A deposit now', hint: `${each}; the balance by ${dueDay(terms.balanceDueAt)}.`, checked: false },
  ];
  if (terms.instalments) {
    options.push({ value: 'instalments', label: 'A deposit, then instalments', hint: `${each}, then ${terms.instalments.count} payments up to ${dueDay(terms.balanceDueAt)}.`, checked: false });
  }
  const selected = options.find((option) => option.value === chosen) ?? options[0];
  return options.map((option) => ({ ...option, checked: option === selected }));
}

/** What the page's script needs to say what is due now under each plan. */
export function depositConfig(terms: BalanceTerms | null): LiveTotalConfig['deposit'] {
  if (!terms) return undefined;
  return { ...terms.deposit, balanceDueAt: terms.balanceDueAt, ...(terms.instalments ? { instalments: terms.instalments.count } : {}) };
}
