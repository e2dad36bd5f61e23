/**
 * OpenTelemetry traces (docs/operations.md "Traces"). Off unless the configuration names an
 * exporter (src/platform/config-tracing.ts): only then are the SDK and the OTLP exporter
 * imported, so a default start loads nothing of OpenTelemetry but the API.
 *
 * No global OpenTelemetry state is set (no global tracer provider, propagator or context
 * manager). The HTTP shell is handed the tracer and starts a span per request
 * (src/platform/http/request-spans.ts); that span and its tracer travel with the request's work
 * in an AsyncLocalStorage of this module, so the adapters (database, LDAP, SMTP, SMS gateway,
 * FCM, bcrypt) make child spans with `inSpan` without being handed anything, and do nothing but
 * one lookup when no traced request is under way (a background job, the CLI, tracing off).
 *
 * Attributes describe the work (route pattern, status, error code, table, server address),
 * never a value a person typed or owns: no URL, query, username, DN, filter, recipient, token,
 * body, SQL text or parameter, client address or user id (docs/decisions.md "Traces").
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { INVALID_SPAN_CONTEXT, ROOT_CONTEXT, SpanKind, SpanStatusCode, isSpanContextValid, isValidSpanId, isValidTraceId, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-node';
import type { Logger } from 'pino';
import type { TracingConfig } from '../config-tracing.js';

/** The tracer of the request under way, its innermost span, and the context holding that span. */
export interface TraceScope {
  readonly tracer: Tracer;
  readonly span: Span;
  readonly context: Context;
}

const current = new AsyncLocalStorage<TraceScope>();

/** What work outside a traced request writes its attributes to: nothing. */
const NO_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

export interface Tracing {
  /** The tracer, once the SDK is loaded (the first call loads it); undefined when tracing is off. */
  start(): Promise<Tracer | undefined>;
  /** Sends the spans ended so far (a failure is logged, not thrown). */
  flush(): Promise<void>;
  /** Sends what is left (waiting at most SHUTDOWN_FLUSH_MS) and stops the exporter: SIGTERM's path. */
  shutdown(): Promise<void>;
}

interface Provider {
  getTracer(name: string): Tracer;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** A collector that does not answer holds the shutdown this long at most; the last spans are then lost. */
export const SHUTDOWN_FLUSH_MS = 2000;

/** `log`: where a failing export is reported (once per outage, and when it works again). */
export function createTracing(config: TracingConfig, log: Logger): Tracing {
  let provider: Promise<Provider | undefined> | undefined;
  const exporter = config.exporter;
  return {
    start: async () => (await (provider ??= exporter === undefined ? Promise.resolve(undefined) : loadSdk(config, exporter, log)))?.getTracer('strongroom'),
    flush: async () => (await provider)?.forceFlush().catch(() => undefined), // a failed export is in the log already
    async shutdown() {
      const p = await provider;
      if (p === undefined) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([p.shutdown().catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, SHUTDOWN_FLUSH_MS)))]);
      clearTimeout(timer);
    },
  };
}

/** The SDK as the configuration says: its sampler, resource and one batching OTLP/HTTP exporter. */
async function loadSdk(config: TracingConfig, exporter: NonNullable<TracingConfig['exporter']>, log: Logger): Promise<Provider> {
  const [sdk, { OTLPTraceExporter }, { defaultResource, resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const parentBased = config.sampler.startsWith('parentbased_');
  const rootName = parentBased ? config.sampler.slice('parentbased_'.length) : config.sampler;
  const root = rootName === 'always_on' ? new sdk.AlwaysOnSampler() : rootName === 'always_off' ? new sdk.AlwaysOffSampler() : new sdk.TraceIdRatioBasedSampler(config.samplerRatio);
  const options: NonNullable<ConstructorParameters<typeof OTLPTraceExporter>[0]> = { url: exporter.url, headers: { ...exporter.headers }, timeoutMillis: exporter.timeoutMs };
  if (exporter.compression === 'gzip') options.compression = 'gzip' as typeof options.compression;
  return new sdk.NodeTracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ ...config.resourceAttributes, 'service.name': config.serviceName })),
    sampler: parentBased ? new sdk.ParentBasedSampler({ root }) : root,
    spanProcessors: [new sdk.BatchSpanProcessor(reporting(new OTLPTraceExporter(options), exporter.url, log), { exportTimeoutMillis: exporter.timeoutMs })],
  });
}

/**
 * `exporter`, saying in the log when exports start failing (spans are then dropped: the SDK
 * itself says nothing) and when they work again: one line each, not one per batch.
 */
function reporting(exporter: SpanExporter, url: string, log: Logger): SpanExporter {
  const where = `${new URL(url).origin}${new URL(url).pathname}`;
  let failing = false;
  return {
    export(spans, done) {
      exporter.export(spans, (result) => {
        const failed = result.code !== 0; // ExportResultCode.SUCCESS
        const status = (result.error as { code?: unknown } | undefined)?.code;
        const reason = typeof status === 'number' ? `HTTP ${status}` : errorType(result.error);
        // Outside any request's scope: the batch's timer was set during one, whose ids the line must not carry.
        if (failed && !failing) current.exit(() => log.warn({ traces: where, reason }, `Traces: export to ${where} failed (${reason}); spans are dropped until it answers`));
        if (!failed && failing) current.exit(() => log.info({ traces: where }, `Traces: export to ${where} works again`));
        failing = failed;
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}

/** The scope of `span`, started by `tracer` under `parent`. */
export function scopeOf(tracer: Tracer, span: Span, parent: Context): TraceScope {
  return { tracer, span, context: trace.setSpan(parent, span) };
}

/** Runs `work` in `scope`: what it starts, and what that starts, is part of the scope's span. */
export function runInScope<T>(scope: TraceScope, work: () => T): T {
  return current.run(scope, work);
}

/** Whether a recorded span is current here: a traced request the sampler kept is under way. */
export function traced(): boolean {
  return current.getStore()?.span.isRecording() === true;
}

/**
 * `work` in a span of its own, a child of the current span; without a recorded one (tracing off,
 * work no traced request started, or a request the sampler dropped), `work` alone, handed a span
 * that records nothing. A failure sets `error.type` (a code or the error's class, never its
 * message) and the span's error status.
 */
export async function inSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>, kind: SpanKind = SpanKind.CLIENT): Promise<T> {
  const scope = current.getStore();
  if (scope === undefined || !scope.span.isRecording()) return work(NO_SPAN);
  const span = scope.tracer.startSpan(name, { kind, attributes }, scope.context);
  try {
    return await current.run(scopeOf(scope.tracer, span, scope.context), () => work(span));
  } catch (err) {
    markFailed(span, errorType(err));
    throw err;
  } finally {
    span.end();
  }
}

/** A span already over, that began at `began` (a `performance.now()`), when a traced request is under way. */
export function recordSpan(name: string, attributes: Attributes, began: number, kind: SpanKind = SpanKind.CLIENT): void {
  const scope = current.getStore();
  if (scope?.span.isRecording() === true) scope.tracer.startSpan(name, { kind, attributes, startTime: performance.timeOrigin + began }, scope.context).end();
}

export function markFailed(span: Span, type: string): void {
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

const SAFE_CODE = /^[A-Za-z0-9_.-]{1,64}$/;

/** What kind of failure: its code (ECONNREFUSED, 23505, ETIMEDOUT, an error_code), its cause's, or its class; never a message, which may quote a value. */
export function errorType(err: unknown): string {
  for (const e of [err, (err as { cause?: unknown } | null)?.cause]) {
    const code = (e as { code?: unknown } | null | undefined)?.code;
    if (typeof code === 'string' && SAFE_CODE.test(code)) return code;
  }
  return err instanceof Error && SAFE_CODE.test(err.name) ? err.name : 'Error';
}

/** `trace_id` and `span_id` of `span` for a log line, or nothing. */
export function spanFields(span: Span | undefined): { trace_id?: string; span_id?: string } {
  const c = span?.spanContext();
  return c !== undefined && isSpanContextValid(c) ? { trace_id: c.traceId, span_id: c.spanId } : {};
}

/** The logger's mixin: every line written while a span is current carries its ids. A fresh object each time (pino merges into it). */
export function traceFields(): { trace_id?: string; span_id?: string } {
  const scope = current.getStore();
  return scope === undefined ? {} : spanFields(scope.span);
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-|$)/;

/**
 * The caller's span named by a W3C `traceparent` header (Trace Context level 1), as the parent of
 * ours; the root when the header is absent, repeated or malformed. Only its sampled flag is read.
 */
export function remoteParent(header: string | string[] | undefined): Context {
  if (typeof header !== 'string') return ROOT_CONTEXT;
  const m = TRACEPARENT.exec(header.trim());
  if (m === null || m[1] === 'ff' || (m[1] === '00' && header.trim().length !== 55)) return ROOT_CONTEXT;
  const [, , traceId = '', spanId = '', flags = '00'] = m;
  if (!isValidTraceId(traceId) || !isValidSpanId(spanId)) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: parseInt(flags, 16) & 1, isRemote: true });
}

export { SpanKind };
