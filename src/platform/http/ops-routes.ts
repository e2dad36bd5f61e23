/**
 * Operator-facing routes: liveness and readiness, Prometheus metrics, the OpenAPI document and
 * its two readable forms (/api/docs: Swagger UI; /api/redoc: a server-rendered reference).
 * /metrics is served where `metricsExposure` says (docs/operations.md "Metrics"): on the
 * management listener, on the public port behind METRICS_TOKEN, open outside production only,
 * or nowhere.
 */
import Type from 'typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import swaggerUi from '@fastify/swagger-ui';
import type { Config } from '../config.js';
import { safeEqual } from '../crypto/field-cipher.js';
import type { DatabaseHandle } from '../db/database.js';
import type { Metrics } from '../observability/metrics.js';
import type { App } from './app.js';
import { OpsErrors } from './ops-errors.js';
import { errors } from './schemas.js';

/**
 * Where /metrics is served. `management`: only on the MANAGEMENT_PORT listener. `public`: on
 * the API's port, behind the bearer token when there is one (open only outside production).
 * `nowhere`: production with neither MANAGEMENT_PORT nor METRICS_TOKEN. The token, when set, is
 * required wherever /metrics is served.
 */
export type MetricsExposure =
  | { on: 'management'; host: string; port: number; token: string | undefined }
  | { on: 'public'; token: string | undefined }
  | { on: 'nowhere' };

export function metricsExposure(config: Pick<Config, 'env' | 'management'>): MetricsExposure {
  const { port, host, metricsToken: token } = config.management;
  if (port !== undefined) return { on: 'management', host, port, token };
  if (token !== undefined || config.env !== 'production') return { on: 'public', token };
  return { on: 'nowhere' };
}

export interface OpsRouteDeps {
  config: Pick<Config, 'env' | 'management'>;
  database: Pick<DatabaseHandle, 'ping' | 'kind'>;
  metrics: Metrics;
}

const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  database: Type.Object({ status: Type.Union([Type.Literal('ok'), Type.Literal('unreachable')]), kind: Type.String({ examples: ['postgres'] }) }),
  uptime_seconds: Type.Number(),
  version: Type.String({ examples: ['0.1.0'] }),
});

const escape = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

interface OpenApiDoc {
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, { summary?: string; description?: string; tags?: string[] }>>;
}

/** A readable, script-free reference of every operation, grouped by tag. */
function renderReference(doc: OpenApiDoc): string {
  const groups = new Map<string, string[]>();
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const tag = op.tags?.[0] ?? 'Other';
      const row = `<section><h3><code>${method.toUpperCase()} ${escape(path)}</code></h3><p><strong>${escape(op.summary ?? '')}</strong></p><p>${escape(op.description ?? '')}</p></section>`;
      groups.set(tag, [...(groups.get(tag) ?? []), row]);
    }
  }
  const body = [...groups.entries()].map(([tag, rows]) => `<h2>${escape(tag)}</h2>${rows.join('')}`).join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(doc.info.title)} API reference</title>
<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}h2{border-bottom:1px solid #ccc;padding-top:1rem}section{margin:0 0 1rem}code{background:#f3f3f3;padding:.1rem .3rem}</style></head>
<body><h1>${escape(doc.info.title)} ${escape(doc.info.version)}</h1><p>${escape(doc.info.description ?? '')}</p>
<p>Schemas and examples: <a href="/api/docs">interactive documentation</a> · <a href="/api/openapi.json">OpenAPI document</a></p>${body}</body></html>`;
}

/** `Authorization: Bearer <token>`, compared in constant time (SHA-256 of both sides). */
function requireMetricsToken(token: string) {
  return async (request: FastifyRequest): Promise<void> => {
    const given = /^Bearer (\S+)$/i.exec(request.headers.authorization?.trim() ?? '')?.[1];
    if (given === undefined || !safeEqual(given, token)) throw OpsErrors.METRICS_TOKEN_REQUIRED({}, { headers: { 'www-authenticate': 'Bearer realm="metrics"' } });
  };
}

/** /health, /api/health and /metrics (behind `token` when given): both listeners serve these. */
function probeRoutes(app: App, s: OpsRouteDeps, metrics: { token: string | undefined } | null): void {
  const started = Date.now();
  const health = async (_req: unknown, reply: { status(n: number): unknown }) => {
    let ok = true;
    try {
      await s.database.ping();
    } catch {
      ok = false;
    }
    reply.status(ok ? 200 : 503);
    return {
      status: ok ? ('ok' as const) : ('degraded' as const),
      database: { status: ok ? ('ok' as const) : ('unreachable' as const), kind: s.database.kind },
      uptime_seconds: Math.round((Date.now() - started) / 1000),
      version: '0.1.0',
    };
  };
  const healthSchema = {
    tags: ['Operations'],
    summary: 'Liveness and database readiness',
    description: 'Answers 200 when the process is up and the database answers a query, 503 when the database does not. Open: no token.',
    response: { 200: Health, 503: Health },
  };
  app.get('/health', { schema: healthSchema }, health);
  app.get('/api/health', { schema: healthSchema }, health);
  if (metrics === null) return;

  const { token } = metrics;
  const description = 'Text exposition format: requests and latency by route, sign-ins by outcome, active sessions, process metrics.';
  app.get('/metrics', {
    schema: {
      tags: ['Operations'],
      summary: 'Prometheus metrics',
      description: token === undefined ? description : `${description} Requires \`Authorization: Bearer <METRICS_TOKEN>\`; without it, or with another, 401 \`METRICS_TOKEN_REQUIRED\`.`,
      ...(token === undefined ? {} : { response: errors(401) }),
    },
    onRequest: token === undefined ? undefined : requireMetricsToken(token),
  }, async (_req, reply) => {
    reply.header('content-type', s.metrics.registry.contentType);
    return s.metrics.registry.metrics();
  });
}

/** The public port's operator routes: probes, /metrics when exposed there, the API documentation. */
export function opsRoutes(s: OpsRouteDeps): FastifyPluginAsync {
  const exposure = metricsExposure(s.config);
  return async (instance) => {
    const app = instance as unknown as App;
    probeRoutes(app, s, exposure.on === 'public' ? exposure : null);

    app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
    app.get('/api', { schema: { tags: ['Operations'], summary: 'Where the API documentation is', response: { 200: Type.Object({ name: Type.String(), version: Type.String(), openapi: Type.String(), docs: Type.String(), redoc: Type.String() }), ...errors(500) } } }, async () => ({
      name: 'Strongroom', version: '1.0', openapi: '/api/openapi.json', docs: '/api/docs', redoc: '/api/redoc',
    }));
    app.get('/api/redoc', { schema: { hide: true } }, async (_req, reply) => {
      reply.header('content-type', 'text/html; charset=utf-8');
      return renderReference(app.swagger() as unknown as OpenApiDoc);
    });
    await app.register(swaggerUi, { routePrefix: '/api/docs', uiConfig: { docExpansion: 'list', deepLinking: true }, staticCSP: false });
  };
}

/** The management listener's routes (MANAGEMENT_PORT): the probes and /metrics, nothing else. */
export function managementRoutes(s: OpsRouteDeps): FastifyPluginAsync {
  return async (instance) => probeRoutes(instance as unknown as App, s, { token: s.config.management.metricsToken });
}
