/**
 * A server span per request when tracing is on (docs/operations.md "Traces"): named `METHOD
 * /route/pattern` (only `METHOD` when no route matched), with the method, the route pattern, the
 * status, the request id, and a refusal's `error_code` as `error.type`; never the URL, its query
 * or path parameters, a header, the client's address or the user. Its status is an error only
 * for a 5xx. A W3C `traceparent` from the caller makes it a child of the caller's span (unless
 * OTEL_PROPAGATORS says none), whoever the caller is: TRUST_PROXY does not apply to it.
 *
 * The span is made current with the request's scope for every hook and the handler; the scope is
 * entered again before validation because the body is read on the socket's own events.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { ROOT_CONTEXT, type Tracer } from '@opentelemetry/api';
import { markFailed, remoteParent, runInScope, scopeOf, spanFields, SpanKind, type TraceScope } from '../observability/tracing.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's span and scope; null when tracing is off or the route is not traced. */
    traceScope: TraceScope | null;
  }
}

export function traceRequests(app: FastifyInstance<Server, IncomingMessage, ServerResponse, Logger>, tracer: Tracer, options: { acceptTraceparent: boolean; untraced: ReadonlySet<string> }): void {
  app.decorateRequest('traceScope', null);
  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url;
    if (route !== undefined && options.untraced.has(route)) return done();
    const parent = options.acceptTraceparent ? remoteParent(request.headers.traceparent) : ROOT_CONTEXT;
    const span = tracer.startSpan(route === undefined ? request.method : `${request.method} ${route}`, {
      kind: SpanKind.SERVER,
      attributes: { 'http.request.method': request.method, ...(route === undefined ? {} : { 'http.route': route }), 'strongroom.request_id': request.id },
    }, parent);
    request.traceScope = scopeOf(tracer, span, parent);
    runInScope(request.traceScope, done);
  });
  app.addHook('preValidation', (request, _reply, done) => (request.traceScope === null ? done() : runInScope(request.traceScope, done)));
  app.addHook('onResponse', (request, reply, done) => {
    endSpan(request, reply.statusCode);
    done();
  });
  // The client went away before the answer: the span ends now, or it never would.
  app.addHook('onRequestAbort', (request, done) => {
    endSpan(request, undefined);
    done();
  });
}

function endSpan(request: FastifyRequest, status: number | undefined): void {
  const span = request.traceScope?.span;
  if (span === undefined || !span.isRecording()) return; // not traced, not sampled, or ended already
  if (status === undefined) markFailed(span, request.errorCode ?? 'aborted');
  else {
    span.setAttribute('http.response.status_code', status);
    if (status >= 500) markFailed(span, request.errorCode ?? String(status));
    else if (request.errorCode !== null) span.setAttribute('error.type', request.errorCode);
  }
  span.end();
}

/** The access line's `trace_id` and `span_id` (the request's span), or nothing. */
export function requestTraceFields(request: FastifyRequest): { trace_id?: string; span_id?: string } {
  return request.traceScope === null ? {} : spanFields(request.traceScope.span);
}
