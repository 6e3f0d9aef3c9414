import { describe, expect, it } from 'vitest';
import { deliverQueuedMail } from '../../src/mail/queue.js';
import { runCli } from '../support/cli.js';
import { useOfficeCli } from '../support/office-cli.js';
import { insertEvent } from '../support/factories.js';

// The subprocess runs the built command; the confirmation it queues is delivered here to a real SMTP sink.
const office = useOfficeCli();
const { mail } = office;

const add = (slug: string, overrides: Record<string, string>, attendees = ['Sam Smith:adult']) => {
  const options = { '--name': 'Sam Smith', '--email': 'sam@example.org', ...overrides };
  return runCli(['registrations', 'add', '--event', slug, ...Object.entries(options).flat(), ...attendees.flatMap((a) => ['--attendee', a])], { env: office.env });
};

describe('registrations add holds the contact and the attendees to the public form\'s rules', () => {
  it('refuses (exit 2, naming the option and why, nothing registered or queued) what the form would refuse', async () => {
    const event = await insertEvent(office.db);
    const refusals: Array<[Record<string, string>, string[] | undefined, string]> = [
      [{ '--email': `${'k'.repeat(250)}@example.org` }, undefined, '--email at most 254 characters'],
      [{ '--email': 'sam\u202e@example.org' }, undefined, '--email remove the control characters'],
      [{ '--email': 'sam@example' }, undefined, '--email enter a valid email address, like name@example.org'],
      [{ '--mobile': `+${'4'.repeat(40)}` }, undefined, '--mobile at most 40 characters'],
      [{ '--mobile': '0400\u0007000' }, undefined, '--mobile remove the control characters'],
      [{ '--mobile': 'call me' }, undefined, '--mobile use digits, spaces and an optional leading +'],
      [{ '--name': 'Sam www.cheap.xyz' }, undefined, '--name a name cannot contain a web or email address'],
      [{ '--name': 'S'.repeat(81) }, undefined, '--name at most 80 characters'],
      [{ '--name': '\u200b\u3164' }, undefined, '--name a name needs at least one visible letter or digit'],
      [{ '--name': ' ' }, undefined, '--name must not be empty'],
      [{}, ['Kim https://spam.example:adult'], '--attendee "Kim https://spam.example:adult" name: a name cannot contain a web or email address'],
      [{}, [`${'K'.repeat(81)}:adult`], `--attendee "${'K'.repeat(81)}:adult" name: at most 80 characters`],
      // Shown escaped: a control character typed in is never written back to the terminal.
      [{}, ['Kim\u001b[2J:adult'], '--attendee "Kim\\u{1b}[2J:adult" name: remove the control characters'],
      [{}, [' :adult'], '--attendee " :adult" name: enter a name'],
      [{}, ['Kim Smith'], '--attendee "Kim Smith" must be "Name:tier"'],
    ];
    for (const [overrides, attendees, why] of refusals) {
      const refused = await add(event.slug, overrides, attendees);
      expect(refused.code, why).toBe(2);
      expect(refused.stderr, why).toContain(`invalid arguments: ${why}`);
      expect(refused.stderr).toContain('see `eventops registrations add --help`');
      expect(refused.stdout).toBe('');
    }
    expect(await office.db('registrations').where({ event_id: event.id })).toEqual([]);
    expect(await office.db('queued_mail')).toEqual([]);
  });

  it('takes what the form takes: the address trimmed, "" as no mobile, names in any script; the confirmation goes there', async () => {
    const event = await insertEvent(office.db);
    const added = await add(event.slug, { '--name': 'José Núñez', '--email': '  jose@example.org ', '--mobile': '' }, ['José Núñez:adult', '김민준:adult', 'Kim O\'Brien-Smith:adult']);
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);

    const [row] = await office.db('registrations').where({ event_id: event.id });
    const ctx = office.context();
    expect(row).toMatchObject({ contact_name: 'José Núñez', contact_mobile_enc: null, attendee_count: 3 });
    expect(row.attendees.map((a: { name: string }) => a.name)).toEqual(['José Núñez', '김민준', "Kim O'Brien-Smith"]);
    expect(ctx.cipher.decrypt(row.contact_email_enc)).toBe('jose@example.org');

    await deliverQueuedMail(ctx, { limit: 100 });
    expect(mail.sink.messages.map((m) => [m.envelope.to, m.subject])).toEqual([[['jose@example.org'], 'Registration received: Family Camp']]);
  });
});
