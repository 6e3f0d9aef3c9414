import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { packageRoot } from '../config/env-file.js';

/** The event page's script, built by `npm run build` (scripts/bundle-browser.mjs) from src/http/assets/. */
export const REGISTRATION_FORM_SCRIPT = 'registration-form.js';
/** The check-in page's script (src/http/assets/checkin.ts): search, and check-ins queued while offline. */
export const CHECKIN_SCRIPT = 'checkin.js';

interface BrowserAsset {
  body: Buffer;
  /** A hash of the content, in the script's address: a new build is never served from an old cache. */
  version: string;
}

/** The built files, read once: they change only with a new build, and a new build restarts the app. */
const loaded = new Map<string, BrowserAsset | null>();

/** A built file by name; undefined when it was not built. */
export function browserAsset(name: string): BrowserAsset | undefined {
  if (!loaded.has(name)) {
    try {
      const body = fs.readFileSync(path.join(packageRoot(), 'dist', 'assets', name));
      loaded.set(name, { body, version: crypto.createHash('sha256').update(body).digest('hex').slice(0, 16) });
    } catch {
      // Not built (running from source without `npm run build`): the pages work without their script.
      loaded.set(name, null);
    }
  }
  return loaded.get(name) ?? undefined;
}

/** The address a page loads the script from, naming its version; none when it was not built. */
export function browserAssetPath(name: string): string | undefined {
  const asset = browserAsset(name);
  return asset ? `/assets/${asset.version}/${name}` : undefined;
}

const assetParams = z.object({ version: z.string().max(64) });

/**
 * GET /assets/<version>/<script>: same origin, so the Content-Security-Policy's script-src 'self' allows it.
 * The current version is kept for a year (a new build has a new address); any other, the page of an older
 * build still open in a browser, gets the current script, not to be kept.
 */
export function registerBrowserAssets(app: FastifyInstance): void {
  for (const script of [REGISTRATION_FORM_SCRIPT, CHECKIN_SCRIPT]) registerScript(app, script);
}

function registerScript(app: FastifyInstance, script: string): void {
  app.get(`/assets/:version/${script}`, async (request, reply) => {
    const asset = browserAsset(script);
    if (!asset) return reply.callNotFound();
    const current = assetParams.safeParse(request.params).data?.version === asset.version;
    return reply
      .type('text/javascript; charset=utf-8')
      .header('cache-control', current ? 'public, max-age=31536000, immutable' : 'no-cache')
      .send(asset.body);
  });
}
