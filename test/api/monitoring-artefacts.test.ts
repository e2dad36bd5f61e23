/**
 * The monitoring artefacts in docs/monitoring (issue 24, section 3): the Grafana dashboard and
 * the Prometheus alerting rules are built on what the service really exposes. The service is
 * built as the server builds it (process metrics on, /metrics on the MANAGEMENT_PORT listener),
 * on PostgreSQL (so the connection pools report), and given some traffic: sign-ins that succeed,
 * fail, lock an account, stop for a forced password change and for a second factor, a TOTP code
 * wrong and right, a token validation, health probes and scrapes. Then every PromQL expression of
 * both files (panel targets, template variables, alert rules) must name only metrics /metrics
 * lists (histograms only through `_bucket`, `_sum`, `_count`; `up` is the one series Prometheus
 * adds itself), only labels those metrics have (plus the target labels `job` and `instance`, and
 * `le` on buckets), and only label values the service emits or that its source can emit.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { createStrongroom, type Strongroom } from '../../src/app.js';
import { ManualClock } from '../../src/platform/clock.js';
import { loadConfig } from '../../src/platform/config.js';
import type { DatabaseHandle } from '../../src/platform/db/database.js';
import type { App } from '../../src/platform/http/app.js';
import { openTestDatabase, testSecrets, UNLIMITED_ROUTES } from '../harness/app.js';
import { enrolTotp } from '../harness/authenticator.js';
import { admin, bearer, expectError, expectLocked, login, seedUser, signIn, STRONG_PASSWORD, WRONG_PASSWORD } from '../harness/fixtures.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');
const DASHBOARD = 'docs/monitoring/grafana-dashboard.json';
const RULES = 'docs/monitoring/prometheus-alerts.yaml';
const README = 'docs/monitoring/README.md';

/** Labels Prometheus attaches to every scraped series (the target's), whatever the service says. */
const TARGET_LABELS = new Set(['job', 'instance']);
/** Series Prometheus writes itself for each target: not on /metrics. */
const PROMETHEUS_SERIES: Record<string, readonly string[]> = { up: ['job', 'instance'] };
const HISTOGRAM_SUFFIXES = ['_bucket', '_sum', '_count'] as const;

/**
 * Label values the test does not provoke may still be named when the code that emits them has
 * them as a quoted literal: `metric:label` to those files.
 */
const VALUE_SOURCES: Record<string, readonly string[]> = {
  'strongroom_signins_total:outcome': ['src/signin/pipeline.ts'],
  'strongroom_push_failed_total:reason': ['src/notifications/fcm.ts', 'src/notifications/outbox.ts'],
  'strongroom_mfa_events_total:event': ['src/audit/service.ts'],
};

/** PromQL functions and aggregations the artefacts may call (a misspelt one fails). */
const FUNCTIONS = new Set([
  'sum', 'min', 'max', 'avg', 'count', 'group', 'stddev', 'stdvar', 'topk', 'bottomk', 'quantile', 'count_values',
  'rate', 'irate', 'increase', 'delta', 'idelta', 'deriv', 'changes', 'resets', 'predict_linear', 'histogram_quantile',
  'absent', 'absent_over_time', 'min_over_time', 'max_over_time', 'avg_over_time', 'sum_over_time', 'count_over_time', 'last_over_time', 'quantile_over_time', 'present_over_time',
  'abs', 'ceil', 'floor', 'round', 'clamp', 'clamp_min', 'clamp_max', 'scalar', 'vector', 'time', 'timestamp', 'sort', 'sort_desc', 'label_replace', 'label_join',
]);
const GROUPING = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);
/** Grafana's own variables; the dashboard's are its templating list. */
const GRAFANA_VARIABLES = new Set(['__rate_interval', '__interval', '__range']);

interface Family { type: string; sampleLabels: Set<string>; values: Map<string, Set<string>>; samples: number }
interface Matcher { label: string; op: string; value: string }
interface Selector { name: string; matchers: Matcher[] }
interface Analysis { selectors: Selector[]; grouping: string[]; functions: string[] }

/** The exposition text by family: its type, the labels and values of its samples. */
function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const familyOf = (sample: string): Family | undefined => {
    const direct = families.get(sample);
    if (direct && direct.type !== 'histogram') return direct;
    for (const suffix of HISTOGRAM_SUFFIXES) {
      const base = families.get(sample.slice(0, -suffix.length));
      if (sample.endsWith(suffix) && base?.type === 'histogram') return base;
    }
    return undefined;
  };
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      families.set(type[1]!, { type: type[2]!, sampleLabels: new Set(), values: new Map(), samples: 0 });
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const sample = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? \S+$/.exec(line);
    if (!sample) throw new Error(`not an exposition line: ${line}`);
    const family = familyOf(sample[1]!);
    if (!family) throw new Error(`a sample of no listed family: ${line}`);
    family.samples++;
    for (const [, label, value] of (sample[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      if (label === 'le') continue;
      family.sampleLabels.add(label!);
      if (!family.values.has(label!)) family.values.set(label!, new Set());
      family.values.get(label!)!.add(value!);
    }
  }
  return families;
}

/**
 * The metric selectors (name and matchers), grouping labels (`by`, `without`, `on`, `ignoring`,
 * `group_left`/`group_right` lists) and functions of a PromQL expression. Strings, ranges and
 * numbers are skipped; a selector without a metric name, an unknown function or unbalanced
 * parentheses throw.
 */
function analyse(expr: string): Analysis {
  const out: Analysis = { selectors: [], grouping: [], functions: [] };
  const identifier = /[a-zA-Z_:][\w:]*/y;
  let i = 0;
  let depth = 0;
  const fail = (why: string): never => {
    throw new Error(`${why} at ${i} in: ${expr}`);
  };
  const nextNonSpace = (from: number): number => {
    let j = from;
    while (j < expr.length && /\s/.test(expr[j]!)) j++;
    return j;
  };
  const readString = (): string => {
    const quote = expr[i];
    let s = '';
    i++;
    while (expr[i] !== quote) {
      if (i >= expr.length) fail('unterminated string');
      if (expr[i] === '\\') {
        s += expr[i + 1];
        i += 2;
      } else s += expr[i++];
    }
    i++;
    return s;
  };
  const readMatchers = (): Matcher[] => {
    const matchers: Matcher[] = [];
    i++; // {
    for (;;) {
      i = nextNonSpace(i);
      if (expr[i] === '}') {
        i++;
        return matchers;
      }
      identifier.lastIndex = i;
      const label = identifier.exec(expr)?.[0] ?? fail('a label name expected');
      i = nextNonSpace(i + label.length);
      const op = /^(=~|!~|!=|=)/.exec(expr.slice(i))?.[1] ?? fail('a matcher operator expected');
      i = nextNonSpace(i + op.length);
      if (expr[i] !== '"' && expr[i] !== "'") fail('a quoted label value expected');
      matchers.push({ label, op, value: readString() });
      i = nextNonSpace(i);
      if (expr[i] === ',') i++;
      else if (expr[i] !== '}') fail('"," or "}" expected');
    }
  };
  while (i < expr.length) {
    const c = expr[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '"' || c === "'" || c === '`') {
      readString();
    } else if (c === '[') {
      const close = expr.indexOf(']', i);
      if (close < 0) fail('unclosed range');
      i = close + 1;
    } else if (c === '{') {
      fail('a selector without a metric name');
    } else if (/[0-9.]/.test(c)) {
      i += /^[0-9.]+(?:e[+-]?\d+)?[a-zA-Z]*/.exec(expr.slice(i))![0].length; // a number, or a duration after `offset`
    } else if (/[a-zA-Z_:]/.test(c)) {
      identifier.lastIndex = i;
      const word = identifier.exec(expr)![0];
      i += word.length;
      const j = nextNonSpace(i);
      if (GROUPING.has(word)) {
        if (expr[j] === '(') {
          const close = expr.indexOf(')', j);
          if (close < 0) fail('unclosed label list');
          out.grouping.push(...expr.slice(j + 1, close).split(',').map((s) => s.trim()).filter(Boolean));
          i = close + 1;
        }
      } else if (KEYWORDS.has(word)) {
        // an operator or modifier
      } else if (expr[j] === '(' || /^(by|without)\s*\(/.test(expr.slice(j))) { // a call, or an aggregation with its clause first
        if (!FUNCTIONS.has(word)) fail(`unknown function ${word}`);
        out.functions.push(word);
      } else {
        i = j;
        out.selectors.push({ name: word, matchers: expr[j] === '{' ? readMatchers() : [] });
      }
    } else {
      if (c === '(') depth++;
      if (c === ')' && --depth < 0) fail('unbalanced ")"');
      i++;
    }
  }
  if (depth !== 0) fail('unbalanced "("');
  return out;
}

let strongroom: Strongroom;
let database: DatabaseHandle;
let app: App;
let management: App;
let families: Map<string, Family>;

beforeAll(async () => {
  const config = loadConfig({ NODE_ENV: 'test', BCRYPT_COST: '4', SIGNIN_RATE_LIMIT_PER_MINUTE: '1000', ...UNLIMITED_ROUTES, MANAGEMENT_PORT: '0', MAX_LOGIN_ATTEMPTS: '2' });
  database = await openTestDatabase();
  const clock = new ManualClock(Date.now());
  // As src/server.ts builds it: process metrics on (createTestApp leaves them off).
  strongroom = createStrongroom({ config, secrets: testSecrets(), database, clock, log: pino({ level: 'silent' }), defaultMetrics: true });
  await strongroom.init();
  app = await strongroom.buildApp();
  await app.ready();
  management = await strongroom.buildManagementApp();
  await management.ready();
  const s = strongroom.registry;

  // Sign-ins of each kind: success (then a token validation), wrong password, a lock, a forced
  // password change, a second factor asked, failed and verified.
  await seedUser(s, 'mon.customer');
  const session = await signIn(app, 'mon.customer');
  expect((await app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(session.access_token) })).statusCode).toBe(200);
  expectError(await login(app, 'mon.customer', WRONG_PASSWORD), 401, 'INVALID_CREDENTIALS');
  await seedUser(s, 'mon.guessed');
  expectError(await login(app, 'mon.guessed', WRONG_PASSWORD), 401, 'INVALID_CREDENTIALS');
  expectLocked(await login(app, 'mon.guessed', WRONG_PASSWORD)); // MAX_LOGIN_ATTEMPTS=2: this one locks
  expectLocked(await login(app, 'mon.guessed', STRONG_PASSWORD));
  const temporary = await admin(s).createUser({ username: 'mon.temporary', email: null, phone: null, roles: ['customer'] }, { uuid: null, username: 'test' });
  expectError(await login(app, 'mon.temporary', temporary.temporaryPassword!), 403, 'PASSWORD_CHANGE_REQUIRED');
  await seedUser(s, 'mon.totp');
  const { authenticator } = await enrolTotp(app, clock, (await signIn(app, 'mon.totp')).access_token);
  const challenge = expectError(await login(app, 'mon.totp'), 401, '2FA_REQUIRED').details as { two_factor_token: string };
  const verify = (code: string) => app.inject({ method: 'POST', url: '/api/v1/2fa/totp/verify-login', payload: { two_factor_token: challenge.two_factor_token, code } });
  expect((await verify(authenticator.wrongCode(clock.now()))).statusCode).toBe(401);
  expect((await verify(authenticator.code(clock.now()))).statusCode).toBe(200);

  // Probes on both listeners; /metrics only on the management one (MANAGEMENT_PORT), scraped
  // twice so that the first scrape's own request is counted under its route.
  for (const url of ['/health', '/api/health']) expect((await app.inject({ method: 'GET', url })).statusCode).toBe(200);
  expect((await management.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
  expectError(await app.inject({ method: 'GET', url: '/metrics' }), 404, 'NOT_FOUND');
  expect((await management.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200);
  const scrape = await management.inject({ method: 'GET', url: '/metrics' });
  expect(scrape.statusCode).toBe(200);
  families = parseExposition(scrape.body);
});

afterAll(async () => {
  await management?.close();
  await app?.close();
  await strongroom?.close();
  await database?.close();
});

/** The labels a selector's metric has, or undefined when the service exposes no such series. */
function labelsOf(name: string): { family: string; labels: Set<string> } | undefined {
  if (PROMETHEUS_SERIES[name]) return { family: name, labels: new Set(PROMETHEUS_SERIES[name]) };
  const candidates: Array<{ family: string; suffix: string }> = [{ family: name, suffix: '' }];
  for (const suffix of HISTOGRAM_SUFFIXES) if (name.endsWith(suffix)) candidates.push({ family: name.slice(0, -suffix.length), suffix });
  for (const { family, suffix } of candidates) {
    const listed = families.get(family);
    if (!listed || (listed.type === 'histogram') !== (suffix !== '')) continue; // a histogram only through its series
    // The labels its samples carry, and the ones it is declared with (a family without samples yet).
    const declared = (strongroom.registry.metrics.registry.getSingleMetric(family) as unknown as { labelNames?: readonly string[] } | undefined)?.labelNames ?? [];
    return { family, labels: new Set([...listed.sampleLabels, ...declared, ...TARGET_LABELS, ...(suffix === '_bucket' ? ['le'] : [])]) };
  }
  return undefined;
}

const sourceTexts = new Map<string, string>();

/** A matcher's values (an equality, or a regular expression that is a plain list a|b|c) the service cannot emit. */
function unknownValues(family: string, m: Matcher): string[] {
  if (TARGET_LABELS.has(m.label) || m.label === 'le' || m.value.includes('$') || PROMETHEUS_SERIES[family]) return [];
  const isList = /^[\w/-]+(?:\|[\w/-]+)*$/.test(m.value);
  if (m.op.endsWith('~') && !isList) return []; // a pattern such as 5..
  const seen = families.get(family)?.values.get(m.label) ?? new Set<string>();
  const files = VALUE_SOURCES[`${family}:${m.label}`] ?? [];
  for (const file of files) if (!sourceTexts.has(file)) sourceTexts.set(file, read(file));
  return m.value.split('|').filter((v) => !seen.has(v) && !files.some((f) => sourceTexts.get(f)!.includes(`'${v}'`)));
}

/** What is wrong with one expression: unknown metrics, labels, values and grouping labels. */
function problems(where: string, expr: string): string[] {
  let a: Analysis;
  try {
    a = analyse(expr);
  } catch (err) {
    return [`${where}: ${(err as Error).message}`];
  }
  const found: string[] = [];
  if (a.selectors.length === 0) found.push(`${where}: no metric in ${expr}`);
  const known: Array<Set<string>> = [];
  for (const sel of a.selectors) {
    const metric = labelsOf(sel.name);
    if (!metric) {
      found.push(`${where}: ${sel.name} is not on /metrics${families.get(sel.name)?.type === 'histogram' ? ' (a histogram: use _bucket, _sum or _count)' : ''}`);
      continue;
    }
    known.push(metric.labels);
    for (const m of sel.matchers) {
      if (!metric.labels.has(m.label)) found.push(`${where}: ${sel.name} has no label "${m.label}" (it has ${[...metric.labels].join(', ')})`);
      else for (const v of unknownValues(metric.family, m)) found.push(`${where}: ${sel.name}{${m.label}="${v}"} is neither on /metrics nor a value the code emits`);
    }
  }
  for (const label of a.grouping) if (!known.some((labels) => labels.has(label))) found.push(`${where}: groups by "${label}", which none of its metrics has`);
  return found;
}

interface Target { refId?: string; expr?: string; datasource?: { type?: string; uid?: string } }
interface Panel { id?: number; type?: string; title?: string; datasource?: { type?: string; uid?: string }; gridPos?: { x: number; y: number; w: number; h: number }; targets?: Target[]; panels?: Panel[] }
interface Variable { name: string; type: string; query?: unknown; definition?: string }
interface Dashboard { uid?: string; title?: string; schemaVersion?: number; panels?: Panel[]; templating?: { list?: Variable[] } }
interface Rule { alert?: unknown; expr?: unknown; for?: unknown; labels?: Record<string, unknown>; annotations?: Record<string, unknown> }

const dashboard = (): Dashboard => JSON.parse(read(DASHBOARD)) as Dashboard;
const allPanels = (d: Dashboard): Panel[] => (d.panels ?? []).flatMap((p) => [p, ...(p.panels ?? [])]);
const rules = (): Array<{ group: string; rule: Rule }> =>
  ((YAML.parse(read(RULES)) as { groups: Array<{ name: string; rules: Rule[] }> }).groups).flatMap((g) => g.rules.map((rule) => ({ group: g.name, rule })));

describe('what the running service exposes', () => {
  it('lists each family with its type, even those with no sample yet; the pools, process metrics and the new counters are there', () => {
    for (const name of ['strongroom_http_requests_total', 'strongroom_signins_total', 'strongroom_account_locks_total', 'strongroom_mfa_events_total', 'strongroom_mail_failed_total',
      'strongroom_db_pool_connections', 'strongroom_db_pool_waiting', 'strongroom_db_pool_max', 'strongroom_push_queue_depth', 'strongroom_nodejs_eventloop_lag_p99_seconds', 'strongroom_process_start_time_seconds']) {
      expect(families.has(name), name).toBe(true);
    }
    expect(families.get('strongroom_http_request_duration_seconds')?.type).toBe('histogram');
    // prom-client lists a labelled family before its first sample: the check below reads the
    // declared labels too, so a panel on such a family is checked all the same.
    expect(families.get('strongroom_push_failed_total')).toMatchObject({ type: 'counter', samples: 0 });
    expect(families.get('strongroom_signins_total')!.values.get('outcome')).toEqual(new Set(['success', 'invalid_credentials', 'locked', 'password_change_required', 'second_factor_required']));
    expect(families.get('strongroom_signins_total')!.values.get('channel')).toEqual(new Set(['web']));
    expect(families.get('strongroom_account_locks_total')!.values.get('reason')).toEqual(new Set(['invalid_credentials']));
    expect(families.get('strongroom_mfa_events_total')!.values.get('event')).toEqual(new Set(['MFA_ENROLLED', 'MFA_FAILED', 'MFA_VERIFIED']));
    expect(families.get('strongroom_db_pool_connections')!.values.get('pool')).toEqual(new Set(['main', 'index_scans']));
  });
});

describe('the Grafana dashboard', () => {
  it('parses, has a Prometheus datasource variable, unique panel ids, and every panel queries that datasource', () => {
    const d = dashboard();
    expect(d.uid).toMatch(/^[\w-]{1,40}$/);
    expect(d.title).toBeTruthy();
    expect(d.schemaVersion).toBeGreaterThanOrEqual(39);
    const variables = d.templating?.list ?? [];
    expect(variables).toContainEqual(expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }));
    const panels = allPanels(d);
    const ids = panels.map((p) => p.id);
    expect(ids.every((id) => Number.isInteger(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const graphs = panels.filter((p) => p.type !== 'row');
    expect(graphs.length).toBeGreaterThan(20);
    const defined = new Set([...variables.map((v) => v.name), ...GRAFANA_VARIABLES]);
    for (const p of graphs) {
      const where = `panel ${p.id} "${p.title}"`;
      expect(p.title, where).toBeTruthy();
      expect(p.datasource, where).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(p.targets?.length, `${where} has no targets`).toBeGreaterThan(0);
      const refIds = p.targets!.map((t) => t.refId);
      expect(new Set(refIds).size, where).toBe(refIds.length);
      for (const t of p.targets!) {
        expect(t.datasource, where).toEqual({ type: 'prometheus', uid: '${datasource}' });
        expect(typeof t.expr === 'string' && t.expr.trim() !== '', where).toBe(true);
        for (const [, name] of t.expr!.matchAll(/\$\{?(\w+)/g)) expect(defined.has(name!), `${where} uses $${name}, which is not defined`).toBe(true);
      }
    }
  });

  it('lays the panels out on the 24-column grid without overlaps', () => {
    const boxes = allPanels(dashboard()).map((p) => ({ id: p.id, ...p.gridPos! }));
    for (const b of boxes) {
      expect(b.x >= 0 && b.w > 0 && b.x + b.w <= 24 && b.h > 0 && b.y >= 0, `panel ${b.id}`).toBe(true);
    }
    for (const [n, a] of boxes.entries()) {
      for (const b of boxes.slice(n + 1)) {
        const overlap = a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
        expect(overlap, `panels ${a.id} and ${b.id} overlap`).toBe(false);
      }
    }
  });

  it('queries only metrics, labels and label values the service exposes', () => {
    const d = dashboard();
    const found: string[] = [];
    for (const p of allPanels(d).filter((x) => x.type !== 'row')) {
      for (const t of p.targets ?? []) found.push(...problems(`panel ${p.id} "${p.title}" ${t.refId}`, t.expr!));
    }
    for (const v of (d.templating?.list ?? []).filter((x) => x.type === 'query')) {
      const query = typeof v.query === 'string' ? v.query : (v.query as { query: string }).query;
      const values = /^label_values\((.+),\s*(\w+)\)$/.exec(query);
      if (!values) {
        found.push(`variable ${v.name}: not a label_values() query: ${query}`);
        continue;
      }
      found.push(...problems(`variable ${v.name}`, values[1]!));
      for (const sel of analyse(values[1]!).selectors) if (!labelsOf(sel.name)?.labels.has(values[2]!)) found.push(`variable ${v.name}: ${sel.name} has no label ${values[2]}`);
    }
    expect(found).toEqual([]);
  });

  it('shows every metric the service defines (process and Node.js metrics: the ones it names)', () => {
    const used = new Set(allPanels(dashboard()).flatMap((p) => (p.targets ?? []).flatMap((t) => analyse(t.expr!).selectors.map((s) => labelsOf(s.name)?.family ?? s.name))));
    const own = [...families.keys()].filter((f) => !/^strongroom_(process|nodejs)_/.test(f));
    expect(own.filter((f) => !used.has(f)), `add a panel to ${DASHBOARD}`).toEqual([]);
    for (const f of ['strongroom_nodejs_eventloop_lag_p99_seconds', 'strongroom_process_resident_memory_bytes', 'strongroom_nodejs_heap_size_used_bytes', 'strongroom_process_start_time_seconds', 'up']) {
      expect(used.has(f), f).toBe(true);
    }
  });
});

describe('the Prometheus alerting rules', () => {
  it('have the shape Prometheus loads: groups of rules with alert, expr, for, a severity, a summary and a description', () => {
    const doc = YAML.parse(read(RULES)) as Record<string, unknown>;
    expect(Object.keys(doc)).toEqual(['groups']);
    const groups = doc.groups as Array<Record<string, unknown>>;
    expect(Array.isArray(groups) && groups.length > 0).toBe(true);
    expect(new Set(groups.map((g) => g.name)).size).toBe(groups.length);
    const names: string[] = [];
    for (const g of groups) {
      expect(Object.keys(g).sort(), String(g.name)).toEqual(['name', 'rules']);
      expect(typeof g.name).toBe('string');
      const list = g.rules as Rule[];
      expect(Array.isArray(list) && list.length > 0, String(g.name)).toBe(true);
      for (const r of list) {
        const where = `${String(g.name)}/${String(r.alert)}`;
        expect(Object.keys(r).every((k) => ['alert', 'expr', 'for', 'keep_firing_for', 'labels', 'annotations'].includes(k)), where).toBe(true);
        expect(r.alert, where).toMatch(/^Strongroom[A-Z][A-Za-z0-9]+$/);
        expect(typeof r.expr === 'string' && r.expr.trim() !== '', where).toBe(true);
        expect(r.for, where).toMatch(/^(\d+[smhdwy])+$/);
        expect(['critical', 'warning'], where).toContain(r.labels?.severity);
        for (const key of ['summary', 'description']) expect(typeof r.annotations?.[key] === 'string' && (r.annotations[key] as string).length > 20, `${where} ${key}`).toBe(true);
        names.push(r.alert as string);
      }
    }
    expect(new Set(names).size).toBe(names.length);
  });

  it('query only metrics, labels and label values the service exposes, and template only labels their result has', () => {
    const found: string[] = [];
    for (const { group, rule } of rules()) {
      const where = `${group}/${String(rule.alert)}`;
      const expr = rule.expr as string;
      found.push(...problems(where, expr));
      // A `by` list is what an aggregated result keeps; without an aggregation, the series' own labels.
      let a: Analysis;
      try {
        a = analyse(expr);
      } catch {
        continue; // reported above
      }
      const aggregated = a.functions.some((f) => ['sum', 'min', 'max', 'avg', 'count', 'group', 'absent', 'histogram_quantile'].includes(f));
      const kept = new Set(aggregated ? a.grouping : a.selectors.flatMap((s) => [...(labelsOf(s.name)?.labels ?? [])]));
      for (const text of Object.values(rule.annotations ?? {})) {
        for (const [, label] of String(text).matchAll(/\$labels\.(\w+)/g)) if (!kept.has(label!)) found.push(`${where}: the annotation reads $labels.${label}, which the result does not have`);
      }
    }
    expect(found).toEqual([]);
  });

  it('cover what the issue names: sign-in failures, locks, queue depth, delivery failures, pool saturation, instance down, 5xx, latency, event loop, memory', () => {
    const all = rules();
    const used = new Set(all.flatMap(({ rule }) => analyse(rule.expr as string).selectors.map((s) => labelsOf(s.name)?.family ?? s.name)));
    for (const f of ['strongroom_signins_total', 'strongroom_account_locks_total', 'strongroom_push_queue_depth', 'strongroom_push_failed_total', 'strongroom_mfa_events_total', 'strongroom_mail_failed_total',
      'strongroom_db_pool_connections', 'strongroom_db_pool_waiting', 'up', 'strongroom_http_requests_total', 'strongroom_http_request_duration_seconds', 'strongroom_nodejs_eventloop_lag_p99_seconds', 'strongroom_process_resident_memory_bytes']) {
      expect(used.has(f), f).toBe(true);
    }
    expect(all.some(({ rule }) => rule.labels?.severity === 'critical')).toBe(true);
  });
});

describe('the monitoring documentation', () => {
  it('describes every alert, links the artefacts from docs/operations.md and stands alone', () => {
    const readme = read(README);
    for (const { rule } of rules()) expect(readme, String(rule.alert)).toContain(String(rule.alert));
    const operations = read('docs/operations.md');
    const section = /^## Monitoring\n[\s\S]*?(?=^## )/m.exec(operations)?.[0] ?? '';
    for (const file of ['monitoring/README.md', 'monitoring/grafana-dashboard.json', 'monitoring/prometheus-alerts.yaml']) expect(section).toContain(file);
    for (const text of [readme, read(DASHBOARD), read(RULES), section]) expect(text).not.toMatch(/SPEC|ARCHITECTURE/);
  });
});
