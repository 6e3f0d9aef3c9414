/**
 * What the check-in page keeps on a volunteer's phone, named alike by the server, the page's script and its
 * service worker (src/http/assets/checkin.ts, checkin-sw.ts). Pure constants: the browser's bundles import them.
 */

/** The worker's address: its folder, /checkin/, is its scope, which covers every link's page. */
export const CHECKIN_WORKER_PATH = '/checkin/sw.js';
export const CHECKIN_WORKER_SCOPE = '/checkin/';

/** A check-in page's address: its link's token is 43 characters of base64url (door/links.ts). */
export const CHECKIN_PAGE_PATH = /^\/checkin\/[A-Za-z0-9_-]{43}$/;

/** The page's answer names when its link stops working, so that a copy is never shown past it. */
export const LINK_EXPIRES_HEADER = 'x-checkin-link-expires';

/** One cache per link's page: one link's roll is never shown for another, and dropping one drops nothing else. */
export const PAGE_CACHE_PREFIX = 'eventops-checkin-page:';
export function pageCacheName(pagePath: string): string {
  return `${PAGE_CACHE_PREFIX}${pagePath}`;
}

/** The page's script, kept by its versioned address (no roll in it). */
export const ASSET_CACHE = 'eventops-checkin-assets';
