import type { AppConfig } from '../../config/types.js';
import { claimToken, confirmToken, leaveToken, type ClaimTokenPayload } from './tokens.js';

type LinkConfig = Pick<AppConfig, 'authUrl' | 'appUrl' | 'keyring'>;

/** The public base URL, or undefined when none is configured (the email then goes without the link). */
function base(config: LinkConfig): string | undefined {
  const url = config.authUrl ?? config.appUrl;
  return url ? url.replace(/\/+$/, '') : undefined;
}

/** The event's registration form with the offer's places reserved and the contact filled in. */
export function claimPath(config: Pick<AppConfig, 'keyring'>, slug: string, claim: ClaimTokenPayload): string {
  return `/events/${encodeURIComponent(slug)}?offer=${claimToken(config.keyring, claim)}`;
}

export function claimUrl(config: LinkConfig, slug: string, claim: ClaimTokenPayload): string | undefined {
  const root = base(config);
  return root ? `${root}${claimPath(config, slug, claim)}` : undefined;
}

export function leavePath(config: Pick<AppConfig, 'keyring'>, entryId: string): string {
  return `/waitlist/leave/${leaveToken(config.keyring, entryId)}`;
}

export function leaveUrl(config: LinkConfig, entryId: string): string | undefined {
  const root = base(config);
  return root ? `${root}${leavePath(config, entryId)}` : undefined;
}

/** The join email's link: GET shows a button (mail scanners follow links), POST confirms. */
export function confirmPath(config: Pick<AppConfig, 'keyring'>, entryId: string): string {
  return `/waitlist/confirm/${confirmToken(config.keyring, entryId)}`;
}

export function confirmUrl(config: LinkConfig, entryId: string): string | undefined {
  const root = base(config);
  return root ? `${root}${confirmPath(config, entryId)}` : undefined;
}

/** The event's public page, to join again. */
export function eventUrl(config: LinkConfig, slug: string): string | undefined {
  const root = base(config);
  return root ? `${root}/events/${encodeURIComponent(slug)}` : undefined;
}
