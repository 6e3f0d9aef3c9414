/**
 * The least the card provider charges in one payment, per currency, in integer minor units as the
 * prices here count them (Intl's decimals, which for every currency below are the provider's too):
 * the provider refuses a Checkout Session whose total is lower (400 `amount_too_small`).
 * From the provider's "Minimum and maximum charge amounts" table (docs.stripe.com/currencies).
 * HUF is left out: card payments refuse it at start (card-currencies.ts).
 * A currency not listed gets no check here; the provider's own answer still maps to the same
 * refusal (openProviderSession), so a table out of date costs a provider round trip, not a wrong page.
 */
const CARD_MINIMUM_MINOR: Readonly<Record<string, number>> = {
  USD: 50, // $0.50
  AED: 200, // 2.00 د.إ
  AUD: 50, // $0.50
  BGN: 100, // лв1.00
  BRL: 50, // R$0.50
  CAD: 50, // $0.50
  CHF: 50, // 0.50 Fr
  CZK: 1500, // 15.00 Kč
  DKK: 250, // 2.50 kr.
  EUR: 50, // €0.50
  GBP: 30, // £0.30
  HKD: 400, // $4.00
  INR: 50, // ₹0.50
  JPY: 50, // ¥50 (no decimals)
  MXN: 1000, // $10
  MYR: 200, // RM 2
  NOK: 300, // 3.00 kr.
  NZD: 50, // $0.50
  PLN: 200, // 2.00 zł
  RON: 200, // lei2.00
  SEK: 300, // 3.00 kr.
  SGD: 50, // $0.50
  THB: 1000, // ฿10
};

/** The provider's minimum charge in this currency (minor units), or undefined when the table has none. */
export function cardMinimumMinor(currency: string): number | undefined {
  return CARD_MINIMUM_MINOR[currency.toUpperCase()];
}
