import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, renderErrorsDoc } from './error-catalogue.js';

describe('error catalogue', () => {
  const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
  const all = Object.values(ERROR_CATALOGUE).flatMap((c) => Object.entries(c));

  it('has unique, SCREAMING_SNAKE codes with a 4xx or 5xx status', () => {
    const codes = all.map(([code]) => code);
    expect(new Set(codes).size).toBe(codes.length);
    for (const [code, def] of all) {
      expect(code).toMatch(/^[A-Z0-9][A-Z0-9_]*$/);
      expect(def.status).toBeGreaterThanOrEqual(400);
      expect(def.status).toBeLessThan(600);
    }
  });

  it('is documented row by row in docs/errors.md with the right status', () => {
    for (const [code, def] of all) expect(doc, code).toContain(`| \`${code}\` | ${def.status} |`);
  });

  it('docs/errors.md is what `npm run docs:errors` generates', () => {
    expect(doc).toBe(renderErrorsDoc());
  });
});
