/**
 * OpenTelemetry traces as an operator's collector receives them (issue 24 section 3): the
 * service exports over OTLP/HTTP to a local receiver (test/harness/otlp-receiver.ts), with the
 * OTEL_* variables, while it talks to a real PostgreSQL, SMTP server, SMS gateway, FCM fake and
 * OpenLDAP. A password sign-in is one trace: the request's span with its route and status, and
 * its children for bcrypt and every SQL statement; a caller's `traceparent` is continued; SMTP,
 * the SMS gateway, FCM and LDAP are client spans with their server's address; every log line
 * written during a request carries the trace's ids; an error's `details.request_id` is the
 * request id of the access line and of the span. And no span holds a password, a username, an
 * email, a phone number, a token, a code, a client address, a user id or any value the logger
 * redacts.
 */
import { Writable } from 'node:stream';
import { ATTR_DB_COLLECTION_NAME, ATTR_DB_OPERATION_NAME, ATTR_DB_QUERY_SUMMARY, ATTR_DB_SYSTEM_NAME, ATTR_ERROR_TYPE, ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT, ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, REDACT_PATHS } from '../../src/platform/observability/logger.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { startFakeFcm, type FakeFcm } from '../harness/fcm.js';
import { bearer, expectError, seedUser, STRONG_PASSWORD, WRONG_PASSWORD } from '../harness/fixtures.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../harness/otlp-receiver.js';
import { startSlapd, type RunningSlapd } from '../harness/slapd.js';
import { startSmsGateway, type TestSmsGateway } from '../harness/sms-gateway.js';
import { startSmtp, type TestSmtp } from '../harness/smtp.js';

const SERVER = 2;
const CLIENT = 3;
const INTERNAL = 1;
const STATUS_ERROR = 2;
const CLIENT_ADDRESS = '198.51.100.23';
const COLLECTOR_KEY = 'collector-key-7f3a9c2e';

let otlp: OtlpReceiver;
let smtp: TestSmtp;
let gw: TestSmsGateway;
let fcm: FakeFcm;
let dir: RunningSlapd;
let t: TestApp;
const lines: Array<Record<string, unknown>> = [];

/** Key names the logger redacts (its REDACT_PATHS, less their paths): no span attribute may be named so. */
const REDACTED_NAMES = new Set(REDACT_PATHS.map((p) => /\["([^"]+)"\]$/.exec(p)?.[1] ?? p.split('.').pop()!));
/** Every value a span must not hold: what the requests sent and got under redacted names, and the personal data the tests used. */
const secrets = new Set<string>();

function collect(value: unknown, redacted = false): void {
  if (typeof value === 'string' || typeof value === 'number') {
    if (redacted) secrets.add(String(value).replace(/^Bearer /, ''));
  } else if (Array.isArray(value)) value.forEach((v) => collect(v, redacted));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) collect(v, redacted || REDACTED_NAMES.has(k));
}

type Res = Awaited<ReturnType<TestApp['app']['inject']>>;

/** A request from CLIENT_ADDRESS; what it sends and gets under a redacted name joins `secrets`. */
async function send(method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Res> {
  collect({ payload, headers });
  const res = await t.app.inject({ method, url, headers, remoteAddress: CLIENT_ADDRESS, ...(payload === undefined ? {} : { payload }) });
  if (/^application\/json/.test(String(res.headers['content-type']))) collect(res.json());
  return res;
}

async function user(username: string, opts: { email?: string; phone?: string } = {}) {
  const u = await seedUser(t.s, username, opts);
  for (const v of [username, u.uuid, opts.email, opts.phone]) if (v !== undefined) secrets.add(v);
  return u;
}

let refusals = 0;

/** A sign-in refused 401 INVALID_CREDENTIALS: a name no one has, a new one each time (so none locks). */
async function refusedSignIn(headers: Record<string, string> = {}): Promise<Res> {
  const username = `trace.nobody.${++refusals}`;
  secrets.add(username);
  const res = await send('POST', '/api/v1/auth/login', { username, password: WRONG_PASSWORD }, headers);
  expectError(res, 401, 'INVALID_CREDENTIALS');
  return res;
}

async function signIn(username: string): Promise<string> {
  const res = await send('POST', '/api/v1/auth/login', { username, password: STRONG_PASSWORD });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { access_token: string }).access_token;
}

/** Every span exported so far. */
async function exported(): Promise<ReceivedSpan[]> {
  await t.s.tracing.flush();
  return otlp.spans;
}

/** The server span of the request `res` answered, and every span of its trace. */
async function traceOf(res: Res): Promise<{ root: ReceivedSpan; spans: ReceivedSpan[] }> {
  const spans = await exported();
  const root = spans.find((s) => s.kind === SERVER && s.attributes['strongroom.request_id'] === res.headers['x-request-id']);
  expect(root, `the span of request ${String(res.headers['x-request-id'])}`).toBeDefined();
  return { root: root!, spans: spans.filter((s) => s.traceId === root!.traceId) };
}

const childrenOf = (spans: ReceivedSpan[], parent: ReceivedSpan) => spans.filter((s) => s.parentSpanId === parent.spanId);
const ms = (s: ReceivedSpan): number => Number(s.endNs - s.startNs) / 1e6;
const accessLine = (res: Res) => lines.find((l) => l.msg === 'request' && l.req_id === res.headers['x-request-id']);

beforeAll(async () => {
  [otlp, smtp, gw, fcm, dir] = await Promise.all([startOtlpReceiver(), startSmtp(), startSmsGateway(), startFakeFcm(), startSlapd()]);
  const log = createLogger('info', new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk)) as Record<string, unknown>); done(); } }));
  t = await createTestApp({
    log,
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${COLLECTOR_KEY}`,
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
      BCRYPT_COST: '10', // a sign-in slow enough for its trace to show where the time went
      SMTP_URL: smtp.url, SMS_GATEWAY_URL: gw.url, SMS_GATEWAY_TOKEN: gw.token, SMS_GATEWAY_TIMEOUT_MS: '2000', ...fcm.env,
      LDAP_URI: dir.uri, LDAP_BIND_DN: dir.bindDn, LDAP_BIND_PASSWORD: dir.bindPassword, LDAP_BASE_DN: dir.baseDn, LDAP_USER_FILTER: '(&(objectClass=inetOrgPerson)(uid={username}))',
    },
  });
  for (const v of [COLLECTOR_KEY, CLIENT_ADDRESS, gw.token, dir.bindDn, dir.bindPassword]) secrets.add(v);
});
afterAll(async () => {
  await t?.close();
  await Promise.all([otlp?.close(), smtp?.close(), gw?.close(), fcm?.close(), dir?.stop()]);
});

describe('a password sign-in, as a trace', () => {
  it('is one trace: the request span (route, method, status) with bcrypt and every SQL statement as its children; the access line has its ids; the time is where the spans say', async () => {
    await user('trace.amina');
    const res = await send('POST', '/api/v1/auth/login', { username: 'trace.amina', password: STRONG_PASSWORD });
    expect(res.statusCode, res.body).toBe(200);
    const { root, spans } = await traceOf(res);

    expect(root).toMatchObject({ name: 'POST /api/v1/auth/login', kind: SERVER, scope: 'strongroom' });
    expect(root.parentSpanId).toBeUndefined();
    expect(root.attributes).toEqual({ [ATTR_HTTP_REQUEST_METHOD]: 'POST', [ATTR_HTTP_ROUTE]: '/api/v1/auth/login', [ATTR_HTTP_RESPONSE_STATUS_CODE]: 200, 'strongroom.request_id': res.headers['x-request-id'] });
    expect(root.statusCode).not.toBe(STATUS_ERROR);
    expect(root.resource).toMatchObject({ [ATTR_SERVICE_NAME]: 'strongroom', 'deployment.environment.name': 'test' });

    const children = childrenOf(spans, root);
    for (const s of spans) if (s !== root) expect(spans.some((p) => p.spanId === s.parentSpanId), `${s.name} has its parent in the trace`).toBe(true);
    const bcrypt = children.filter((s) => s.name === 'bcrypt compare');
    expect(bcrypt).toHaveLength(1);
    expect(bcrypt[0]).toMatchObject({ kind: INTERNAL, attributes: { 'strongroom.bcrypt.cost': 10, 'strongroom.bcrypt.wait_ms': expect.any(Number) } });

    const statements = children.filter((s) => s.attributes[ATTR_DB_SYSTEM_NAME] === 'postgresql' && s.name !== 'connection wait'); // a wait for a pooled connection, when there was one, is a span of its own
    expect(children.filter((s) => !statements.includes(s) && !bcrypt.includes(s)).map((s) => s.name)).toEqual(children.filter((s) => s.name === 'connection wait').map(() => 'connection wait'));
    expect(statements.length).toBeGreaterThanOrEqual(3);
    for (const s of statements) {
      expect(s.kind).toBe(CLIENT);
      expect(s.name).toBe(s.attributes[ATTR_DB_QUERY_SUMMARY]);
      expect(s.attributes).toMatchObject({ [ATTR_DB_OPERATION_NAME]: expect.stringMatching(/^[A-Z]+$/), [ATTR_SERVER_ADDRESS]: '127.0.0.1', [ATTR_SERVER_PORT]: expect.any(Number) });
      for (const k of Object.keys(s.attributes)) expect([ATTR_DB_SYSTEM_NAME, ATTR_DB_OPERATION_NAME, ATTR_DB_QUERY_SUMMARY, ATTR_DB_COLLECTION_NAME, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT], `${s.name}: no query text, no parameter`).toContain(k);
    }
    expect(statements.map((s) => s.name)).toEqual(expect.arrayContaining(['SELECT users', 'INSERT sessions']));

    // Where the time went: every child, bcrypt included, inside the request (which child took
    // longest depends on the machine's load, so it is not asserted); the access line's time is the span's.
    for (const c of children) expect(c.startNs >= root.startNs && c.endNs <= root.endNs, `${c.name} inside the request`).toBe(true);
    expect(ms(bcrypt[0]!)).toBeGreaterThan(0);
    const access = accessLine(res);
    expect(access).toMatchObject({ trace_id: root.traceId, span_id: root.spanId, route: '/api/v1/auth/login', status: 200 });
    expect(Math.abs((access!.ms as number) - ms(root))).toBeLessThan(Math.max(5, ms(root) * 0.2));
  });

  it('reaches the collector as OTLP/HTTP JSON at /v1/traces with OTEL_EXPORTER_OTLP_HEADERS', async () => {
    await exported();
    expect(otlp.exports.length).toBeGreaterThan(0);
    for (const h of otlp.exports) expect(h).toMatchObject({ authorization: `Bearer ${COLLECTOR_KEY}`, 'content-type': expect.stringMatching(/^application\/json/) });
    expect(otlp.refused).toEqual([]);
  });

  it('continues the caller\'s trace from a W3C traceparent, follows its sampling decision, and starts a new one for a malformed header', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const joined = await refusedSignIn({ traceparent: `00-${traceId}-${callerSpan}-01` });
    const { root } = await traceOf(joined);
    expect(root).toMatchObject({ traceId, parentSpanId: callerSpan });

    const unsampled = await refusedSignIn({ traceparent: `00-${'5'.repeat(32)}-${callerSpan}-00` });
    expect((await exported()).filter((s) => s.traceId === '5'.repeat(32))).toEqual([]); // the caller did not sample it: neither do we
    expect(accessLine(unsampled)).toMatchObject({ trace_id: '5'.repeat(32) }); // and the log still names the caller's trace

    for (const bad of [`00-${'0'.repeat(32)}-${callerSpan}-01`, `ff-${traceId}-${callerSpan}-01`, `00-${traceId}-${callerSpan}-01-extra`, 'garbage']) {
      const fresh = (await traceOf(await refusedSignIn({ traceparent: bad }))).root;
      expect(fresh.parentSpanId, bad).toBeUndefined();
      expect(fresh.traceId, bad).not.toBe(traceId);
    }
  });
});

describe('errors and log lines', () => {
  it('an error body\'s details.request_id is the X-Request-ID, the access line\'s req_id and the span\'s request id; a refusal is error.type on a span that did not fail', async () => {
    const res = await refusedSignIn();
    const body = res.json() as { details: unknown };
    const requestId = (body.details as { request_id: string }).request_id;
    expect(requestId).toBe(res.headers['x-request-id']);
    const { root } = await traceOf(res);
    expect(accessLine(res)).toMatchObject({ req_id: requestId, error_code: 'INVALID_CREDENTIALS', trace_id: root.traceId, span_id: root.spanId });
    expect(root.attributes).toMatchObject({ 'strongroom.request_id': requestId, [ATTR_HTTP_RESPONSE_STATUS_CODE]: 401, [ATTR_ERROR_TYPE]: 'INVALID_CREDENTIALS' });
    expect(root.statusCode).not.toBe(STATUS_ERROR); // a 4xx is the client's, not a failure of the service

    const unknown = await send('GET', '/api/v1/no/such/route?who=trace.amina');
    expectError(unknown, 404, 'NOT_FOUND');
    const lost = (await traceOf(unknown)).root;
    expect(lost).toMatchObject({ name: 'GET', attributes: { [ATTR_ERROR_TYPE]: 'NOT_FOUND', [ATTR_HTTP_RESPONSE_STATUS_CODE]: 404 } });
    expect(lost.attributes[ATTR_HTTP_ROUTE]).toBeUndefined();
  });

  it('every line logged during a traced request carries its trace_id and span_id; a 5xx fails its span; lines outside requests carry none', async () => {
    await user('trace.baraka', { phone: '+254712345699' });
    const token = await signIn('trace.baraka');
    gw.mode = 'fail';
    const from = lines.length;
    let res: Res;
    try {
      res = await send('POST', '/api/v1/2fa/otp/setup', { method: 'sms' }, bearer(token));
    } finally {
      gw.mode = 'ok';
    }
    expectError(res, 503, 'OTP_DELIVERY_FAILED');
    const { root, spans } = await traceOf(res);
    expect(root).toMatchObject({ statusCode: STATUS_ERROR, attributes: { [ATTR_ERROR_TYPE]: 'OTP_DELIVERY_FAILED', [ATTR_HTTP_RESPONSE_STATUS_CODE]: 503 } });
    expect(spans.find((s) => s.name === 'SMS gateway send')).toMatchObject({ statusCode: STATUS_ERROR, attributes: { [ATTR_HTTP_RESPONSE_STATUS_CODE]: 500, [ATTR_ERROR_TYPE]: 'SmsDeliveryError' } });
    // The gateway's adapter logs on the process logger, the error handler on the request's, the access line on its own.
    const during = lines.slice(from);
    expect(during.map((l) => l.msg)).toEqual(expect.arrayContaining(['SMS delivery through the gateway failed: HTTP 500', 'request not served', 'request']));
    for (const l of during) expect(l, String(l.msg)).toMatchObject({ trace_id: root.traceId, span_id: root.spanId });
    t.s.log.info('outside any request');
    expect(lines.at(-1)).toMatchObject({ msg: 'outside any request' });
    expect(lines.at(-1)).not.toHaveProperty('trace_id');
  });
});

describe('the services a request calls: client spans with their server, children of the request', () => {
  it('SMTP: one send, with the relay\'s address', async () => {
    await user('trace.imani', { email: 'imani.trace@bank.example' });
    const res = await send('POST', '/api/v1/2fa/otp/setup', { method: 'email' }, bearer(await signIn('trace.imani')));
    expect(res.statusCode, res.body).toBe(200);
    secrets.add(/Code: (\d{6})/.exec(smtp.to('imani.trace@bank.example').at(-1)!.text)![1]!);
    const { root, spans } = await traceOf(res);
    const sent = spans.filter((s) => s.name === 'SMTP send');
    expect(sent).toEqual([expect.objectContaining({ kind: CLIENT, parentSpanId: root.spanId, attributes: { [ATTR_SERVER_ADDRESS]: '127.0.0.1', [ATTR_SERVER_PORT]: smtp.port } })]);
  });

  it('the SMS gateway: one POST, with its address and status', async () => {
    await user('trace.wanjiru', { phone: '+254712345698' });
    const res = await send('POST', '/api/v1/2fa/otp/setup', { method: 'sms' }, bearer(await signIn('trace.wanjiru')));
    expect(res.statusCode, res.body).toBe(200);
    const sms = gw.latest('+254712345698')!;
    for (const v of [sms.message, /^(\d{6})/.exec(sms.message)![1]!, sms.reference]) secrets.add(v);
    const { root, spans } = await traceOf(res);
    const port = Number(new URL(gw.url).port);
    expect(spans.filter((s) => s.name === 'SMS gateway send')).toEqual([expect.objectContaining({
      kind: CLIENT, parentSpanId: root.spanId,
      attributes: { [ATTR_HTTP_REQUEST_METHOD]: 'POST', [ATTR_SERVER_ADDRESS]: '127.0.0.1', [ATTR_SERVER_PORT]: port, [ATTR_HTTP_RESPONSE_STATUS_CODE]: 202 },
    })]);
  });

  it('FCM: the token grant and the send, with the provider\'s address and status; the route is the pattern, not the device\'s id', async () => {
    await user('trace.otieno');
    const token = await signIn('trace.otieno');
    const pushToken = `trace:APA91bH2x7k3Lq9Zr0Xc3A_${'t'.repeat(100)}`;
    const registered = await send('POST', '/api/v1/notifications/devices/register', { push_token: pushToken, platform: 'mobile' }, bearer(token));
    expect(registered.statusCode, registered.body).toBe(201);
    const res = await send('POST', `/api/v1/notifications/devices/${(registered.json() as { id: string }).id}/test`, undefined, bearer(token));
    expect(res.statusCode, res.body).toBe(200);
    const { root, spans } = await traceOf(res);
    expect(root).toMatchObject({ name: 'POST /api/v1/notifications/devices/:id/test', attributes: { [ATTR_HTTP_ROUTE]: '/api/v1/notifications/devices/:id/test' } });
    const port = Number(new URL(fcm.url).port);
    for (const name of ['FCM token', 'FCM send']) {
      expect(spans.filter((s) => s.name === name), name).toEqual([expect.objectContaining({
        kind: CLIENT, parentSpanId: root.spanId,
        attributes: { [ATTR_HTTP_REQUEST_METHOD]: 'POST', [ATTR_SERVER_ADDRESS]: '127.0.0.1', [ATTR_SERVER_PORT]: port, [ATTR_HTTP_RESPONSE_STATUS_CODE]: 200 },
      })]);
    }
  });

  it('LDAP: the service bind, the search and the user\'s bind, with the directory\'s address and never a DN or filter', async () => {
    const alice = dir.users.alice;
    for (const v of [alice.uid, alice.dn, alice.name, alice.mail!]) secrets.add(v);
    const res = await send('POST', '/api/v1/auth/ldap/login', { username: alice.uid, password: alice.password });
    expect(res.statusCode, res.body).toBe(200);
    const { root, spans } = await traceOf(res);
    const ldap = spans.filter((s) => s.name.startsWith('LDAP '));
    expect(ldap.map((s) => s.name)).toEqual(['LDAP service-bind', 'LDAP search', 'LDAP user-bind']);
    for (const s of ldap) {
      expect(s.kind).toBe(CLIENT);
      expect(s.parentSpanId).toBe(root.spanId);
      expect(s.attributes).toEqual({ [ATTR_SERVER_ADDRESS]: '127.0.0.1', [ATTR_SERVER_PORT]: dir.port, 'strongroom.ldap.phase': s.name.slice('LDAP '.length) });
    }
  });
});

describe('what spans hold', () => {
  it('threat: a span leaks a secret or personal datum to whoever reads the traces: no attribute or span name holds a password, username, email, phone number, token, code, DN, client address or user id, or any value the logger\'s redaction list covers, nor is any attribute named as one', async () => {
    const spans = await exported();
    expect(spans.length).toBeGreaterThan(50);
    for (const v of [STRONG_PASSWORD, WRONG_PASSWORD]) secrets.add(v);
    const checked = [...secrets].filter((s) => s.length >= 4);
    expect(checked.length).toBeGreaterThan(25);
    const asToken = (s: string) => new RegExp(`(?<![0-9A-Za-z])${s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![0-9A-Za-z])`);
    const patterns = checked.map((s) => [s, asToken(s)] as const);
    for (const span of spans) {
      const fields: Array<[string, unknown]> = [['name', span.name], ...Object.entries(span.attributes), ...Object.entries(span.resource)];
      for (const [key, value] of fields) {
        expect(REDACTED_NAMES.has(key.split('.').pop()!), `${span.name}: attribute ${key}`).toBe(false);
        const text = JSON.stringify(value);
        for (const [secret, pattern] of patterns) expect(pattern.test(text), `${span.name}: ${key} holds ${secret}`).toBe(false);
        if (typeof value === 'string' && value.includes('/api/')) {
          expect(['http.route', 'name'], `${span.name}: only the route pattern holds a path`).toContain(key);
          expect(value, 'the pattern, never an id or a query').not.toMatch(/\/\d+(\/|$)|\?/);
        }
      }
    }
  });
});
