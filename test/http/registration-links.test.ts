import { describe, expect, it } from 'vitest';
import { resendRegistrationMail } from '../../src/office/registrations/resend.js';
import { deliverQueuedMail } from '../../src/mail/queue.js';
import { registrationToken, verifyRegistrationToken } from '../../src/payments/links.js';
import { insertEvent } from '../support/factories.js';
import { useServerWithSink } from '../support/server-fixture.js';
import { registrationPath } from '../../src/http/registration-view.js';

const T0 = new Date('2026-11-22T00:00:00Z');
const web = useServerWithSink({ now: T0, truncate: 'registrations, events, users, queued_mail, operations_alerts, rate_limits, app_settings' });
const { mail, context } = web;

async function fetchPage(path: string, init: RequestInit = {}) {
  const response = await fetch(`${web.server.url}${path}`, { redirect: 'manual', ...init });
  return { status: response.status, location: response.headers.get('location'), html: (await response.text()).replaceAll('&#x3D;', '=') };
}
const linkAfter = (label: string, text: string | undefined) =>
  new RegExp(`${label}: http://127\\.0\\.0\\.1:3000(\\S+)`).exec(text ?? '')?.[1];

describe('one link version revokes every link of a registration', () => {
  it('the token signs the id alone at the first version (links already emailed keep working), and the version after it', () => {
    const { authSecret } = context().config;
    const id = '7d0f3c2e-4b1a-4c9e-9f5a-2f1e0b6c8d42';
    const first = registrationToken(authSecret, id, 1);
    const second = registrationToken(authSecret, id, 2);
    expect(second).not.toBe(first);
    expect(verifyRegistrationToken(authSecret, id, 2, second)).toBe(true);
    expect(verifyRegistrationToken(authSecret, id, 2, first)).toBe(false);
    expect(verifyRegistrationToken(authSecret, id, 1, second)).toBe(false);
  });

  it('resend --new-link kills the registration page (names, amounts, pay-now) and the pay-now page along with the manage link; the new email\'s links work', async () => {
    const event = await insertEvent(web.tdb.db);
    const form = await fetchPage(`/events/${event.slug}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ name: 'Jo Citizen', email: 'jo@example.org', payment: 'bank', attendee_name: 'Jo Citizen', attendee_tier: 'adult' }).toString(),
    });
    expect(form.status).toBe(303);
    const { id } = await web.tdb.db('registrations').where({ event_id: event.id }).first('id');
    await deliverQueuedMail(context(), { limit: 10 });
    const [confirmation] = mail.sink.messages;
    // Emails carry the manage link alone; the registration page is where the form's post sent the browser.
    const oldPage = form.location as string;
    const oldManage = linkAfter('Manage your registration', confirmation?.text) as string;
    expect(oldPage).toContain(`/registrations/${id}?token=`);
    const oldPay = oldPage.replace('?token=', '/pay?token=');
    const token = new URL(oldPage, 'http://x').searchParams.get('token') as string;
    expect((await fetchPage(oldPage)).html).toContain('Jo Citizen');
    expect((await fetchPage(oldPay)).status).toBe(409); // the token opens it; the event takes no card

    await resendRegistrationMail(context(), { registration: id, actor: 'office', newLink: true });

    for (const revoked of [oldPage, oldPay, oldManage]) {
      const answer = await fetchPage(revoked);
      expect(answer.status, revoked).toBe(404);
      expect(answer.html).not.toContain('Jo Citizen');
      expect(answer.html).not.toContain('$120.00');
    }
    const payPost = await fetchPage(`/registrations/${id}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }).toString(),
    });
    expect(payPost.status).toBe(404);

    mail.sink.clear();
    await deliverQueuedMail(context(), { limit: 10 });
    const [resent] = mail.sink.messages;
    const newPage = registrationPath(context().config.authSecret, id, 2);
    expect(newPage).not.toBe(oldPage);
    const opened = await fetchPage(newPage);
    expect(opened.status).toBe(200);
    expect(opened.html).toContain('Jo Citizen');
    expect((await fetchPage(linkAfter('Manage your registration', resent?.text) as string)).status).toBe(200);
  });
});
