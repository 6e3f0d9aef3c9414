import type { Page } from 'playwright-core';

/** The smallest box a finger taps reliably (WCAG 2.5.5, Apple's and Google's guidance): 44 × 44 CSS pixels. */
export const MIN_TAP_TARGET = 44;

/**
 * Every visible control on the page whose clickable box is under MIN_TAP_TARGET in width or height, with none
 * of its labels big enough either (a radio's or a checkbox's label row counts as its box): one line each, e.g.
 * `button#remove "Remove" 62×36`. Evaluated in the page as a string, so the tests need no DOM types.
 */
export async function smallTapTargets(page: Page): Promise<string[]> {
  return (await page.evaluate(`(() => {
    const min = ${MIN_TAP_TARGET} - 0.5;
    const big = (box) => box.width >= min && box.height >= min;
    const controls = Array.from(document.querySelectorAll('a[href], button, input:not([type="hidden"]), select, textarea, summary'));
    return controls.flatMap((control) => {
      const box = control.getBoundingClientRect();
      if (box.width === 0 && box.height === 0) return [];
      if (getComputedStyle(control).visibility === 'hidden' || control.closest('[hidden]')) return [];
      if (big(box)) return [];
      const labels = [...(control.labels || []), control.closest('label')].filter(Boolean);
      if (labels.some((label) => big(label.getBoundingClientRect()))) return [];
      const text = (control.textContent || control.getAttribute('aria-label') || control.name || '').trim().slice(0, 40);
      return [control.tagName.toLowerCase() + (control.id ? '#' + control.id : '') + ' "' + text + '" ' + Math.round(box.width) + '×' + Math.round(box.height)];
    });
  })()`)) as string[];
}
