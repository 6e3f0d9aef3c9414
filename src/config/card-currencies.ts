/**
 * Currencies the card provider counts differently from the prices here. Prices are integer minor units
 * as Intl counts them (whole krónur, forints and shillings; thousandths of a dinar), and every amount
 * sent to the provider or read back from it is compared exactly in those units.
 * - ISK, HUF and UGX: Intl has no decimals, the provider's API counts hundredths (100 = 1 króna), so a
 *   checkout would charge a hundredth of the price.
 * - BHD, JOD, KWD, OMR and TND: both count thousandths, but the provider takes only amounts whose last
 *   digit is 0, which exact pricing (a percentage discount, the card fee) cannot promise.
 */
const HUNDREDTHS_AT_THE_PROVIDER = new Set(['ISK', 'HUF', 'UGX']);
const TENS_OF_THOUSANDTHS_AT_THE_PROVIDER = new Set(['BHD', 'JOD', 'KWD', 'OMR', 'TND']);

/** Why card payments cannot be taken in this currency, or undefined when they can. */
export function cardCurrencyProblem(currency: string): string | undefined {
  if (HUNDREDTHS_AT_THE_PROVIDER.has(currency)) {
    return `card payments cannot be taken in ${currency}: the card provider counts it in hundredths, the prices here in whole units, so a checkout would charge a hundredth of the price; leave PSP_SECRET_KEY and PSP_WEBHOOK_SECRET unset (bank transfer only)`;
  }
  if (TENS_OF_THOUSANDTHS_AT_THE_PROVIDER.has(currency)) {
    return `card payments cannot be taken in ${currency}: the card provider takes only amounts ending in 0 (in thousandths), which exact pricing with discounts and the card fee cannot promise; leave PSP_SECRET_KEY and PSP_WEBHOOK_SECRET unset (bank transfer only)`;
  }
  return undefined;
}
