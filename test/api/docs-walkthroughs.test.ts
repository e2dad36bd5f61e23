/**
 * The client developers' guides (docs/guides/, issue 25 section 6) against the service they
 * describe: every route a guide names (as `METHOD /path` in the text, as a curl command, or as an
 * SDK `request('METHOD', '/path')`) exists in the OpenAPI document with that method, so a renamed
 * or removed route cannot leave a walkthrough behind; README links every guide; the guides' own
 * links resolve; and no product document (README, the SDK's README, docs/) refers to documents
 * outside the repository.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const GUIDES = path.join(ROOT, 'docs/guides');
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

interface RouteMention {
  method: Method;
  path: string;
  file: string;
  source: string;
}

const guideFiles = (): string[] => readdirSync(GUIDES).filter((f) => f.endsWith('.md')).sort();
const read = (file: string): string => readFileSync(file, 'utf8');

/** The path as the service sees it: shell bases expanded, query and quotes dropped. */
function pathOf(raw: string): string {
  const expanded = raw.replace(/^"|"$/g, '').replace(/^\$\{?B\}?(?=\/)/, '/api/v1').replace(/^\$\{?H\}?(?=\/)/, '');
  return expanded.split(/[?#"']/)[0]!.replace(/[.,;:]+$/, '').replace(/\/+$/, '');
}

/** curl commands, continuation lines joined: the method is `-X`'s, else POST with a body, else GET. */
function curlMentions(text: string, file: string): RouteMention[] {
  const out: RouteMention[] = [];
  const lines = text.replace(/\\\n\s*/g, ' ').split('\n');
  for (const line of lines) {
    for (const command of line.split(/(?=\bcurl\s)/).filter((c) => c.startsWith('curl '))) {
      const url = /(?:^|\s)("?\$\{?[BH]\}?\/[^\s)]*)/.exec(command)?.[1];
      if (!url) continue;
      const explicit = /\s-X\s+([A-Z]+)/.exec(command)?.[1];
      const method = (explicit ?? (/\s(-d|--data\S*)\s/.test(command) ? 'POST' : 'GET')) as Method;
      out.push({ method, path: pathOf(url), file, source: command.trim().slice(0, 120) });
    }
  }
  return out;
}

/** `POST /api/v1/...` in prose or tables, and the SDK's `request('POST', '/api/v1/...')`. */
function namedMentions(text: string, file: string): RouteMention[] {
  const out: RouteMention[] = [];
  const prose = /\b(GET|POST|PUT|PATCH|DELETE)`?\s+`?(\/(?:api\/|mcp\b)[^\s`'",)]*)/g;
  const sdk = /request(?:<[^>]*>)?\(\s*['"](GET|POST|PUT|PATCH|DELETE)['"]\s*,\s*['"](\/[^'"]+)['"]/g;
  for (const re of [prose, sdk]) {
    for (const m of text.matchAll(re)) out.push({ method: m[1] as Method, path: pathOf(m[2]!), file, source: m[0] });
  }
  return out;
}

function routeMentions(text: string, file: string): RouteMention[] {
  return [...curlMentions(text, file), ...namedMentions(text, file)].filter((r) => r.path.startsWith('/api/') || r.path === '/mcp');
}

type Segment = { literal: string } | { param: true };
const segmentsOf = (p: string, isTemplate: boolean): Segment[] => p.split('/').filter(Boolean).map((s) => {
  if (/^\{[^}]+\}$/.test(s) || s.startsWith('$') || (!isTemplate && /^[0-9]+$/.test(s))) return { param: true };
  return { literal: s };
});

/**
 * The document's route that serves `mention.path`, as the router picks it: the template matching
 * every segment (a literal only its own text, a parameter anything but a guide's placeholder for
 * a literal) with the most literal segments.
 */
function serving(paths: Record<string, Record<string, unknown>>, mentioned: string): string | undefined {
  const want = segmentsOf(mentioned, false);
  let best: { template: string; score: number } | undefined;
  for (const template of Object.keys(paths)) {
    const have = segmentsOf(template, true);
    if (have.length !== want.length) continue;
    let score = 0;
    const fits = have.every((h, i) => {
      const w = want[i]!;
      if ('param' in h) return true;
      if ('param' in w) return false;
      if (h.literal !== w.literal) return false;
      score += 1;
      return true;
    });
    if (fits && (!best || score > best.score)) best = { template, score };
  }
  return best?.template;
}

let t: TestApp;
let paths: Record<string, Record<string, unknown>>;

beforeAll(async () => {
  t = await createTestApp();
  paths = ((await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> }).paths;
});
afterAll(async () => t.close());

describe('the client developers\' guides', () => {
  it('every route a guide names (prose, curl, SDK) is in the OpenAPI document with that method', () => {
    const mentions = guideFiles().flatMap((f) => routeMentions(read(path.join(GUIDES, f)), f));
    expect(mentions.length).toBeGreaterThan(60);
    for (const f of guideFiles()) expect(mentions.some((m) => m.file === f), `${f} names no route`).toBe(true);
    const missing = mentions.filter((m) => {
      const template = serving(paths, m.path);
      return template === undefined || !(m.method.toLowerCase() in paths[template]!);
    }).map((m) => `${m.file}: ${m.method} ${m.path}  (${m.source})`);
    expect(missing).toEqual([]);
  });

  it('finds routes the way a reader writes them (the extractor itself)', () => {
    const text = [
      'Call `POST /api/v1/auth/login/mobile` first; then `GET`/`DELETE /api/v1/notifications/devices/{id}`.',
      'curl -s $B/auth/refresh -H "$J" -d \'{"refresh_token":"x"}\'',
      'curl -s -X PUT $B/notifications/devices/$DEVICE/deactivate -H "authorization: Bearer $T"',
      'curl -s "$B/admin/device-bindings?status=pending" -H "authorization: Bearer $ADMIN"',
      'curl -s $H/mcp -H "$J" \\',
      '  -d \'{"jsonrpc":"2.0"}\'',
      'await client.request(\'POST\', \'/api/v1/auth/agent/validate\', here);',
      'a sentence ends with POST /api/v1/auth/reset/password.',
    ].join('\n');
    expect(routeMentions(text, 'x.md').map((m) => `${m.method} ${m.path}`).sort()).toEqual([
      'DELETE /api/v1/notifications/devices/{id}',
      'GET /api/v1/admin/device-bindings',
      'POST /api/v1/auth/agent/validate',
      'POST /api/v1/auth/login/mobile',
      'POST /api/v1/auth/refresh',
      'POST /api/v1/auth/reset/password',
      'POST /mcp',
      'PUT /api/v1/notifications/devices/$DEVICE/deactivate',
    ]);
    expect(serving(paths, '/api/v1/faq/category/security')).toBe('/api/v1/faq/category/{category}');
    expect(serving(paths, '/api/v1/faq/6d1f4b2a-8c3e-4f5a-9b7d-2e4c6a8f0b13')).toBe('/api/v1/faq/{faq_id}');
    expect(serving(paths, '/api/v1/no/such/route')).toBeUndefined();
  });

  it('README links every guide, and the guides\' index lists each one', () => {
    const readme = read(path.join(ROOT, 'README.md'));
    const index = read(path.join(GUIDES, 'README.md'));
    const guides = guideFiles().filter((f) => f !== 'README.md');
    expect(guides.length).toBeGreaterThanOrEqual(8);
    for (const f of guides) {
      expect(readme, f).toContain(`(docs/guides/${f})`);
      expect(index, f).toContain(`(${f})`);
    }
  });

  it('every relative link of a guide points at a file of the repository', () => {
    const broken: string[] = [];
    for (const f of guideFiles()) {
      for (const m of read(path.join(GUIDES, f)).matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        if (!existsSync(path.resolve(GUIDES, target))) broken.push(`${f}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('documentation that stands alone', () => {
  const documents = (): string[] => {
    const walk = (dir: string): string[] => readdirSync(dir).flatMap((e) => {
      const p = path.join(dir, e);
      return statSync(p).isDirectory() ? walk(p) : p.endsWith('.md') ? [p] : [];
    });
    return [path.join(ROOT, 'README.md'), path.join(ROOT, 'packages/client/README.md'), ...walk(path.join(ROOT, 'docs'))];
  };

  it('no product document mentions SPEC or ARCHITECTURE (documents a reader of the repository does not have)', () => {
    const found = documents().flatMap((file) => read(file).split('\n').flatMap((line, i) =>
      /\b(SPEC|ARCHITECTURE)\b/.test(line) ? [`${path.relative(ROOT, file)}:${i + 1}: ${line.trim().slice(0, 100)}`] : []));
    expect(found).toEqual([]);
  });
});
