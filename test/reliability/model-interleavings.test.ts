import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codesCreditsCommands, interleavingProperty, waitlistCommands, type InterleavingCounters } from '../../soak/cases/model-interleavings.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';

let harness: PaymentsHarness;

beforeAll(async () => {
  harness = await startPaymentsHarness();
});
afterAll(async () => {
  await harness.close();
});

describe('model-based interleavings of checkout, payment, sweep, reversal events and office commands (real PostgreSQL)', () => {
  it('after every step: one registration per checkout, capacity kept, every charge registered or alerted, no refunds', async () => {
    const counters: InterleavingCounters = { runs: 0, commands: 0 };
    // A fixed seed: the same 20 runs on every machine, so the count below cannot fall short by chance
    // (about one run in eight drew fewer than 120 commands). The soak draws new runs every time.
    await fc.assert(interleavingProperty(harness, counters, 30), { numRuns: 30, seed: 7 });
    expect(counters.runs).toBeGreaterThanOrEqual(20);
    expect(counters.commands).toBeGreaterThan(120);
    expect(harness.provider.refundCalls).toEqual([]);
  }, 60_000);

  it('with the waiting list: no place counted twice, an offer claimed once and never after it expired, no offer open once the event started', async () => {
    const counters: InterleavingCounters = { runs: 0, commands: 0 };
    await fc.assert(interleavingProperty(harness, counters, 30, waitlistCommands), { numRuns: 20, seed: 7 });
    console.log(`waiting-list steps: ${JSON.stringify(counters.waitlist)}`);
    // The generated runs really reach every waiting-list step, not only its refusals (a claim needs an offer, made by the pass or the sweep).
    expect(counters.waitlist).toMatchObject({
      'joinWaitlist.joined': expect.any(Number),
      waitlistPass: expect.any(Number),
      'claimOffer.claimed': expect.any(Number),
      'selfCancel.cancelled': expect.any(Number),
    });
    expect(harness.provider.refundCalls).toEqual([]);
  }, 60_000);

  it('with codes of few uses and help with the cost: uses never above the limit and given back once, every cent of help in the ledger once', async () => {
    const counters: InterleavingCounters = { runs: 0, commands: 0 };
    await fc.assert(interleavingProperty(harness, counters, 30, codesCreditsCommands), { numRuns: 20, seed: 7 });
    console.log(`codes and credits steps: ${JSON.stringify(counters.waitlist)}`);
    // The runs reach the last use and its refusal, each way of registering with a code, and credits recorded and reversed.
    expect(counters.waitlist).toMatchObject({
      'codeRegister.card.taken': expect.any(Number),
      'codeRegister.bank.taken': expect.any(Number),
      'codeRegister.office.taken': expect.any(Number),
      'codeRegister.usedUp': expect.any(Number),
      'reverseCredit.reversed': expect.any(Number),
    });
    // Credits are recorded, for part of a balance or all of it: which of the two a seed reaches depends on the
    // balances the earlier steps left (a credit settling a balance is its own test in credits-cli).
    const credited = (counters.waitlist?.['officeCredit.part'] ?? 0) + (counters.waitlist?.['officeCredit.settled'] ?? 0);
    expect(credited).toBeGreaterThan(0);
  }, 90_000);
});
