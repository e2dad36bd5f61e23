import { readFileSync } from 'node:fs';
import path from 'node:path';
import { getHeapStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { collectGarbage, QUIET_BYTES_PER_SECOND, wasQuiet } from './memory.js';

const SRC = path.resolve(import.meta.dirname, '..');

/**
 * The packages every module `src/server.ts` loads at start reaches through static imports (value
 * imports and re-exports; `import type` is left out, dynamic `import()` too). A plain reading of
 * the source: it may count an import TypeScript elides, never miss one it keeps.
 */
function startupPackages(): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const pending = [path.join(SRC, 'server.ts')];
  const statics = /^\s*(?:import|export)\s+(?!type\s)(?:[^;'"]*?\sfrom\s+)?['"]([^'"]+)['"]/gm;
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(statics)) {
      if (spec!.startsWith('.')) pending.push(path.resolve(path.dirname(file), spec!.replace(/\.js$/, '.ts')));
      else if (!spec!.startsWith('node:')) packages.add(spec!.startsWith('@') ? spec!.split('/').slice(0, 2).join('/') : spec!.split('/')[0]!);
    }
  }
  return packages;
}

describe('idle memory (docs/benchmarks.md "Idle memory")', () => {
  it('threat: idle memory regrows: the start-up import graph leaves out what a deployment may not use (PGlite, SAML and XML, the MCP SDK and zod, nodemailer)', () => {
    const loaded = startupPackages();
    expect(loaded.has('fastify')).toBe(true); // the walk does find the server's packages
    expect(loaded.has('pg')).toBe(true);
    for (const lazy of ['@electric-sql/pglite', 'kysely-pglite-dialect', '@node-saml/node-saml', '@xmldom/xmldom', '@modelcontextprotocol/sdk', 'zod', 'nodemailer', 'qrcode']) {
      expect(loaded.has(lazy), `${lazy} is imported at start`).toBe(false);
    }
  });

  it('a window is quiet when the heap grew by less than the low allocation rate and no collection ran', () => {
    const window = 6000;
    const limit = (QUIET_BYTES_PER_SECOND * window) / 1000;
    expect(wasQuiet(10_000_000, 10_000_000, window)).toBe(true);
    expect(wasQuiet(10_000_000, 10_000_000 + limit - 1, window)).toBe(true);
    expect(wasQuiet(10_000_000, 10_000_000 + limit, window)).toBe(false); // allocating
    expect(wasQuiet(10_000_000, 9_000_000, window)).toBe(false); // a collection ran: allocating
  });

  it('collects without leaving a gc function in the server\'s context', () => {
    const before = getHeapStatistics().used_heap_size;
    const c = collectGarbage();
    expect(c.heapAfterMiB).toBeGreaterThan(0);
    expect(c.heapAfterMiB).toBeLessThanOrEqual(c.heapBeforeMiB + 1);
    expect(getHeapStatistics().used_heap_size).toBeLessThan(before + 50 * 1048576);
    expect('gc' in globalThis).toBe(false);
  });
});
