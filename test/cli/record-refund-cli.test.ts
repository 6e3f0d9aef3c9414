import { describe, expect, it } from 'vitest';
import { paymentReference } from '../../src/registrations/reference.js';
import { runCli } from '../support/cli.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { useOfficeCli } from '../support/office-cli.js';

const office = useOfficeCli();
const cli = (args: string[]) => runCli(['registrations', ...args], { env: office.env });

describe('eventops registrations record-refund', () => {
  it('cancel points to it; it records what was paid back (exit 0), show then counts nothing paid; more than is held or an active registration exits 1 recording nothing', async () => {
    const event = await insertEvent(office.db);
    const { id } = await insertRegistration(office.db, office.context().cipher, event.id, { status: 'PENDING', total_minor: 27000, paid_at: null });
    const reference = paymentReference(id);
    expect((await cli(['mark-paid', reference, '--amount', '270'])).code).toBe(0);

    const active = await cli(['record-refund', reference, '--amount', '270']);
    expect(active.code).toBe(1);
    expect(active.stderr).toContain('only money of a cancelled registration is recorded as paid back');

    const cancelled = await cli(['cancel', reference]);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout).toContain(`$270.00 had been received. Nothing was refunded: pay back by hand what is due, then record it with \`eventops registrations record-refund ${reference} --amount …\`.`);

    const tooMuch = await cli(['record-refund', reference, '--amount', '300']);
    expect(tooMuch.code).toBe(1);
    expect(tooMuch.stderr).toContain('$300.00 is more than the church holds');

    const recorded = await cli(['record-refund', reference, '--amount', '270', '--note', 'transfer back on 3 December']);
    expect(recorded.code).toBe(0);
    expect(recorded.stdout).toBe(`recorded $270.00 paid back by bank for ${reference}; the church now holds $0.00 for it\n`);
    const shown = JSON.parse((await cli(['show', reference, '--json'])).stdout) as { registration: { paidMinor: number; refundedMinor: number } };
    expect(shown.registration).toMatchObject({ paidMinor: 0, refundedMinor: 27000 });
    expect(await office.db('registration_refunds').where({ registration_id: id }).select('amount_minor', 'method', 'note')).toEqual([
      { amount_minor: 27000, method: 'bank', note: 'transfer back on 3 December' },
    ]);
  });
});
