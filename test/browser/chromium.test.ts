import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { resolveChromium } from '../support/chromium.js';

describe('the browser tests need only Node and npm', () => {
  it('without CHROMIUM_PATH or a system Chromium, the Chromium packaged in the npm registry launches and drives a page', async () => {
    const executable = await resolveChromium({}, []);
    expect(executable.source).toBe('@sparticuz/chromium');
    const browser = await chromium.launch({
      executablePath: executable.path,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    try {
      const page = await browser.newPage();
      await page.setContent('<label>Name <input id="name"></label>');
      await page.fill('#name', 'Ruth');
      expect(await page.inputValue('#name')).toBe('Ruth');
    } finally {
      await browser.close();
    }
  });

  it('CHROMIUM_PATH wins, and a wrong one is named rather than silently replaced', async () => {
    await expect(resolveChromium({ CHROMIUM_PATH: '/nonexistent/chromium' })).rejects.toThrow(/CHROMIUM_PATH names \/nonexistent\/chromium/);
    const packaged = await resolveChromium({}, []);
    expect(await resolveChromium({ CHROMIUM_PATH: packaged.path }, ['/usr/bin/chromium'])).toEqual({ path: packaged.path, source: 'CHROMIUM_PATH' });
  });
});
