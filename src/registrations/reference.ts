/** A short reference a registrant quotes on a bank transfer, so the treasurer can match it to the registration. */
export function paymentReference(registrationId: string): string {
  return registrationId.replace(/-/g, '').slice(0, 8).toUpperCase();
}
