import { counted } from '../plural.js';

/** The check-in page's words, written by the server and by the page's script alike. */

/** "84 of 120 here". */
export function hereText(here: number, total: number): string {
  return `${here} of ${total} here`;
}

/** "1 check-in waiting to upload", "3 check-ins waiting to upload" (undo and check-out count as check-ins here). */
export function waitingText(waiting: number): string {
  return `${counted(waiting, 'check-in', 'check-ins')} waiting to upload`;
}

/**
 * Why the server refused a link's upload: the error code of its answer (checkin-routes.ts). Only a token that once
 * opened a page can be told revoked or expired; one never made, or of a deleted event, is `not_found`.
 */
export const LINK_REFUSALS = ['link_revoked', 'link_expired', 'not_found'] as const;
export type LinkRefusal = (typeof LINK_REFUSALS)[number];

const WHY: Record<LinkRefusal, string> = {
  link_revoked: 'this link was revoked',
  link_expired: 'this link has expired',
  not_found: 'this link no longer works',
};

/** "3 check-ins were not saved: this link was revoked. Ask the office for a new link." */
export function refusedText(refused: number, reason: LinkRefusal): string {
  const why = WHY[reason];
  const what = refused === 0 ? `Nothing more can be saved: ${why}.` : `${counted(refused, 'check-in was', 'check-ins were')} not saved: ${why}.`;
  return `${what} Ask the office for a new link.`;
}
