import { authSecretKey, signToken, verifyToken } from '../crypto/signed-tokens.js';

/**
 * The mark on the address a registration form's post redirects to when its confirmation email was held back by
 * the hourly caps: the registration's id and link version, signed with a key derived from AUTH_SECRET for this use
 * alone. Only the browser that registered is sent it, so only that page shows what the email would have (the
 * manage link among it); an address someone guesses or edits (`confirmation=held`, another registration's mark, a
 * revoked version) shows the plain registration page. It lasts as the link version does: the family's only copy,
 * bookmarked, keeps working until every link of the registration is revoked.
 */

const UUID_BYTES = 16;
const VERSION_BYTES = 4;


/** At most this long: anything longer is not one of ours (ours are 50 characters). */
export const MAX_HELD_TOKEN_LENGTH = 100;

export function heldConfirmationToken(authSecret: string, registrationId: string, linkVersion: number): string {
  const payload = Buffer.alloc(UUID_BYTES + VERSION_BYTES);
  Buffer.from(registrationId.replaceAll('-', ''), 'hex').copy(payload, 0);
  payload.writeUInt32BE(linkVersion, UUID_BYTES);
  return signToken(authSecretKey(authSecret, 'confirmation-held'), payload);
}

/** Whether `token` is the mark of this registration at its current link version. */
export function isHeldConfirmationToken(authSecret: string, registrationId: string, linkVersion: number, token: string | undefined): boolean {
  if (!token || token.length > MAX_HELD_TOKEN_LENGTH) return false;
  const payload = verifyToken(authSecretKey(authSecret, 'confirmation-held'), token);
  if (!payload || payload.length !== UUID_BYTES + VERSION_BYTES) return false;
  return payload.subarray(0, UUID_BYTES).toString('hex') === registrationId.replaceAll('-', '').toLowerCase() && payload.readUInt32BE(UUID_BYTES) === linkVersion;
}
