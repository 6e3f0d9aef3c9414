import { describe, expect, it } from 'vitest';
import { deliverQueuedMail } from '../../src/mail/queue.js';
import { paymentReference } from '../../src/registrations/reference.js';
import { runCli } from '../support/cli.js';
import { useOfficeCli } from '../support/office-cli.js';
import { insertEvent, insertRegistration } from '../support/factories.js';

// The subprocess runs the built command; the mail it queues is delivered here to a real SMTP sink.
const office = useOfficeCli();
const { mail } = office;

const context = () => office.context();

const cli = (args: string[]) => runCli(['registrations', ...args], { env: office.env });

describe('eventops registrations update-contact: the office corrects a mistyped address, then sends again', () => {
  it('stores the new address as the registration flow does, list --search finds it, and resend mails it there', async () => {
    const event = await insertEvent(office.db);
    const ctx = context();
    const { id } = await insertRegistration(office.db, ctx.cipher, event.id, {
      email: 'sam@exmaple.org',
      contact_mobile_enc: ctx.cipher.encrypt('0400 000 000'),
      paid_at: new Date(),
    });
    const reference = paymentReference(id);

    const updated = await cli(['update-contact', reference.toLowerCase(), '--email', ' sam@example.org ', '--mobile', '+61 411 111 111', '--note', 'receipt bounced']);
    expect(updated.stderr).toBe('');
    expect(updated.code).toBe(0);
    expect(updated.stdout).toBe(
      `updated the contact of ${reference}: email sam@exmaple.org → sam@example.org; mobile 0400 000 000 → +61 411 111 111\n` +
        `Nothing was sent: \`eventops registrations resend ${reference}\` sends the confirmation or receipt again, to the new address.\n`,
    );

    const row = await office.db('registrations').where({ id }).first();
    expect(ctx.cipher.decrypt(row.contact_email_enc)).toBe('sam@example.org');
    expect(row.contact_email_hash).toBe(ctx.cipher.lookupHash('email', 'sam@example.org'));
    expect(ctx.cipher.decrypt(row.contact_mobile_enc)).toBe('+61 411 111 111');
    // The history names what changed and who changed it, never the addresses: it is not encrypted.
    const history = await office.db('registration_history').where({ registration_id: id }).first();
    expect(history).toMatchObject({ action: 'contact_updated', changes: { fields: ['email', 'mobile'] }, note: 'receipt bounced' });
    // Its written parts, not its ids or time (a timestamp's milliseconds, or an id, can read "411").
    const { id: _historyId, registration_id: _registrationId, created_at: _at, ...written } = history;
    expect(JSON.stringify(written)).not.toMatch(/example|exmaple|411/i);

    // Searched as a volunteer types it: the lookup hash is of the normalised address.
    const found = await cli(['list', '--search', 'Sam@Example.org', '--json']);
    expect(JSON.parse(found.stdout).registrations.map((r: { id: string }) => r.id)).toEqual([id]);
    const old = await cli(['list', '--search', 'sam@exmaple.org', '--json']);
    expect(JSON.parse(old.stdout).registrations).toEqual([]);

    expect((await cli(['resend', reference])).code).toBe(0);
    await deliverQueuedMail(context(), { limit: 100 });
    expect(mail.sink.messages.map((m) => [m.envelope.to, m.subject])).toEqual([[['sam@example.org'], 'Receipt: Family Camp']]);

    const again = await cli(['update-contact', reference, '--email', 'sam@example.org']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`registration ${reference} already has this contact; nothing changed`);
  });

  it('refuses an address the public form would refuse (exit 2), changes nothing, and removes the mobile with ""', async () => {
    const event = await insertEvent(office.db);
    const ctx = context();
    const { id } = await insertRegistration(office.db, ctx.cipher, event.id, { email: 'kim@example.org', contact_mobile_enc: ctx.cipher.encrypt('0400 000 000'), status: 'PENDING' });
    const reference = paymentReference(id);
    const before = await office.db('registrations').where({ id }).first();

    const refusals: Array<[string[], string]> = [
      [['--email', 'kim@example'], '--email enter a valid email address, like name@example.org'],
      [['--email', 'kim\u202e@example.org'], '--email remove the control characters'],
      [['--email', `${'k'.repeat(250)}@example.org`], '--email at most 254 characters'],
      [['--mobile', 'call me'], '--mobile use digits, spaces and an optional leading +'],
      [[], 'give --email, --mobile or both'],
    ];
    for (const [extra, why] of refusals) {
      const refused = await cli(['update-contact', reference, ...extra]);
      expect(refused.code, extra.join(' ')).toBe(2);
      expect(refused.stderr).toContain(why);
    }
    expect(await office.db('registrations').where({ id }).first()).toEqual(before);
    expect((await cli(['update-contact', 'FFFF0000', '--email', 'kim@example.org'])).code).toBe(1);

    const removed = await cli(['update-contact', reference, '--mobile', '', '--json']);
    expect(removed.code).toBe(0);
    expect(JSON.parse(removed.stdout)).toEqual({
      contact: { registrationId: id, reference, status: 'PENDING', changed: { mobile: { from: '0400 000 000', to: null } } },
    });
    expect(await office.db('registrations').where({ id }).first()).toMatchObject({ contact_mobile_enc: null, contact_email_enc: before.contact_email_enc });
  });

  it('corrects a cancelled registration too, saying nothing is sent to it; --help shows an example', async () => {
    const event = await insertEvent(office.db);
    const ctx = context();
    const { id } = await insertRegistration(office.db, ctx.cipher, event.id, { email: 'lee@exmaple.org', status: 'CANCELLED', cancelled_at: new Date(), cancel_reason: 'unpaid_hold' });
    const reference = paymentReference(id);

    const updated = await cli(['update-contact', reference, '--email', 'lee@example.org']);
    expect(updated.code).toBe(0);
    expect(updated.stdout).toContain('It is cancelled: nothing is sent to it.');
    expect(ctx.cipher.decrypt((await office.db('registrations').where({ id }).first()).contact_email_enc)).toBe('lee@example.org');

    const help = await cli(['update-contact', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Example:\n {2}\$ eventops registrations update-contact /);
    expect((await cli(['--help'])).stdout).toContain('update-contact');
  });
});
