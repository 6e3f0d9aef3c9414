import type { Keyring } from '../../config/types.js';
import { purposeKey, signToken, verifyToken } from '../../crypto/signed-tokens.js';

/**
 * Links of the waiting-list emails. A claim token names the entry and the offer it was made
 * for (offer_seq): a link from an earlier offer never claims a later one, and once the offer is
 * claimed, expired or withdrawn the entry's state refuses it. A leave token names the entry, and so
 * does a confirm token (its entry's state and age decide whether it still confirms).
 */
const CLAIM = 'waitlist-claim';
const LEAVE = 'waitlist-leave';
const CONFIRM = 'waitlist-confirm';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface ClaimTokenPayload {
  entryId: string;
  offerSeq: number;
}

export function claimToken(keyring: Keyring, claim: ClaimTokenPayload): string {
  return signToken(purposeKey(keyring, CLAIM), Buffer.from(`${claim.entryId}:${claim.offerSeq}`, 'utf8'));
}

export function readClaimToken(keyring: Keyring, token: string): ClaimTokenPayload | undefined {
  const payload = verifyToken(purposeKey(keyring, CLAIM), token)?.toString('utf8');
  const [entryId = '', seq = ''] = payload?.split(':') ?? [];
  if (!UUID.test(entryId) || !/^\d{1,9}$/.test(seq)) return undefined;
  return { entryId, offerSeq: Number(seq) };
}

export function leaveToken(keyring: Keyring, entryId: string): string {
  return signToken(purposeKey(keyring, LEAVE), Buffer.from(entryId, 'utf8'));
}

export function readLeaveToken(keyring: Keyring, token: string): string | undefined {
  const entryId = verifyToken(purposeKey(keyring, LEAVE), token)?.toString('utf8');
  return entryId && UUID.test(entryId) ? entryId : undefined;
}

export function confirmToken(keyring: Keyring, entryId: string): string {
  return signToken(purposeKey(keyring, CONFIRM), Buffer.from(entryId, 'utf8'));
}

export function readConfirmToken(keyring: Keyring, token: string): string | undefined {
  const entryId = verifyToken(purposeKey(keyring, CONFIRM), token)?.toString('utf8');
  return entryId && UUID.test(entryId) ? entryId : undefined;
}
