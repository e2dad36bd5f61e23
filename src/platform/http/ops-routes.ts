/**
 * Operator-facing routes: liveness and readiness, Prometheus metrics, the OpenAPI document and
 * its two readable forms (/api/docs: Swagger UI; /api/redoc: ReDoc, served from the npm package).
 * /metrics is served where `metricsExposure` says (docs/operations.md "Metrics"): on the
 * management listener, on the public port behind METRICS_TOKEN, open outside production only,
 * or nowhere.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import Type, { type Static } from 'typebox';
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

const GEOIP_EXAMPLE = {
  status: 'ok' as const, max_age_days: 35,
  databases: [
    { database: 'city' as const, setting: 'GEOIP_CITY_DB' as const, source: 'operator' as const, type: 'GeoLite2-City', build_date: '2026-11-24T10:12:03.000Z', age_days: 12, stale: false },
    { database: 'asn' as const, setting: 'GEOIP_ASN_DB' as const, source: 'operator' as const, type: 'GeoLite2-ASN', build_date: '2026-11-24T10:10:41.000Z', age_days: 12, stale: false },
  ],
  warnings: [],
};

/** Geolocation (src/geo): which databases answer, their build dates, and warnings (a stale or bundled database is a warning, never an outage). */
const GeoipHealth = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('warning')], { description: '`warning`: read `warnings`. Geolocation still answers, and /health stays 200.' }),
  max_age_days: Type.Integer({ description: 'GEOIP_MAX_AGE_DAYS: a database built longer ago than this is stale.' }),
  databases: Type.Array(Type.Object({
    database: Type.Union([Type.Literal('country'), Type.Literal('asn'), Type.Literal('city')]),
    setting: Type.Union([Type.Literal('GEOIP_COUNTRY_DB'), Type.Literal('GEOIP_ASN_DB'), Type.Literal('GEOIP_CITY_DB')], { description: 'The setting naming the file (for the bundled development database, the setting that replaces it).' }),
    source: Type.Union([Type.Literal('operator'), Type.Literal('bundled')], { description: '`bundled`: the development copy from the npm package @ip-location-db/geo-whois-asn-country-mmdb (no setting given), no longer updated.' }),
    type: Type.String({ description: 'The database\'s own type (MMDB metadata).', examples: ['GeoLite2-City'] }),
    build_date: Type.String({ format: 'date-time', description: 'When the database was built (MMDB metadata build_epoch).' }),
    age_days: Type.Integer(),
    stale: Type.Boolean({ description: 'Older than max_age_days.' }),
  })),
  warnings: Type.Array(Type.String(), { description: 'What an operator should do: replace a stale file, set a database instead of the bundled one, fix a replacement that did not load.' }),
}, { title: 'GeoipHealth', examples: [GEOIP_EXAMPLE] });

export interface OpsRouteDeps {
  config: Pick<Config, 'env' | 'management'>;
  database: Pick<DatabaseHandle, 'ping' | 'kind'>;
  metrics: Metrics;
  /** The geolocation databases' state (src/geo). */
  geo: { health(): Static<typeof GeoipHealth> };
}

const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  database: Type.Object({ status: Type.Union([Type.Literal('ok'), Type.Literal('unreachable')]), kind: Type.String({ examples: ['postgres'] }) }),
  geoip: GeoipHealth,
  uptime_seconds: Type.Number(),
  version: Type.String({ examples: ['0.1.0'] }),
}, {
  title: 'Health', description: 'The process is up; `database.status` says whether the database answers; `geoip` what the geolocation databases are and any warning about them (a warning there never makes the node unhealthy).',
  examples: [{ status: 'ok', database: { status: 'ok', kind: 'postgres' }, geoip: GEOIP_EXAMPLE, uptime_seconds: 3600, version: '0.1.0' }],
});
const Degraded = Type.Object(Health.properties, {
  title: 'HealthDegraded', description: 'The database does not answer: take the node out of rotation.',
  examples: [{ status: 'degraded', database: { status: 'unreachable', kind: 'postgres' }, geoip: GEOIP_EXAMPLE, uptime_seconds: 3600, version: '0.1.0' }],
});

const MetricsText = {
  description: 'Prometheus text exposition format.',
  content: { 'text/plain': { schema: { type: 'string', examples: ['# TYPE strongroom_http_requests_total counter\nstrongroom_http_requests_total{route="/api/v1/auth/login",status="200"} 12\n'] } } },
};

/** ReDoc's browser bundle (npm package `redoc`), read once on first use. */
let redocBundle: Buffer | undefined;
function redocScript(): Buffer {
  redocBundle ??= readFileSync(createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js'));
  return redocBundle;
}

/**
 * The ReDoc page: the bundle from this service (no CDN), the document from /api/openapi.json.
 * It runs under the service's CSP (scripts and styles from 'self' and inline, no eval) with data:
 * images; its search index would run in a blob: worker, which the CSP refuses, so search is off.
 */
/**
 * The service's CSP plus `img-src data:`: ReDoc draws its icons as data: images. Nothing else is
 * relaxed (no eval, nothing from another origin: the vendor's logo stays out). docs/decisions.md
 * "OpenAPI document".
 */
const REDOC_CSP = "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:";

const REDOC_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Strongroom API reference</title><style>body{margin:0}</style></head>
<body><redoc spec-url="/api/openapi.json" disable-search="true" hide-download-button="false" expand-responses="" required-props-first="true" path-in-middle-panel="true"></redoc>
<script src="/api/redoc/redoc.standalone.js"></script></body></html>
`;

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
      geoip: s.geo.health(),
      uptime_seconds: Math.round((Date.now() - started) / 1000),
      version: '0.1.0',
    };
  };
  const healthSchema = {
    tags: ['Operations'],
    summary: 'Liveness and database readiness',
    description: 'Answers 200 when the process is up and the database answers a query, 503 when the database does not. `geoip` lists the geolocation databases with their build dates and warnings (a stale database is a warning: the answer stays 200). Open: no token.',
    response: { 200: Health, 503: Degraded },
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
      ...(token === undefined ? {} : { security: [{ metricsToken: [] }], response: { 200: MetricsText, ...errors(OpsErrors.METRICS_TOKEN_REQUIRED) } }),
      ...(token === undefined ? { response: { 200: MetricsText } } : {}),
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
    app.get('/api', { schema: { tags: ['Operations'], summary: 'Where the API documentation is', response: { 200: Type.Object({ name: Type.String(), version: Type.String(), openapi: Type.String(), docs: Type.String(), redoc: Type.String() }, { title: 'ApiIndex', description: 'Where the OpenAPI document and its readable forms are.', examples: [{ name: 'Strongroom', version: '1.0', openapi: '/api/openapi.json', docs: '/api/docs', redoc: '/api/redoc' }] }) } } }, async () => ({
      name: 'Strongroom', version: '1.0', openapi: '/api/openapi.json', docs: '/api/docs', redoc: '/api/redoc',
    }));
    app.get('/api/redoc', { schema: { hide: true } }, async (_req, reply) =>
      reply.type('text/html; charset=utf-8').header('content-security-policy', REDOC_CSP).send(REDOC_PAGE));
    app.get('/api/redoc/redoc.standalone.js', { schema: { hide: true } }, async (_req, reply) =>
      reply.type('application/javascript; charset=utf-8').header('cache-control', 'public, max-age=86400').send(redocScript()));
    await app.register(swaggerUi, { routePrefix: '/api/docs', uiConfig: { docExpansion: 'list', deepLinking: true }, staticCSP: false });
  };
}

/** The management listener's routes (MANAGEMENT_PORT): the probes and /metrics, nothing else. */
export function managementRoutes(s: OpsRouteDeps): FastifyPluginAsync {
  return async (instance) => probeRoutes(instance as unknown as App, s, { token: s.config.management.metricsToken });
}
