import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { trace } from '@opentelemetry/api';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../config.js';
import { createTracing, errorType, inSpan, remoteParent, traceFields, traced } from './tracing.js';

/** Which OpenTelemetry SDK packages this test file's process imported. */
const loaded = vi.hoisted(() => new Set<string>());
const lines: Array<{ level: number; msg: string; reason?: string }> = [];
const log = pino({ level: 'info' }, new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk)) as (typeof lines)[number]); done(); } }));
vi.mock('@opentelemetry/sdk-trace-node', async (actual) => (loaded.add('sdk-trace-node'), actual()));
vi.mock('@opentelemetry/exporter-trace-otlp-http', async (actual) => (loaded.add('exporter-trace-otlp-http'), actual()));
vi.mock('@opentelemetry/resources', async (actual) => (loaded.add('resources'), actual()));

describe('tracing off unless configured', () => {
  it('with no OTEL_* variable, starting tracing gives no tracer and loads none of the SDK', async () => {
    const tracing = createTracing(loadConfig({}).tracing, log);
    expect(await tracing.start()).toBeUndefined();
    await tracing.flush();
    await tracing.shutdown();
    expect([...loaded]).toEqual([]);
  });

  it('OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none keep it off with an endpoint set', async () => {
    for (const off of [{ OTEL_SDK_DISABLED: 'true' }, { OTEL_TRACES_EXPORTER: 'none' }]) {
      expect(await createTracing(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', ...off }).tracing, log).start()).toBeUndefined();
    }
    expect([...loaded]).toEqual([]);
  });

  it('no module of the service imports the SDK, the exporter or the resources statically: only tracing.ts, dynamically', () => {
    const root = path.resolve(import.meta.dirname, '../..');
    const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
    const statics = files.filter((f) => /^import\s(?!type\s)[^;]*from\s+'@opentelemetry\/(sdk-|exporter-|resources|semantic-conventions)/m.test(readFileSync(path.join(root, f), 'utf8')));
    expect(statics).toEqual([]);
  });

  it('with an endpoint, the SDK is loaded on start, once, and gives a tracer that records; a collector that does not answer is said once in the log, and holds no shutdown', async () => {
    const tracing = createTracing(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_TIMEOUT: '300' }).tracing, log);
    const tracer = await tracing.start();
    expect(tracer).toBeDefined();
    expect(await tracing.start()).toBeDefined();
    expect([...loaded].sort()).toEqual(['exporter-trace-otlp-http', 'resources', 'sdk-trace-node']);
    const span = tracer!.startSpan('x');
    expect(span.isRecording()).toBe(true);
    span.end();
    await tracing.flush(); // nothing listens at :9
    tracer!.startSpan('y').end();
    await tracing.flush();
    expect(lines.filter((l) => l.msg.startsWith('Traces:'))).toEqual([expect.objectContaining({ level: 40, msg: expect.stringMatching(/^Traces: export to http:\/\/127\.0\.0\.1:9\/v1\/traces failed \(\w+\); spans are dropped until it answers$/) })]);
    tracer!.startSpan('z').end();
    const began = performance.now();
    await tracing.shutdown();
    expect(performance.now() - began).toBeLessThan(5_000);
  });
});

describe('spans without a traced request', () => {
  it('inSpan runs the work with a span that records nothing; log lines get no ids', async () => {
    expect(traced()).toBe(false);
    expect(await inSpan('x', {}, async (span) => (span.setAttribute('a', 1), span.isRecording()))).toBe(false);
    expect(traceFields()).toEqual({});
  });
});

describe('W3C traceparent', () => {
  const id = '4bf92f3577b34da6a3ce929d0e0e4736';
  const span = '00f067aa0ba902b7';
  const parent = (h: string | string[] | undefined) => trace.getSpanContext(remoteParent(h));

  it('names the caller\'s span and its sampled flag', () => {
    expect(parent(`00-${id}-${span}-01`)).toEqual({ traceId: id, spanId: span, traceFlags: 1, isRemote: true });
    expect(parent(`00-${id}-${span}-00`)).toMatchObject({ traceFlags: 0 });
    expect(parent(`01-${id}-${span}-03-future`)).toMatchObject({ traceId: id, traceFlags: 1 }); // a later version: the fields it shares
  });

  it('is ignored when absent, repeated or malformed: version ff, zero ids, upper case, extra fields on version 00', () => {
    for (const h of [undefined, [`00-${id}-${span}-01`, `00-${id}-${span}-01`], `ff-${id}-${span}-01`, `00-${'0'.repeat(32)}-${span}-01`, `00-${id}-${'0'.repeat(16)}-01`, `00-${id.toUpperCase()}-${span}-01`, `00-${id}-${span}-01-x`, '']) {
      expect(parent(h), String(h)).toBeUndefined();
    }
  });
});

describe('error.type', () => {
  it('is a code (its own or its cause\'s) or the error\'s class, never its message', () => {
    expect(errorType(Object.assign(new Error('duplicate key value (username)=(amina)'), { code: '23505' }))).toBe('23505');
    expect(errorType(new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED' }) }))).toBe('ECONNREFUSED');
    expect(errorType(Object.assign(new Error('x'), { code: 'has a space: amina@bank.example' }))).toBe('Error');
    expect(errorType('amina')).toBe('Error');
  });
});
