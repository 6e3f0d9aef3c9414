// Bundles the event page's script (src/http/assets/registration-form.ts) into dist/assets/registration-form.js,
// served by the app at /assets/. It imports the server's own pricing (src/registrations/pricing.ts), so the
// total the page shows is computed by the very function that prices the registration.
import { build } from 'esbuild';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

await build({
  absWorkingDir: root,
  entryPoints: {
    'registration-form': 'src/http/assets/registration-form.ts',
    checkin: 'src/http/assets/checkin.ts',
    // The check-in page's service worker, served at /checkin/sw.js (its scope must cover the page).
    'checkin-sw': 'src/http/assets/checkin-sw.ts',
  },
  outdir: 'dist/assets',
  bundle: true,
  format: 'iife',
  platform: 'browser',
  // BigInt (the card fee's exact arithmetic): a browser without it keeps the complete form that needs no script.
  target: 'es2020',
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
});
