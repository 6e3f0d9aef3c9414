import fs from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';

/**
 * Where the browser tests leave a full-page picture of each page they check (ignored by git): a reviewer
 * looks at how a page reads on a phone without running anything. `SCREENSHOT_DIR` moves it elsewhere.
 */
export const SCREENSHOT_DIR = process.env.SCREENSHOT_DIR ?? path.resolve('test-artifacts/screenshots');

/**
 * Keeps a full-page screenshot of `page` as `<name>.png` at the page's current viewport (the phone
 * tests use 390 px). Names are lower-case words joined by dashes, e.g. `manage-page-paid`.
 */
export async function keepScreenshot(page: Page, name: string): Promise<string> {
  if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(name)) throw new Error(`screenshot name "${name}": use lower-case words joined by dashes`);
  await fs.mkdir(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
