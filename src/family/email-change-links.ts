import type { AppConfig } from '../config/types.js';
import { authSecretKey, signToken, verifyToken } from '../crypto/signed-tokens.js';
import { publicBaseUrl } from '../payments/links.js';

/**
 * The two links of an email change (email-change.ts): "confirm", emailed to the new address, and "undo", emailed to
 * the old one once the change is confirmed. Each is the change's id signed with a key derived from AUTH_SECRET for
 * that use alone, so one can never stand for the other; whether the change is still pending (or still undoable) is
 * the database's to say.
 */
export type EmailChangeLinkKind = 'confirm' | 'undo';

export const EMAIL_CHANGE_CONFIRM_PATH = '/email-change/confirm/';
export const EMAIL_CHANGE_UNDO_PATH = '/email-change/undo/';
/** Ours are 43 characters; anything longer opens nothing. */
export const MAX_EMAIL_CHANGE_TOKEN_LENGTH = 100;

const UUID_BYTES = 16;
function keyFor(authSecret: string, kind: EmailChangeLinkKind): Buffer {
  return authSecretKey(authSecret, `email-change-${kind}`);
}

export function emailChangeToken(authSecret: string, kind: EmailChangeLinkKind, changeId: string): string {
  return signToken(keyFor(authSecret, kind), Buffer.from(changeId.replaceAll('-', ''), 'hex'));
}

/** The change a token names, or undefined for anything we did not sign for this kind. */
export function readEmailChangeToken(authSecret: string, kind: EmailChangeLinkKind, token: string): string | undefined {
  if (token.length > MAX_EMAIL_CHANGE_TOKEN_LENGTH) return undefined;
  const payload = verifyToken(keyFor(authSecret, kind), token);
  if (!payload || payload.length !== UUID_BYTES) return undefined;
  const hex = payload.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function emailChangeUrl(config: Pick<AppConfig, 'authUrl' | 'appUrl' | 'authSecret'>, kind: EmailChangeLinkKind, changeId: string): string {
  const path = kind === 'confirm' ? EMAIL_CHANGE_CONFIRM_PATH : EMAIL_CHANGE_UNDO_PATH;
  return `${publicBaseUrl(config)}${path}${emailChangeToken(config.authSecret, kind, changeId)}`;
}
