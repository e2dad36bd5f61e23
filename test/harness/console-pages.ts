/**
 * Driving the console (/console) and the account pages (/account) in Chromium as a person does:
 * by their labels and roles, never by CSS classes. Shared by the browser suite
 * (test/system/console-browser.test.ts) and the screenshot script (scripts/console-screenshots.ts),
 * so it imports nothing of vitest.
 */
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';

/** Collects what the page reports against its Content-Security-Policy, from the first script on. */
export async function watchCsp(page: Page): Promise<{ violations(): Promise<string[]>; consoleErrors: string[] }> {
  const consoleErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
  await page.addInitScript(() => {
    const w = window as unknown as { cspViolations: string[] };
    w.cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) => w.cspViolations.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`));
  });
  return {
    consoleErrors,
    violations: () => page.evaluate(() => (window as unknown as { cspViolations?: string[] }).cspViolations ?? []),
  };
}

/** Signs in with the password form, then the second factor's code when one is asked. */
export async function signIn(page: Page, username: string, password: string, totp?: () => string): Promise<void> {
  await page.getByLabel('Username or email').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  if (totp) {
    await page.getByLabel('Code from your authenticator app').fill(totp());
    await page.getByRole('button', { name: 'Verify' }).click();
  }
}

/** The forced change of a temporary password, which then signs in. */
export async function chooseFirstPassword(page: Page, password: string): Promise<void> {
  await page.getByRole('heading', { name: 'Choose your password' }).waitFor();
  await page.getByLabel('New password', { exact: true }).fill(password);
  await page.getByLabel('New password again').fill(password);
  await page.getByRole('button', { name: 'Set the password' }).click();
}

/** Creates a user on the console's "New user" screen; returns the temporary password it shows once. */
export async function createUser(page: Page, user: { username: string; fullName: string; email: string }): Promise<string> {
  await page.getByRole('navigation').getByRole('link', { name: 'New user' }).click();
  await page.getByLabel('Username').fill(user.username);
  await page.getByLabel('Full name').fill(user.fullName);
  await page.getByLabel('Email').fill(user.email);
  await page.getByRole('button', { name: 'Create the user' }).click();
  return (await page.getByTestId('temporary-password').textContent()) ?? '';
}

/**
 * axe-core's serious and critical findings on the page as it is now (id, impact, where). React
 * Aria's live announcer (a visually hidden region it keeps for screen readers) is left out: a
 * button that was pending announces itself there by reference for 7 seconds, even after it left
 * the page (the sign-in button, once signed in), which axe reads as an image without a name.
 */
export async function seriousAccessibilityProblems(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page: page as never }).exclude('[data-live-announcer]').analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}
