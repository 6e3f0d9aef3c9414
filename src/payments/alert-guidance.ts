/** What an alert's email says before its details: what happened, and what a person does about it. */
export interface AlertGuidance {
  headline: string;
  happened: string;
  toDo: string;
}

const REGISTER_OR_REFUND = (alertId: number) =>
  'Contact the payer. If they are coming, register them with `eventops registrations add --event <slug> ... ' +
  `--resolve-alert ${alertId}\` (add --over-capacity if the event is full): the card payment pays that registration and the alert is resolved. ` +
  "If they are not, refund the payment in the card provider's dashboard and resolve the alert.";

/**
 * One sentence of what happened and one of what to do, per kind (ALERT_KINDS; a string here, as alerts.ts imports
 * this file); `reference` names the registration when there is one.
 */
/** Alerts about no card payment: their email does not open with "Payment needs manual attention". */
const NOT_ABOUT_A_PAYMENT = new Set(['unpaid_seat_cap', 'unpaid_share', 'cancellation_requested', 'help_requested', 'balance_overdue', 'balance_overdue_cancelled']);

export function alertGuidance(kind: string, alertId: number, reference: string | undefined): AlertGuidance {
  const headline = NOT_ABOUT_A_PAYMENT.has(kind) ? 'Needs attention' : 'Payment needs manual attention';
  return { headline, ...alertSentences(kind, alertId, reference) };
}

function alertSentences(kind: string, alertId: number, reference: string | undefined): Omit<AlertGuidance, 'headline'> {
  const registration = reference ? `registration ${reference}` : 'the registration';
  switch (kind) {
    case 'sold_out':
      return {
        happened: 'A card payment arrived after the event had sold out, so no registration was made. The money was kept; nothing was refunded.',
        toDo: REGISTER_OR_REFUND(alertId),
      };
    case 'event_deleted':
      return {
        happened: 'A card payment arrived for an event that was deleted while the payer was at the checkout, so no registration was made. The money was kept; nothing was refunded.',
        toDo: "Refund the payment in the card provider's dashboard, let the payer know, then resolve the alert.",
      };
    case 'amount_mismatch':
      return {
        happened: 'The card was charged an amount other than the registration’s price, so no registration was made. The money was kept; nothing was refunded.',
        toDo: REGISTER_OR_REFUND(alertId),
      };
    case 'duplicate_charge':
      return {
        happened: `A card payment arrived for ${registration}, which was already paid.`,
        toDo: "Refund one of the payments in the card provider's dashboard, let the payer know, then resolve the alert.",
      };
    case 'paid_twice':
      return {
        happened: `A card payment arrived for ${registration}, which was already paid: the payer has now paid twice. The card payment was kept; nothing was refunded.`,
        toDo: `Refund the card payment in the card provider's dashboard (or pay back the other payment and record it with \`eventops registrations record-refund${reference ? ` ${reference}` : ''}\`), let the payer know, then resolve the alert.`,
      };
    case 'registration_cancelled':
      return {
        happened: `A card payment arrived for ${registration}, which had been cancelled, so nothing was owed for it. The money was kept; nothing was refunded.`,
        toDo: REGISTER_OR_REFUND(alertId),
      };
    case 'partial_refund':
      return {
        happened: `Part of a card payment${reference ? ` for ${registration}` : ''} was refunded at the card provider. Refunds are all or nothing here, so the registration was left as it is.`,
        toDo: `If the payer is no longer coming, cancel it with \`eventops registrations cancel${reference ? ` ${reference}` : ''}\`; then resolve the alert.`,
      };
    case 'reversal_applied':
      return {
        happened: `A refund or dispute arrived before the card payment it reverses, so ${registration} was created and cancelled at once.`,
        toDo: 'Nothing is owed. Make sure the payer knows they are not registered, then resolve the alert.',
      };
    case 'reversal_unfulfilled':
      return {
        happened: 'A card payment that had been kept without a registration was refunded or disputed.',
        toDo: "Check the payment in the card provider's dashboard before contacting the payer (they may already have their money back), then resolve the alert.",
      };
    case 'checkout_expired':
      return {
        happened: 'A card payment arrived after its checkout had expired and the registration details were removed, so no registration was made. The money was kept; nothing was refunded.',
        toDo: REGISTER_OR_REFUND(alertId),
      };
    case 'unknown_checkout':
      return {
        happened: 'A card checkout carrying our id was paid, but there is no record of it here, so no registration was made. The money was kept; nothing was refunded.',
        toDo: REGISTER_OR_REFUND(alertId),
      };
    case 'reconcile_mismatch':
      return {
        happened: 'Our record of a card payment differs from the card provider’s.',
        toDo: "Compare the payment in the card provider's dashboard with `eventops registrations show`, correct what is wrong, then resolve the alert.",
      };
    case 'dispute_inquiry':
      return {
        happened: `The cardholder’s bank is asking about a card payment${reference ? ` for ${registration}` : ''}. No money has been taken back yet.`,
        toDo: "Answer the inquiry in the card provider's dashboard before its deadline, then resolve the alert.",
      };
    case 'dispute_won':
      return {
        happened: `A dispute of a card payment${reference ? ` for ${registration}` : ''} was decided for the church: the money came back.`,
        toDo: `If the payer is still coming, register them again with \`eventops registrations add ... --resolve-alert ${alertId}\`; otherwise resolve the alert.`,
      };
    case 'dispute_after_cancellation':
      return {
        happened: `A card payment was disputed although ${registration} had already been cancelled.`,
        toDo: "Answer the dispute in the card provider's dashboard with the evidence named above, then resolve the alert.",
      };
    case 'payment_unreadable':
      return {
        happened: 'Card payments cannot be recorded: their registrations are encrypted with a key this server does not have.',
        toDo: 'Restart every server with the missing encryption key set (named above); the payments are recorded then, with their receipts. Then resolve the alert.',
      };
    case 'refund_failed':
      return {
        happened: `A refund of a card payment${reference ? ` for ${registration}` : ''} failed at the card provider, so the money is still with the church and the payer has not got it back.`,
        toDo: `If the refund was meant, refund the payer another way (or again in the dashboard); money paid back by hand for a cancelled registration is recorded with \`eventops registrations record-refund${reference ? ` ${reference}` : ''}\` (a payment of one still standing, paying in parts, counts as paid again until it is refunded). Then resolve the alert.`,
      };
    case 'refunded_twice':
      return {
        happened: `A card payment${reference ? ` for ${registration}` : ''} was refunded at the card provider after the office had already paid it back by hand: the payer may have been paid twice.`,
        toDo: 'Check with the payer and agree how the second refund comes back, then resolve the alert.',
      };
    case 'unpaid_seat_cap':
      return {
        happened: 'One connection (or one email address) holds as many unpaid places of this event as the event allows, and was refused more. The reason above lists its registrations.',
        toDo:
          'If they look genuine (the church\'s own Wi-Fi after a service), name the church\'s network in CHURCH_NETWORKS (docs/operations.md: "Sign-ups on the church\'s Wi-Fi"), or raise the event\'s maxUnpaidSeatsPerClient with `eventops events update`; if not, cancel them all with the command in the reason. Then resolve the alert.',
      };
    case 'unpaid_share':
      return {
        happened: "The public form's unpaid registrations hold more of this event's places than its unpaidAlertShare. The reason above names the largest holders, by connection and by email address, with their references.",
        toDo:
          'Look at the largest holders (`eventops registrations show REFERENCE`). If they are not genuine, cancel them with `eventops registrations cancel REFERENCES --note "…"`; against a determined bot, turn the captcha on (CAPTCHA_SITE_KEY, CAPTCHA_SECRET_KEY). Then resolve the alert.',
      };
    case 'cancellation_requested':
      return {
        happened: `The registrant of ${registration} asked, on their manage page, for it to be cancelled. It has money paid on it, so it was not cancelled, and nothing was refunded.`,
        toDo: `Reply to the registrant. To cancel, run \`eventops registrations cancel${reference ? ` ${reference}` : ''} --notify\`; any refund is a person's decision under the no-refund policy. Then resolve the alert.`,
      };
    case 'help_requested':
      return {
        happened: `The family of ${registration} ticked "We would like to talk about help with the cost". It is registered awaiting payment, nothing was charged, and its places are held without the unpaid-hold release until you decide.`,
        toDo: `Talk to the family. Then record help with \`eventops registrations credit${reference ? ` ${reference}` : ''} --amount MINOR --fund NAME\`, a payment with \`registrations mark-paid\`, or no help with \`registrations help${reference ? ` ${reference}` : ''} --decided\`; each closes the request and this alert.`,
      };
    case 'balance_already_settled':
      return {
        happened: `A card payment towards ${registration}'s balance arrived after the balance was already settled (by another payment or help with the cost). It was not applied to the registration and the money was kept; nothing was refunded.`,
        toDo: "Decide with the family: refund it in the card provider's dashboard, or keep it as a gift under the no-refund policy; then resolve the alert.",
      };
    case 'balance_overpaid':
      return {
        happened: `A card payment towards ${registration}'s balance came to more than was still owed, because part of it was paid another way meanwhile. It was recorded and the registration is paid; the excess was kept.`,
        toDo: "Decide with the family whether to refund the excess in the card provider's dashboard; then resolve the alert.",
      };
    case 'part_payment_reversed':
      return {
        happened: `One card payment of ${registration}, which pays in parts, was refunded or disputed at the card provider. That payment no longer counts as paid; the registration was not cancelled, and it owes that amount again.`,
        toDo: `Decide with the family: they pay the balance again (its page and reminders ask for it), or cancel with \`eventops registrations cancel${reference ? ` ${reference}` : ''}\`; any refund of the other payments is a person's decision under the no-refund policy. Then resolve the alert.`,
      };
    case 'part_payment_restored':
      return {
        happened: `A dispute of one card payment of ${registration}, which pays in parts, was decided for the church: the money came back, so that payment counts as paid again (the registration is as it was before the dispute).`,
        toDo: "Nothing to register: the payment already pays this registration. If the family paid that amount again meanwhile, decide with them about the excess (the reason above says so). Then resolve the alert.",
      };
    case 'balance_overdue':
      return {
        happened: `The balance of ${registration} is still owed after its due date. The family was sent one reminder.`,
        toDo: `Contact the family, record what they pay with \`eventops registrations mark-paid${reference ? ` ${reference}` : ''}\` or help with \`registrations credit\`; then resolve the alert.`,
      };
    case 'balance_overdue_cancelled':
      return {
        happened: `The registration ${reference ?? ''} was cancelled because its balance stayed overdue, as the event's "overdue" setting says. What was paid was kept (no refund).`,
        toDo: 'Let the family know if they ask, then resolve the alert.',
      };
    default:
      return {
        happened: 'A card payment needs a person’s attention.',
        toDo: "Look the payment up in the card provider's dashboard with the details below, contact the payer if needed, then resolve the alert.",
      };
  }
}
