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
