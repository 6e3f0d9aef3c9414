import { describe, expect, it } from 'vitest';
import { paymentReference } from '../../src/registrations/reference.js';
import { runCli } from '../support/cli.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { useOfficeCli } from '../support/office-cli.js';

// The subprocess runs on the real clock.
const office = useOfficeCli();
const registrations = (args: string[]) => runCli(['registrations', ...args], { env: office.env });
const row = (id: string) => office.db('registrations').where({ id }).first();

/** A bank-transfer registration whose family ticked "We would like to talk about help with the cost", with its alert. */
async function askedForHelp(eventId: string, email: string) {
  const { id } = await insertRegistration(office.db, office.context().cipher, eventId, {
    email,
    status: 'PENDING',
    payment_method: 'bank',
    total_minor: 24000,
    contact_name: `Family ${email}`,
    help_requested_at: new Date(),
  });
  await office.db('operations_alerts').insert({ kind: 'help_requested', reason: 'asks for help', details: JSON.stringify({ registrationId: id }), created_at: new Date() });
  return { id, reference: paymentReference(id) };
}

describe('eventops registrations help: the office decides a request for help with the cost', () => {
  it('show, list and balances say a request is open; --decided closes it once, resolves its alert, and they say so', async () => {
    const event = await insertEvent(office.db, { help_with_cost: true });
    const { id, reference } = await askedForHelp(event.id, 'asks@example.org');

    const shown = await registrations(['show', reference]);
    expect(shown.stdout).toMatch(/Help with the cost: asked on the form .*; OPEN: held without the unpaid-hold release/);
    expect((await registrations(['list', '--event', event.slug])).stdout).toContain('PENDING (help asked)');
    expect(JSON.parse((await registrations(['list', '--event', event.slug, '--json'])).stdout).registrations[0]).toMatchObject({ helpOpen: true });
    expect((await registrations(['balances', '--event', event.slug])).stdout).toContain('PENDING (help asked)');
    expect(JSON.parse((await registrations(['balances', '--event', event.slug, '--json'])).stdout).balances[0]).toMatchObject({ helpOpen: true });

    // Without a reference, `help` is the group's help as in every other group; with a command's name, that command's.
    const groupHelp = await registrations(['help']);
    expect(groupHelp.code).toBe(0);
    expect(groupHelp.stdout).toContain('Usage: eventops registrations [options] [command]');
    const creditHelp = await registrations(['help', 'credit']);
    expect(creditHelp.code).toBe(0);
    expect(creditHelp.stdout).toContain('Usage: eventops registrations credit [options] <id-or-reference>');
    expect((await registrations(['help', 'help'])).stdout).toContain('Usage: eventops registrations help [options] [id-or-reference]');
    // Options without a reference are a decision missing its registration, not a request for help.
    const forgot = await registrations(['help', '--decided']);
    expect(forgot.code).toBe(2);
    expect(forgot.stderr).toContain('name the registration');

    const bare = await registrations(['help', reference]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('--decided');
    expect((await row(id)).help_decided_at).toBeNull();

    const decided = await registrations(['help', reference, '--decided', '--note', 'they will pay by 1 May', '--json']);
    expect(decided.stderr).toBe('');
    expect(decided.code).toBe(0);
    expect(JSON.parse(decided.stdout)).toMatchObject({ help: { reference, status: 'PENDING' } });
    expect((await row(id)).help_decided_at).not.toBeNull();
    expect(await office.db('operations_alerts').where({ kind: 'help_requested' }).whereRaw(`details->>'registrationId' = ?`, [id]).first()).toMatchObject({
      resolution: expect.stringContaining('decided without help recorded'),
    });
    expect((await registrations(['show', reference])).stdout).toMatch(/Help with the cost: asked on the form .*; decided .* by /);
    expect((await registrations(['show', reference])).stdout).toMatch(/help decided by .*they will pay by 1 May/);
    expect((await registrations(['list', '--event', event.slug])).stdout).not.toContain('help asked');

    const again = await registrations(['help', reference, '--decided']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('was decided on');
  });

  it('a credit recorded decides the request; a registration whose family never asked has none to decide', async () => {
    const event = await insertEvent(office.db, { help_with_cost: true });
    const { id, reference } = await askedForHelp(event.id, 'credit-decides@example.org');
    expect((await registrations(['credit', reference, '--amount', '100', '--fund', 'Camp scholarships'])).code).toBe(0);
    expect((await row(id)).help_decided_at).not.toBeNull();
    expect((await registrations(['list', '--event', event.slug])).stdout).not.toContain('help asked');

    const { id: other } = await insertRegistration(office.db, office.context().cipher, event.id, { status: 'PENDING', payment_method: 'bank', total_minor: 12000 });
    const never = await registrations(['help', paymentReference(other), '--decided']);
    expect(never.code).toBe(1);
    expect(never.stderr).toContain('did not ask about help with the cost');
  });
});
