import { describe, expect, it } from 'vitest';
import { paymentReference } from '../../src/registrations/reference.js';
import { runCli } from '../support/cli.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { useOfficeCli } from '../support/office-cli.js';

// The subprocess runs the built command on this file's own database.
const office = useOfficeCli();
const cli = (args: string[]) => runCli(['registrations', 'cancel', ...args], { env: office.env });

async function pendingHolds(count: number) {
  const event = await insertEvent(office.db, { starts_at: new Date(Date.now() + 30 * 86_400_000) });
  const cipher = office.context().cipher;
  const ids: string[] = [];
  for (let n = 0; n < count; n += 1) {
    ids.push((await insertRegistration(office.db, cipher, event.id, { status: 'PENDING', attendee_count: 10, client_key: '198.51.100.7' })).id);
  }
  return ids;
}
const statusOf = async (id: string) => (await office.db('registrations').where({ id }).first<{ status: string }>()).status;

describe('registrations cancel with several references (the command an unpaid-places alert gives)', () => {
  it('cancels each in turn and lists each; exit 0 when all were cancelled', async () => {
    const ids = await pendingHolds(3);
    const references = ids.map(paymentReference);
    const result = await cli([...references, '--note', 'unpaid places held from one connection']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    for (const reference of references) expect(result.stdout).toContain(`cancelled registration ${reference}: 10 seats freed`);
    expect(result.stdout).toContain('3 of 3 registrations cancelled');
    for (const id of ids) expect(await statusOf(id)).toBe('CANCELLED');
    const history = await office.db('registration_history').whereIn('registration_id', ids).where({ action: 'cancelled' }).select('note');
    expect(history.map((row) => row.note)).toEqual(Array(3).fill('unpaid places held from one connection'));
  });

  it('a reference that fails (already cancelled, unknown, too short) does not stop the others; exit 1, each listed', async () => {
    const [done, first, second] = await pendingHolds(3);
    await cli([paymentReference(done!)]);
    const unknown = 'FFFFFFFF';
    const result = await cli([paymentReference(done!), paymentReference(first!), unknown, 'AB', paymentReference(second!)]);
    expect(result.code).toBe(1);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(new RegExp(`^not cancelled ${paymentReference(done!)}: registration ${paymentReference(done!)} was already cancelled on `)),
      `cancelled registration ${paymentReference(first!)}: 10 seats freed`,
      expect.stringMatching(new RegExp(`^not cancelled ${unknown}: `)),
      expect.stringMatching(/^not cancelled AB: /),
      `cancelled registration ${paymentReference(second!)}: 10 seats freed`,
      '2 of 5 registrations cancelled; 3 failed',
    ]);
    expect(await statusOf(first!)).toBe('CANCELLED');
    expect(await statusOf(second!)).toBe('CANCELLED');
  });

  it('--json lists the cancellations and the failures apart; one reference alone keeps its own exit code', async () => {
    const [one, two] = await pendingHolds(2);
    const json = await cli([paymentReference(one!), 'FFFFFFFE', '--json']);
    expect(json.code).toBe(1);
    const parsed = JSON.parse(json.stdout) as { cancellations: Array<{ reference: string }>; failures: Array<{ registration: string; code: string }> };
    expect(parsed.cancellations.map((c) => c.reference)).toEqual([paymentReference(one!)]);
    expect(parsed.failures).toEqual([expect.objectContaining({ registration: 'FFFFFFFE', code: 'registration_not_found' })]);

    // A single reference: as before, a reference too short is a usage error (2) and an unknown one a failure (1).
    expect((await cli(['AB'])).code).toBe(2);
    expect((await cli(['FFFFFFFD'])).code).toBe(1);
    const single = await cli([paymentReference(two!)]);
    expect(single.code).toBe(0);
    expect(single.stdout).toBe(`cancelled registration ${paymentReference(two!)}: 10 seats freed\n`);
  });
});
