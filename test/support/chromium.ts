import fs from 'node:fs';

/** Where distributions put their Chromium; the first that exists is used. */
const SYSTEM_CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/**
 * The Chromium the browser tests drive: the one CHROMIUM_PATH names, else a
 * system Chromium, else the build shipped inside the `@sparticuz/chromium` npm
 * package (unpacked once into the temporary directory), so `npm ci && npm test`
 * needs nothing but Node and npm.
 */
export async function resolveChromium(
  env: NodeJS.ProcessEnv = process.env,
  systemCandidates: readonly string[] = SYSTEM_CHROMIUM,
): Promise<{ path: string; source: string }> {
  const named = env.CHROMIUM_PATH;
  if (named) {
    if (!fs.existsSync(named)) throw new Error(`CHROMIUM_PATH names ${named}, which does not exist`);
    return { path: named, source: 'CHROMIUM_PATH' };
  }
  const system = systemCandidates.find((candidate) => fs.existsSync(candidate));
  if (system) return { path: system, source: 'system' };
  const { default: PackagedChromium } = await import('@sparticuz/chromium');
  return { path: await PackagedChromium.executablePath(), source: '@sparticuz/chromium' };
}
