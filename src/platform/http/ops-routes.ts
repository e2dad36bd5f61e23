/**
 * Operator-facing routes: liveness and readiness, Prometheus metrics, the OpenAPI document and
 * its two readable forms (/api/docs: Swagger UI; /api/redoc: a server-rendered reference).
 */
import Type from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import swaggerUi from '@fastify/swagger-ui';
import type { DatabaseHandle } from '../db/database.js';
import type { Metrics } from '../observability/metrics.js';
import type { App } from './app.js';
import { errors } from './schemas.js';

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

export function opsRoutes(s: { database: Pick<DatabaseHandle, 'ping' | 'kind'>; metrics: Metrics }): FastifyPluginAsync {
  const started = Date.now();
  return async (instance) => {
    const app = instance as unknown as App;
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

    app.get('/metrics', { schema: { tags: ['Operations'], summary: 'Prometheus metrics', description: 'Text exposition format: requests and latency by route, sign-ins by outcome, active sessions, process metrics.' } }, async (_req, reply) => {
      reply.header('content-type', s.metrics.registry.contentType);
      return s.metrics.registry.metrics();
    });

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
