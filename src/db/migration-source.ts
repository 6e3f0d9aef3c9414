import type { Knex } from 'knex';
import * as initial from '../../migrations/20261122000001_initial.js';
import * as checkoutLatePayments from '../../migrations/20261123001200_checkout_late_payments.js';
import * as officeRegistrations from '../../migrations/20261123001300_office_registrations.js';
import * as hardening from '../../migrations/20261123001450_hardening.js';
import * as outboxNotify from '../../migrations/20261123001500_outbox_notify.js';
import * as registrationEmails from '../../migrations/20261123001550_registration_emails.js';
import * as cardFeePercentDigits from '../../migrations/20261123001700_card_fee_percent_digits.js';
import * as unpaidHoldSince from '../../migrations/20261124000100_unpaid_hold_since.js';
import * as pendingReversalsPerKind from '../../migrations/20261125000100_pending_reversals_per_kind.js';
import * as eventCalendarSequence from '../../migrations/20261126000100_event_calendar_sequence.js';
import * as celebrationsOff from '../../migrations/20261127000100_celebrations_off.js';
import * as reminderRounds from '../../migrations/20261128000100_reminder_rounds.js';
import * as eventEndsAt from '../../migrations/20261128000400_event_ends_at.js';
import * as registrationsByEvent from '../../migrations/20261128000500_registrations_by_event.js';
import * as operationsAlertsLookups from '../../migrations/20261129000100_operations_alerts_lookups.js';
import * as registrationRefunds from '../../migrations/20261130000100_registration_refunds.js';
import * as unpaidSeatsPerClient from '../../migrations/20261201000100_unpaid_seats_per_client.js';

import * as manageLinks from '../../migrations/20261201000200_manage_links.js';
import * as waitingList from '../../migrations/20261201000300_waiting_list.js';
import * as eventQuestions from '../../migrations/20261201000400_event_questions.js';
import * as checkin from '../../migrations/20261201000500_checkin.js';
import * as checkoutPlaces from '../../migrations/20261201000600_checkout_places.js';
import * as checkoutOffers from '../../migrations/20261207000100_checkout_offers.js';
import * as checkoutAnswersPurge from '../../migrations/20261207000300_checkout_answers_purge.js';
import * as unpaidPlacesPerMailbox from '../../migrations/20261207000310_unpaid_places_per_mailbox.js';
import * as waitlistConfirmation from '../../migrations/20261207000200_waitlist_confirmation.js';
import * as checkinScopedTaps from '../../migrations/20261207000400_checkin_scoped_taps.js';
import * as contactEmailChanges from '../../migrations/20261207000410_contact_email_changes.js';
import * as priceSchedules from '../../migrations/20261208000500_price_schedules.js';
import * as tierPlaces from '../../migrations/20261208000510_tier_places.js';
import * as discountCodes from '../../migrations/20261208000520_discount_codes.js';
import * as registrationCredits from '../../migrations/20261208001100_registration_credits.js';
import * as registrationAddons from '../../migrations/20261209000100_registration_addons.js';
import * as depositsAndBalances from '../../migrations/20261209100100_deposits_and_balances.js';
import * as helpWithCost from '../../migrations/20261209300100_help_with_cost.js';
import * as registrationPaymentsByPaymentIntent from '../../migrations/20261210200100_registration_payments_by_payment_intent.js';
import * as sentMailBodiesForgotten from '../../migrations/20261211100100_sent_mail_bodies_forgotten.js';

interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/**
 * Migrations are imported statically so the compiled CLI, the TypeScript tests
 * and the knex CLI all run the same list without a file-system loader.
 * Add each new migration file here, in order.
 */
const MIGRATIONS: ReadonlyArray<readonly [string, Migration]> = [
  ['20261122000001_initial', initial],
  ['20261123001200_checkout_late_payments', checkoutLatePayments],
  ['20261123001300_office_registrations', officeRegistrations],
  ['20261123001450_hardening', hardening],
  ['20261123001500_outbox_notify', outboxNotify],
  ['20261123001550_registration_emails', registrationEmails],
  ['20261123001700_card_fee_percent_digits', cardFeePercentDigits],
  ['20261124000100_unpaid_hold_since', unpaidHoldSince],
  ['20261125000100_pending_reversals_per_kind', pendingReversalsPerKind],
  ['20261126000100_event_calendar_sequence', eventCalendarSequence],
  ['20261127000100_celebrations_off', celebrationsOff],
  ['20261128000100_reminder_rounds', reminderRounds],
  ['20261128000400_event_ends_at', eventEndsAt],
  ['20261128000500_registrations_by_event', registrationsByEvent],
  ['20261129000100_operations_alerts_lookups', operationsAlertsLookups],
  ['20261130000100_registration_refunds', registrationRefunds],
  ['20261201000100_unpaid_seats_per_client', unpaidSeatsPerClient],
  ['20261201000200_manage_links', manageLinks],
  ['20261201000300_waiting_list', waitingList],
  ['20261201000400_event_questions', eventQuestions],
  ['20261201000500_checkin', checkin],
  ['20261201000600_checkout_places', checkoutPlaces],
  ['20261207000100_checkout_offers', checkoutOffers],
  ['20261207000200_waitlist_confirmation', waitlistConfirmation],
  ['20261207000300_checkout_answers_purge', checkoutAnswersPurge],
  ['20261207000310_unpaid_places_per_mailbox', unpaidPlacesPerMailbox],
  ['20261207000400_checkin_scoped_taps', checkinScopedTaps],
  ['20261207000410_contact_email_changes', contactEmailChanges],
  ['20261208000500_price_schedules', priceSchedules],
  ['20261208000510_tier_places', tierPlaces],
  ['20261208000520_discount_codes', discountCodes],
  ['20261208001100_registration_credits', registrationCredits],
  ['20261209000100_registration_addons', registrationAddons],
  ['20261209100100_deposits_and_balances', depositsAndBalances],
  ['20261209300100_help_with_cost', helpWithCost],
  ['20261210200100_registration_payments_by_payment_intent', registrationPaymentsByPaymentIntent],
  ['20261211100100_sent_mail_bodies_forgotten', sentMailBodiesForgotten],
];

export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => MIGRATIONS.map(([name]) => name),
  getMigrationName: (name) => name,
  getMigration: async (name) => {
    const found = MIGRATIONS.find(([n]) => n === name);
    if (!found) throw new Error(`unknown migration ${name}`);
    return found[1];
  },
};

export const migrationConfig: Knex.MigratorConfig = {
  migrationSource,
  tableName: 'knex_migrations',
};
