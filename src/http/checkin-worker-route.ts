import type { FastifyInstance } from 'fastify';
import { browserAsset } from './browser-assets.js';
import { CHECKIN_WORKER_PATH } from './checkin-offline-names.js';

/**
 * The check-in page's service worker (src/http/assets/checkin-sw.ts, built to dist/assets/checkin-sw.js), served
 * at /checkin/sw.js: a worker controls the pages under the folder its script is served from, so this address's
 * scope, /checkin/, covers every link's page. The static route wins over /checkin/:token, and "sw.js" is never a
 * token (43 characters). The Content-Security-Policy allows it by `worker-src 'self'` (security-headers.ts).
 */
export const CHECKIN_WORKER_SCRIPT = 'checkin-sw.js';

/** Where the page registers its worker from; none when the worker was not built (the page then works online only). */
export function checkinWorkerPath(): string | undefined {
  return browserAsset(CHECKIN_WORKER_SCRIPT) ? CHECKIN_WORKER_PATH : undefined;
}

export function registerCheckinWorker(app: FastifyInstance): void {
  app.get(CHECKIN_WORKER_PATH, async (_request, reply) => {
    const asset = browserAsset(CHECKIN_WORKER_SCRIPT);
    if (!asset) return reply.callNotFound();
    // Checked at every registration (a browser looks at least daily), so a new build's worker replaces the old one.
    return reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(asset.body);
  });
}
