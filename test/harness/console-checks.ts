/**
 * The check every browser suite of the console makes on each screen it visits: no serious or
 * critical axe finding, and no Content-Security-Policy violation reported so far. Apart from
 * console-pages.ts, which the screenshot script shares and which therefore imports nothing of vitest.
 */
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { seriousAccessibilityProblems, type watchCsp } from './console-pages.js';

export async function checkScreen(page: Page, csp: Awaited<ReturnType<typeof watchCsp>>, name: string): Promise<void> {
  expect(await seriousAccessibilityProblems(page), `axe on ${name}`).toEqual([]);
  expect(await csp.violations(), `CSP on ${name}`).toEqual([]);
}
