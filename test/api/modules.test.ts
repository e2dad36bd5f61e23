/**
 * The composed service: every module's background jobs are registered with the scheduler, and
 * docs/operations.md "Background jobs" lists exactly those (a job that is dropped, renamed or
 * added without the runbook fails here).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

function documentedJobs(): string[] {
  const doc = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## Background jobs'));
  const table = section.slice(0, section.indexOf('\n## ') === -1 ? undefined : section.indexOf('\n## '));
  return table.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| Job ') && !l.startsWith('|---')).map((l) => l.split('|')[1]!.trim());
}

describe('capability modules', () => {
  it('every job the runbook lists is registered, and no other', () => {
    const documented = documentedJobs();
    expect(documented.length).toBeGreaterThanOrEqual(12);
    expect([...t.scheduler.names()].sort()).toEqual([...documented].sort());
  });

  it('every registered job runs to the end on a fresh service', async () => {
    expect(t.scheduler.names().length).toBeGreaterThan(0);
    for (const name of t.scheduler.names()) expect(await t.scheduler.runNow(name), name).toBe(true);
  });
});
