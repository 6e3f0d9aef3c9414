/**
 * The check-in page's service worker (served at /checkin/sw.js by checkin-worker-route.ts; its scope, /checkin/,
 * covers every link's page). It makes one thing possible: a reload while the phone is offline shows the page as
 * this phone last had it, and the script then shows the taps still queued in localStorage over it.
 * - A link's page is fetched from the server first, always; only when the server cannot be reached (or fails,
 *   5xx) is the copy kept for that very address shown. A page is kept by its plain address in a cache of its own
 *   (pageCacheName), so one link's roll is never shown for another's.
 * - The server's 404 (the link revoked, expired or never made) drops that link's copy; a copy is never shown
 *   after the link's expiry (the page's x-checkin-link-expires), and expired copies are dropped as found.
 * - The page's script is kept by its versioned address. Nothing else is kept: uploads and payments (POST) go to
 *   the server as they are, and other pages are outside this worker's scope.
 */
import { ASSET_CACHE, CHECKIN_PAGE_PATH, LINK_EXPIRES_HEADER, PAGE_CACHE_PREFIX, pageCacheName } from '../checkin-offline-names.js';

// The worker's own types, which the DOM's library (this folder's tsconfig) does not declare.
interface ExtendableEvent extends Event {
  waitUntil(promise: Promise<unknown>): void;
}
interface FetchEvent extends ExtendableEvent {
  readonly request: Request;
  respondWith(response: Promise<Response>): void;
}
interface WorkerScope {
  readonly location: { readonly origin: string };
  skipWaiting(): Promise<void>;
  readonly clients: { claim(): Promise<void> };
  addEventListener(type: 'install' | 'activate', listener: (event: ExtendableEvent) => void): void;
  addEventListener(type: 'fetch', listener: (event: FetchEvent) => void): void;
}
const worker = globalThis as unknown as WorkerScope;

worker.addEventListener('install', (event) => event.waitUntil(worker.skipWaiting()));
worker.addEventListener('activate', (event) => event.waitUntil(Promise.all([worker.clients.claim(), dropExpiredCopies()])));
worker.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== worker.location.origin) return;
  if (request.mode === 'navigate' && CHECKIN_PAGE_PATH.test(url.pathname)) {
    event.respondWith(linkPage(request, url));
    event.waitUntil(dropExpiredCopies());
  } else if (url.pathname.startsWith('/assets/')) {
    event.respondWith(pageScript(request));
  }
});

async function linkPage(request: Request, url: URL): Promise<Response> {
  const cacheName = pageCacheName(url.pathname);
  let response: Response;
  try {
    response = await fetch(request);
  } catch {
    return (await keptCopy(cacheName, url)) ?? notOnThisPhone();
  }
  if (response.status === 200) {
    // Kept by its plain address only: an address with a search or a notice is kept by the page's script.
    if (url.search === '') await (await caches.open(cacheName)).put(url.pathname, response.clone());
  } else if (response.status === 404) {
    await caches.delete(cacheName);
  } else if (response.status >= 500) {
    return (await keptCopy(cacheName, url)) ?? response;
  }
  return response;
}

/** The copy kept for this link's page, unless its link has expired by now (it is then dropped). */
async function keptCopy(cacheName: string, url: URL): Promise<Response | undefined> {
  if (!(await caches.has(cacheName))) return undefined;
  const kept = await (await caches.open(cacheName)).match(url.pathname);
  if (!kept) return undefined;
  if (expired(kept)) {
    await caches.delete(cacheName);
    return gonePage();
  }
  return kept;
}

const expired = (kept: Response) => !(Date.parse(kept.headers.get(LINK_EXPIRES_HEADER) ?? '') > Date.now());

/** Drops the copies whose link has expired. */
async function dropExpiredCopies(): Promise<void> {
  for (const name of (await caches.keys()).filter((key) => key.startsWith(PAGE_CACHE_PREFIX))) {
    const pages = await (await caches.open(name)).matchAll();
    if (pages.some(expired)) await caches.delete(name);
  }
}

/** The page's script: the kept one, else fetched and kept, in place of any older build's. */
async function pageScript(request: Request): Promise<Response> {
  const kept = await caches.match(request, { cacheName: ASSET_CACHE });
  if (kept) return kept;
  const response = await fetch(request);
  if (response.ok) {
    const cache = await caches.open(ASSET_CACHE);
    const file = (url: string) => new URL(url).pathname.split('/').pop();
    for (const old of await cache.keys()) if (file(old.url) === file(request.url)) await cache.delete(old);
    await cache.put(request, response.clone());
  }
  return response;
}

function plainPage(status: number, title: string, text: string): Response {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title></head><body><main><h1>${title}</h1><p>${text}</p></main></body></html>`;
  return new Response(html, {
    status,
    headers: { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': "default-src 'none'", 'cache-control': 'no-store' },
  });
}

function notOnThisPhone(): Response {
  return plainPage(503, 'No connection', 'This check-in page has not been kept on this phone yet: open it once with a connection, then it opens offline too.');
}

function gonePage(): Response {
  return plainPage(410, 'This check-in link has expired', 'Ask the office for a new link.');
}
