import { describe, expect, it } from 'vitest';
import { newManageLinkEmail } from '../../src/family/templates.js';
import { eventReminderEmail, paymentReminderEmail } from '../../src/jobs/templates/reminders.js';
import type { EmailBranding, RenderedEmail } from '../../src/mail/render.js';
import { KEEP_LINK_PRIVATE } from '../../src/payments/templates/manage-link-lines.js';
import { receiptEmail } from '../../src/payments/templates/receipt.js';
import { registrationConfirmationEmail } from '../../src/signup/templates/confirmation.js';
import { holdEndingEmail } from '../../src/signup/templates/registration-notices.js';
import { defaultEventStart, fromReferenceNow } from '../support/test-now.js';

const branding: EmailBranding = {
  identity: { name: 'Grace Church', address: '1 Main St, Springfield NSW 2000', abn: '12 345 678 901', website: 'https://church.example.org' },
  theme: { primary: '#1d4ed8' },
  regional: { locale: 'en-AU', currency: 'AUD', timeZone: 'Australia/Sydney' },
} as EmailBranding;

const MANAGE = 'https://events.example.org/manage/AAAAAAAAAAAAAAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBB';
const PAY = 'https://events.example.org/registrations/7d0f3c2e-4b1a-4c9e-9f5a-2f1e0b6c8d42/pay?token=abc';
const startsAt = defaultEventStart();
const event = { title: 'Family Camp', startsAt, location: 'Church Hall' };

/** Every address of the app in a message part: the links a family could follow back to it. */
const appLinks = (part: string) => [...part.replaceAll('&#x3D;', '=').matchAll(/https:\/\/events\.example\.org\/[^\s"<]*/g)].map((m) => m[0]);
const registrationLinks = (part: string) => appLinks(part).filter((link) => link !== PAY);

function expectOneManageLink(email: RenderedEmail): void {
  for (const part of [email.text, email.html]) {
    expect(registrationLinks(part)).toEqual([MANAGE]);
    expect(part).toContain(KEEP_LINK_PRIVATE);
    expect(part).not.toContain('View your registration');
  }
  expect(email.html).toContain(`<a href="${MANAGE}">Manage your registration</a>`);
  expect(email.text).toContain(`Manage your registration: ${MANAGE}\n${KEEP_LINK_PRIVATE}`);
}

describe('a family email carries one link to the registration, the manage link, with the words that keep it private', () => {
  it('the confirmation of a bank-transfer registration (with its pay-now link) and of a free one', () => {
    const base = {
      name: 'Jo Citizen',
      eventTitle: 'Family Camp',
      eventStartsAt: startsAt,
      lines: [{ label: 'Adult — Jo Citizen', amount: 12000 }],
      totalMinor: 12000,
      balanceMinor: 12000,
      paidMinor: 0,
      cardPaymentInFlight: false,
      severalPlaces: false,
      reference: 'REG-ABC123',
      bank: { accountName: 'Grace Church', bsb: '062-000', accountNumber: '1234 5678' },
      manageUrl: MANAGE,
      otherRegistrations: [],
    };
    const bank = registrationConfirmationEmail({ ...base, free: false, payNowUrl: PAY }, branding);
    expectOneManageLink(bank);
    expect(appLinks(bank.text)).toContain(PAY);
    expectOneManageLink(registrationConfirmationEmail({ ...base, free: true, totalMinor: 0, balanceMinor: 0 }, branding));
  });

  it('the receipt, both reminders, the unpaid hold ending and the new link after an email change', () => {
    expectOneManageLink(
      receiptEmail(
        {
          name: 'Jo Citizen',
          eventTitle: 'Family Camp',
          eventStartsAt: startsAt,
          lines: [{ label: 'Adult — Jo Citizen', amount: 12000 }],
          amountMinor: 12000,
          paidAt: fromReferenceNow({}),
          methodWords: 'card payment',
          paidByWords: 'card',
          several: false,
          reference: 'REG-ABC123',
          manageUrl: MANAGE,
        },
        branding,
      ),
    );
    expectOneManageLink(eventReminderEmail({ name: 'Jo Citizen', event, manageUrl: MANAGE }, branding));
    expectOneManageLink(paymentReminderEmail({ name: 'Jo Citizen', event, manageUrl: MANAGE, amountMinor: 12000, reference: 'REG-ABC123', payNowUrl: PAY }, branding));
    expectOneManageLink(
      holdEndingEmail(
        { name: 'Jo Citizen', eventTitle: 'Family Camp', eventStartsAt: startsAt, reference: 'REG-ABC123', balanceMinor: 12000, releaseAt: fromReferenceNow({ days: 1 }), manageUrl: MANAGE },
        branding,
      ),
    );
    expectOneManageLink(newManageLinkEmail({ name: 'Jo Citizen', eventTitle: 'Family Camp', eventStartsAt: startsAt, reference: 'REG-ABC123', manageUrl: MANAGE }, branding));
  });
});
