import { describe, expect, it } from 'vitest';
import { markRegistrationPaid } from '../../src/office/registrations/mark-paid.js';
import { moneyFormatter } from '../../src/office/registrations/money.js';
import { sendEventReminders } from '../../src/jobs/send-reminders.js';
import { deliverQueuedMail } from '../../src/mail/queue.js';
import { managePath } from '../../src/payments/manage-link.js';
import { KEEP_LINK_PRIVATE } from '../../src/payments/templates/manage-link-lines.js';
import { insertEvent } from '../support/factories.js';
import { useServerWithSink } from '../support/server-fixture.js';
import { FIXED_TEST_NOW, fromReferenceNow } from '../support/test-now.js';

const web = useServerWithSink({ now: FIXED_TEST_NOW, truncate: 'registrations, events, users, queued_mail, operations_alerts, rate_limits, app_settings' });
const { mail, context } = web;
const money = moneyFormatter({ locale: 'en-AU', currency: 'AUD' });

/** Every link back to the app a message part holds (Handlebars writes "=" in attributes as &#x3D;). */
const appLinks = (part: string | undefined) =>
  [...(part ?? '').replaceAll('&#x3D;', '=').matchAll(/http:\/\/127\.0\.0\.1:3000\/[^\s"<]*/g)].map((match) => match[0]);

describe('the emails a family receives carry one link to the registration', () => {
  it('the confirmation, the receipt and the reminder each carry only the manage link, and say to keep it private, in text and HTML', async () => {
    const event = await insertEvent(web.tdb.db, { reminder_at: fromReferenceNow({ minutes: -1 }) });
    const form = await fetch(`${web.server.url}/events/${event.slug}/register`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams([
        ['name', 'Jo Citizen'],
        ['email', 'jo@example.org'],
        ['payment', 'bank'],
        ['attendee_name', 'Jo Citizen'],
        ['attendee_tier', 'adult'],
        ['attendee_name', 'Kim Citizen'],
        ['attendee_tier', 'adult'],
      ]).toString(),
    });
    expect(form.status).toBe(303);
    const { id } = await web.tdb.db('registrations').where({ event_id: event.id }).first('id');
    const manage = `http://127.0.0.1:3000${managePath(context().config.authSecret, { registrationId: id, version: 1 })}`;

    await deliverQueuedMail(context(), { limit: 10 });
    await markRegistrationPaid(context(), { registration: id, amountMinor: 24000, method: 'bank', actor: 'office' }, money);
    await deliverQueuedMail(context(), { limit: 10 });
    await sendEventReminders(context(), { trigger: 'cli' });

    const subjects = mail.sink.messages.map((message) => message.subject);
    expect(subjects).toEqual(['Registration received: Family Camp', 'Receipt: Family Camp', 'Reminder: Family Camp']);
    for (const message of mail.sink.messages) {
      for (const part of [message.text, message.html]) {
        expect(appLinks(part), message.subject).toEqual([manage]);
        expect(part).toContain(KEEP_LINK_PRIVATE);
        expect(part).not.toContain('View your registration');
      }
      expect(message.html.replaceAll('&#x3D;', '=')).toContain(`<a href="${manage}">Manage your registration</a>`);
      expect(message.text).toContain(`Manage your registration: ${manage}\n${KEEP_LINK_PRIVATE}`);
    }
  });
});
