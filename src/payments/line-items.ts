import type Stripe from 'stripe';
import type { PricedLine } from '../registrations/pricing.js';

export type ProviderLineItem = Stripe.Checkout.SessionCreateParams.LineItem;

/**
 * Checkout rules 1–3: one provider line item per priced line, quantity 1, in
 * APP_CURRENCY. The priced lines already hold the discount collapse (one
 * "Registration" line) and the "Card processing fee" line, so the provider's
 * total is exactly the priced total. Waived tickets stay as lines at 0.
 */
export function providerLineItems(lines: readonly PricedLine[], currency: string): ProviderLineItem[] {
  return lines.map((line) => ({
    quantity: 1,
    price_data: {
      currency: currency.toLowerCase(),
      unit_amount: line.amount,
      product_data: { name: line.label },
    },
  }));
}
