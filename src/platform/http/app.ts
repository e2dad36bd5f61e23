/**
 * The HTTP application shell: validation, SPEC's common response headers, the error body,
 * request and correlation ids, metrics, and the OpenAPI document. Capabilities register their
 * routes on top as plugins.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Ajv, type Options as AjvOptions } from 'ajv';
import addFormats from 'ajv-formats';
import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Config, TrustProxy } from '../config.js';
import { AppError, CommonErrors } from '../errors.js';
import { isStrictDateTime, UUID } from './formats.js';
import { accessLogger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { BodyEnvelope } from './envelope.js';
import { lazyChildLogger } from './lazy-logger.js';
import { requestTraceFields, traceRequests } from './request-spans.js';
import { corsEnabled, installCors } from './cors.js';
import { methodNotAllowed, refuseQueryOnBodyRoutes, routeTable } from './routing.js';
import { describeSchemaErrors, summarise, type SchemaError } from './validation-messages.js';

export type App = FastifyInstance<
  import('node:http').Server,
  import('node:http').IncomingMessage,
  import('node:http').ServerResponse,
  Logger,
  TypeBoxTypeProvider
>;

const COMMON_HEADERS: Record<string, string> = {
  'strict-transport-security': 'max-age=31536000; includeSubDomains; preload',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'x-xss-protection': '1; mode=block',
  'content-security-policy': "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'",
  'referrer-policy': 'strict-origin-when-cross-origin',
  'permissions-policy': 'geolocation=(), microphone=(), camera=()',
  'cache-control': 'no-store, no-cache, must-revalidate, proxy-revalidate',
  pragma: 'no-cache',
  expires: '0',
  'x-api-version': '1.0',
};

const COMMON_ENTRIES = Object.entries(COMMON_HEADERS);

const CORRELATION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Routes without an access line or a span: health probes and metrics scrapes. */
const QUIET_ROUTES = new Set(['/health', '/api/health', '/metrics']);

declare module 'fastify' {
  interface FastifyRequest {
    startedAt: bigint;
    correlationId: string;
    /** The error_code of a refusal, for the access line. */
    errorCode: string | null;
  }
}

/** The validator the routes use (strict formats, `date-time` as RFC 3339); for checking data outside a route, such as an imported file. */
export function makeAjv(options: AjvOptions): Ajv {
  // verbose: an error carries its schema, so that its message can name the allowed fields and values (validation-messages.ts).
  const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true, verbose: true, ...options });
  addFormats.default(ajv);
  ajv.addFormat('date-time', { type: 'string', validate: isStrictDateTime }); // replaces ajv-formats' (formats.ts)
  ajv.addFormat('uuid', UUID); // replaces ajv-formats', which takes urn:uuid: too (formats.ts)
  return ajv;
}

/**
 * The error body. `details.request_id` is the request's id (the `X-Request-ID` header, the
 * `req_id` of its log lines, the `strongroom.request_id` of its span): what a client quotes to
 * support, and what finds the request's access line and trace.
 */
export function errorBody(err: AppError, requestId: string): { status_code: number; error_code: string; message: string; details: Record<string, unknown> } {
  return { status_code: err.statusCode, error_code: err.code, message: err.message, details: { ...err.details, request_id: requestId } };
}

/** A request's media type as sent, for a message: the type alone, printable, short; or "none". */
function sentType(request: FastifyRequest | undefined): string {
  const raw = request?.headers['content-type'];
  const type = typeof raw === 'string' ? raw.split(';')[0]!.trim().slice(0, 80).replace(/[^\x21-\x7e]/g, '') : '';
  return type === '' ? 'none' : type;
}

/** The 400 for a body the parser refused: what was wrong with it (never its content, which JSON.parse's message quotes). */
function malformed(e: FastifyError): AppError {
  if (e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return CommonErrors.MALFORMED_REQUEST({ reason: 'empty_body' }, { message: 'The body is empty but Content-Type says application/json: send a JSON object, or leave Content-Type out.' });
  if (e.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH') return CommonErrors.MALFORMED_REQUEST({ reason: 'content_length' }, { message: 'Content-Length does not match the body sent.' });
  if (e.message === 'Object contains forbidden prototype property') return CommonErrors.MALFORMED_REQUEST({ reason: 'forbidden_key' }, { message: 'The request body uses a reserved key (__proto__ or constructor.prototype): rename it.' });
  if (e instanceof SyntaxError || e.code === 'FST_ERR_CTP_INVALID_JSON_BODY') return CommonErrors.MALFORMED_REQUEST({ reason: 'invalid_json' }, { message: 'The request body is not valid JSON: send one JSON object (RFC 8259, UTF-8) with Content-Type: application/json.' });
  return CommonErrors.MALFORMED_REQUEST();
}

/**
 * Turns anything thrown into an AppError: bad input is never a 500. `request`, when known, lets
 * a message name what was sent (the content type of a 415).
 */
export function toAppError(err: unknown, request?: FastifyRequest): AppError {
  if (err instanceof AppError) return err;
  const e = err as FastifyError & { validation?: SchemaError[]; validationContext?: string };
  if (e?.validation) {
    const fields = describeSchemaErrors(e.validation, e.validationContext ?? 'body');
    return CommonErrors.VALIDATION_ERROR({ fields }, { message: summarise(fields) });
  }
  const status = typeof e?.statusCode === 'number' ? e.statusCode : 500;
  if (status === 413) return CommonErrors.PAYLOAD_TOO_LARGE({ limit_bytes: (request?.routeOptions.bodyLimit ?? undefined) }, { message: `The request body is too large${request?.routeOptions.bodyLimit ? `: at most ${request.routeOptions.bodyLimit} bytes` : ''}.` });
  if (status === 415) {
    const sent = sentType(request);
    return CommonErrors.UNSUPPORTED_MEDIA_TYPE({ sent, expected: 'application/json' }, { message: `Send the body as JSON with Content-Type: application/json (this request sent ${sent === 'none' ? 'no Content-Type' : sent}).` });
  }
  if (status === 404) return CommonErrors.NOT_FOUND();
  if (status === 429) return CommonErrors.RATE_LIMITED();
  if (status >= 400 && status < 500) return malformed(e);
  return CommonErrors.INTERNAL_ERROR(undefined, { cause: err });
}

async function payloadBytes(payload: unknown): Promise<Buffer | string | null> {
  if (payload === null || payload === undefined) return null;
  if (typeof payload === 'string' || Buffer.isBuffer(payload)) return payload;
  if (payload instanceof Readable) {
    const chunks: Buffer[] = [];
    for await (const chunk of payload) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
    return Buffer.concat(chunks);
  }
  return null;
}

function begin(request: FastifyRequest): void {
  request.startedAt = process.hrtime.bigint();
  const given = request.headers['x-correlation-id'];
  request.correlationId = typeof given === 'string' && CORRELATION_ID.test(given) ? given : request.id;
}

function commonHeaders(request: FastifyRequest, reply: FastifyReply, body: Buffer | string | null): void {
  for (const [k, v] of COMMON_ENTRIES) if (!reply.hasHeader(k)) reply.header(k, v);
  if (!reply.hasHeader('content-type')) reply.header('content-type', 'application/json; charset=utf-8');
  reply.header('x-request-id', request.id);
  reply.header('x-correlation-id', request.correlationId);
  // A route serving the same large bytes on every request (the console's assets) gives their
  // digest with them, computed once; anything else is hashed here.
  if (!reply.hasHeader('x-content-sha256')) reply.header('x-content-sha256', createHash('sha256').update(body ?? '').digest('hex'));
  reply.header('x-response-time', (Number(process.hrtime.bigint() - request.startedAt) / 1e6).toFixed(2));
}

/**
 * TRUST_PROXY in Fastify's terms. A hop count is a function (proxy-addr's own meaning: the
 * nearest `n` addresses are proxies), because Fastify refuses a bare number; `false` is off.
 */
export function fastifyTrust(trust: TrustProxy): false | string[] | ((address: string, hop: number) => boolean) {
  if (trust === false) return false;
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return [...trust];
}

/** What an expected failure's cause says, without its stack (a gateway's answer, a timeout). */
function causeOf(cause: unknown): { type: string; message: string } {
  return cause instanceof Error ? { type: cause.name, message: cause.message.slice(0, 300) } : { type: typeof cause, message: String(cause).slice(0, 300) };
}

/**
 * `envelope`: wraps bodies (transport encryption), when a module supplies one. `requestUser`:
 * the signed-in user of a request, for the log lines of refusals. `tracer`: a span per request
 * (src/platform/http/request-spans.ts), when tracing is on.
 */
export function createHttpApp(deps: { config: Config; log: Logger; metrics: Metrics; envelope?: BodyEnvelope; requestUser?: (request: FastifyRequest) => string | undefined; tracer?: Tracer }): App {
  const { config, metrics } = deps;
  const app = Fastify({
    loggerInstance: deps.log,
    bodyLimit: config.bodyLimitBytes,
    trustProxy: fastifyTrust(config.trustProxy),
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    // Per-request lines are left to metrics; errors and refusals are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLogger as never,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { maxParamLength: 200 },
    ajv: { customOptions: { coerceTypes: false } },
    // A URL the router cannot decode, or a path parameter over maxParamLength, is answered by
    // Fastify before any hook runs: give it SPEC's error body and the common headers too.
    frameworkErrors: (err, request, rawReply) => {
      const reply = rawReply as unknown as FastifyReply;
      begin(request);
      const appError = toAppError(err, request);
      request.errorCode = appError.code;
      const body = JSON.stringify(errorBody(appError, request.id));
      commonHeaders(request, reply, body);
      void reply.status(appError.statusCode).send(body);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Bodies are validated strictly (a string is not a number); query, params and headers
  // arrive as text and are coerced.
  const bodyAjv = makeAjv({ coerceTypes: false, removeAdditional: false });
  const textAjv = makeAjv({ coerceTypes: 'array', removeAdditional: false });
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : textAjv).compile(schema));

  app.decorateRequest('startedAt', 0n);
  app.decorateRequest('errorCode', null);
  app.decorateRequest('correlationId', '');
  const routes = routeTable();
  app.addHook('onRoute', (route) => {
    routes.onRoute(route);
    refuseQueryOnBodyRoutes(route);
  });
  app.decorate('knownRoutes', () => routes.list());
  app.addHook('onRequest', async (request) => begin(request));
  // Before every other hook: the refusals of encryption and authentication carry CORS headers.
  if (corsEnabled(config.cors)) installCors(app as unknown as FastifyInstance, config.cors);
  // Before the envelope's hooks, so that decryption and every hook after it are in the request's span.
  if (deps.tracer) traceRequests(app, deps.tracer, { acceptTraceparent: config.tracing.acceptTraceparent, untraced: QUIET_ROUTES });
  else app.decorateRequest('traceScope', null);
  const envelope = deps.envelope;
  if (envelope) {
    app.decorateRequest(envelope.requestDecorator, null);
    app.addHook('onRequest', async (request) => envelope.enforce(request));
    app.addHook('preValidation', async (request) => envelope.decrypt(request));
  }

  // SPEC "Common response headers", on every response: errors and docs included.
  // Encryption first, so X-Content-SHA256 covers the bytes actually sent.
  app.addHook('onSend', async (request, reply, payload) => {
    let body = await payloadBytes(payload);
    if (envelope && body !== null) {
      const sealed = envelope.seal(request, reply, body);
      if (sealed !== body) reply.removeHeader('x-content-sha256'); // a digest given with the body covers other bytes now
      body = sealed;
    }
    commonHeaders(request, reply, body);
    return body ?? payload;
  });

  // The label children, kept per method, route and status: prom-client would otherwise hash a
  // label object on every request (about 2% of a validate's CPU).
  const access = config.accessLog ? accessLogger(deps.log) : null;
  const counted = new Map<string, { inc(): void }>();
  const timed = new Map<string, { observe(seconds: number): void }>();
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const status = String(reply.statusCode);
    const timing = `${request.method} ${route}`;
    const counting = `${timing} ${status}`;
    let counter = counted.get(counting);
    if (!counter) counted.set(counting, (counter = metrics.httpRequests.labels({ method: request.method, route, status })));
    counter.inc();
    let histogram = timed.get(timing);
    if (!histogram) timed.set(timing, (histogram = metrics.httpDuration.labels({ method: request.method, route })));
    const seconds = Number(process.hrtime.bigint() - request.startedAt) / 1e9;
    histogram.observe(seconds);
    // The access line, on a logger of its own: a per-request child would cost more than the line.
    // Probes and scrapes (every few seconds, forever) are counted in the metrics, not logged.
    if (access && !QUIET_ROUTES.has(route)) {
      access.info({
        req_id: request.id, method: request.method, route, status: reply.statusCode, ms: Math.round(seconds * 1e5) / 100,
        ip: request.ip, user_id: deps.requestUser?.(request) ?? null, ...(request.errorCode ? { error_code: request.errorCode } : {}),
        ...requestTraceFields(request),
      }, 'request');
    }
  });

  // An error the code did not mean to raise (INTERNAL_ERROR) is an operator's problem: its stack.
  // A refusal (4xx) or a service that cannot be given now (a deliberate 5xx such as
  // PUSH_NOT_CONFIGURED or OTP_DELIVERY_FAILED) is expected: one line, what and who, no stack;
  // a refusal's is the access line, with its error_code (its own line without ACCESS_LOG).
  app.setErrorHandler(async (err: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const appError = toAppError(err, request);
    const what = {
      error_code: appError.code, status: appError.statusCode, method: request.method, route: request.routeOptions.url ?? 'unmatched',
      ip: request.ip, user_id: deps.requestUser?.(request) ?? null,
    };
    request.errorCode = appError.code;
    if (appError.code === 'INTERNAL_ERROR') request.log.error({ ...what, err }, 'request failed');
    else if (appError.statusCode >= 500) request.log.warn({ ...what, ...(appError.cause ? { cause: causeOf(appError.cause) } : {}) }, 'request not served');
    else if (!config.accessLog) request.log.info(what, 'request refused'); // else the access line says it
    for (const [k, v] of Object.entries(appError.headers)) reply.header(k, v);
    return reply.status(appError.statusCode).send(errorBody(appError, request.id));
  });

  // No route for this method and path: 204 for OPTIONS on a known path, 405 for another method
  // on one (routing.ts), 404 otherwise.
  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split('?')[0]!;
    const allowed = routes.allowed(path);
    if (allowed.length > 0 && request.method === 'OPTIONS') return reply.status(204).header('allow', allowed.join(', ')).send();
    const e = allowed.length > 0 ? methodNotAllowed(request.method, allowed) : CommonErrors.NOT_FOUND({ method: request.method, path: path.slice(0, 200) });
    request.errorCode = e.code;
    for (const [k, v] of Object.entries(e.headers)) reply.header(k, v);
    return reply.status(e.statusCode).send(errorBody(e, request.id));
  });

  return app as unknown as App;
}
