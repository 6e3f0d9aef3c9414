import { describe, expect, it } from 'vitest';
import { askOfficeToCancel } from '../../src/family/cancel.js';
import { findManagedRegistration } from '../../src/family/managed-registration.js';
import { deliverQueuedMail } from '../../src/mail/queue.js';
import { managePath } from '../../src/payments/manage-link.js';
import { paymentReference } from '../../src/registrations/reference.js';
import { runCli } from '../support/cli.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { useOfficeCli } from '../support/office-cli.js';

const office = useOfficeCli();
const cli = (args: string[]) => runCli(args, { env: office.env });
const MANAGE_LINK = /Manage your registration: \S+(\/manage\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)/;

describe('eventops registrations resend --new-link', () => {
  it('revokes the old manage link and mails the registration with a new one that works', async () => {
    const ctx = office.context();
    const event = await insertEvent(office.db);
    const { id } = await insertRegistration(office.db, ctx.cipher, event.id, { email: 'lost-phone@example.org', paid_at: new Date() });
    const reference = paymentReference(id);
    const oldToken = managePath(ctx.config.authSecret, { registrationId: id, version: 1 }).slice('/manage/'.length);
    expect(await findManagedRegistration(office.db, ctx.config.authSecret, oldToken)).toBeDefined();

    const plain = await cli(['registrations', 'resend', reference]);
    expect(plain.code).toBe(0);
    expect(await findManagedRegistration(office.db, ctx.config.authSecret, oldToken)).toBeDefined();

    const renewed = await cli(['registrations', 'resend', reference, '--new-link']);
    expect(renewed.stderr).toBe('');
    expect(renewed.code).toBe(0);
    expect(renewed.stdout).toBe(`queued the receipt of ${reference} again, with a new manage link (the old one no longer works)\n`);
    expect((await office.db('registrations').where({ id }).first()).manage_link_version).toBe(2);
    expect(await findManagedRegistration(office.db, ctx.config.authSecret, oldToken)).toBeUndefined();

    await deliverQueuedMail(office.context(), { limit: 100 });
    const links = office.mail.sink.messages.map((m) => MANAGE_LINK.exec(m.text)?.[1]);
    expect(links).toEqual([
      managePath(ctx.config.authSecret, { registrationId: id, version: 1 }),
      managePath(ctx.config.authSecret, { registrationId: id, version: 2 }),
    ]);
    const newToken = (links[1] as string).slice('/manage/'.length);
    expect((await findManagedRegistration(office.db, ctx.config.authSecret, newToken))?.registration.id).toBe(id);

    const history = await office.db('registration_history').where({ registration_id: id }).orderBy('id').select('action', 'changes');
    expect(history).toEqual([
      { action: 'resent', changes: { sent: 'receipt' } },
      { action: 'resent', changes: { sent: 'receipt', newLink: true } },
    ]);
    const json = await cli(['registrations', 'resend', reference, '--new-link', '--json']);
    expect(JSON.parse(json.stdout)).toEqual({ resent: { registrationId: id, reference, sent: 'receipt', newLink: true } });
  });
});

describe('a registrant asking the office to cancel, as the office sees it', () => {
  it('registrations show lists the request by the registrant and its alert; alerts list shows the alert naming the reference', async () => {
    const ctx = office.context();
    const event = await insertEvent(office.db);
    const { id } = await insertRegistration(office.db, ctx.cipher, event.id, { email: 'paid@example.org', paid_at: new Date() });
    const reference = paymentReference(id);
    const token = managePath(ctx.config.authSecret, { registrationId: id, version: 1 }).slice('/manage/'.length);
    const asked = await askOfficeToCancel(ctx, token, '203.0.113.7');
    expect(asked.kind).toBe('asked');

    const shown = await cli(['registrations', 'show', reference]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/cancellation requested by registrant.*203\.0\.113\.7/);
    expect(shown.stdout).toContain('cancellation_requested');
    expect(shown.stdout).toContain(`cancel registration ${reference}`);

    const alerts = await cli(['alerts', 'list']);
    expect(alerts.code).toBe(0);
    expect(alerts.stdout).toContain('cancellation_requested');
    expect(alerts.stdout).toContain(reference);
  });
});
