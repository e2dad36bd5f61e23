/**
 * The OpenAPI document, as a client generator needs it (docs/decisions.md "OpenAPI document").
 * Routes declare only what is theirs: their schemas and the error codes they raise themselves
 * (`errors(...)`, src/platform/http/schemas.ts). What every route of a kind shares is added here,
 * so a new route cannot forget it:
 *
 * - guarded routes (a guard hook, or `security: bearer`): the bearer scheme, `X-Device-Fingerprint`,
 *   the guard's 401 codes, 403 POLICY_RESTRICTED, 403 PERMISSION_DENIED for a permission;
 * - a body, parameters or a query string: the parsing and schema codes;
 * - transport-encrypted routes: `x-encrypted` and DECRYPTION_FAILED, ENCRYPTION_REQUIRED;
 * - USSD routes: the gateway key scheme and GATEWAY_UNAUTHORIZED; rate-limited routes: 429.
 *
 * Then every request and success body becomes a named component schema with an example (built
 * from its properties' examples when it has none), and each operation gets an `operationId`.
 */
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { RouteOptions } from 'fastify';
import { ERROR_CATALOGUE } from './error-catalogue.js';
import { AccessErrors } from './access/errors.js';
import { PinErrors } from './pins/errors.js';
import { CommonErrors } from './platform/errors.js';
import { declaredCodes, errorResponse, isErrorBodySchema, type DeclaredError } from './platform/http/schemas.js';
import { guardHookInfo } from './sessions/guard.js';
import { SessionErrors } from './sessions/errors.js';
import { TokenErrors } from './tokens/errors.js';
import { TransportErrors } from './transport/errors.js';
import { isTransportExempt, isUssdPath } from './transport/plugin.js';
import { exampleOf, hoistBodies } from './openapi-bodies.js';

type Schema = Record<string, unknown>;

/** Every code of every catalogue, by code. */
const BY_CODE = new Map<string, DeclaredError>(
  Object.values(ERROR_CATALOGUE).flatMap((defs) => Object.entries(defs).map(([code, def]) => [code, { code, ...def }] as const)),
);

/** What the bearer guard answers before the route runs (src/sessions/guard.ts). */
export const GUARD_ERRORS: DeclaredError[] = [
  TokenErrors.TOKEN_MISSING, TokenErrors.TOKEN_INVALID, TokenErrors.TOKEN_EXPIRED, TokenErrors.TOKEN_NOT_YET_VALID, TokenErrors.TOKEN_REVOKED,
  TokenErrors.FINGERPRINT_REQUIRED, TokenErrors.FINGERPRINT_MISMATCH, TokenErrors.IP_MISMATCH, SessionErrors.SESSION_INVALID, SessionErrors.SESSION_EXPIRED,
];
const BODY_ERRORS: DeclaredError[] = [CommonErrors.MALFORMED_REQUEST, CommonErrors.PAYLOAD_TOO_LARGE, CommonErrors.UNSUPPORTED_MEDIA_TYPE, CommonErrors.VALIDATION_ERROR];

export const SECURITY_SCHEMES = {
  bearer: {
    type: 'http', scheme: 'bearer', bearerFormat: 'JWT',
    description: 'The access token of a sign-in (`access_token`). A token issued with a device fingerprint also needs the same value in `X-Device-Fingerprint`.',
  },
  gatewayKey: {
    type: 'apiKey', in: 'header', name: 'X-Gateway-Key',
    description: 'A USSD gateway\'s key (one per gateway, `USSD_GATEWAY_KEYS`): the USSD routes only.',
  },
  metricsToken: {
    type: 'http', scheme: 'bearer',
    description: '`METRICS_TOKEN`, for `GET /metrics` when it is set.',
  },
} as const;

const HEADERS = {
  fingerprint: {
    type: 'string', maxLength: 256,
    description: 'The device fingerprint the tokens were issued for (the `device_fingerprint` of the sign-in). Required when the token is bound to one; a sign-in route records it for the session.',
    examples: ['a3f1c9e07b2d4e58'],
  },
  encrypted: {
    type: 'string', enum: ['true'],
    description: 'Transport encryption: `true` when the body is an encrypted envelope (`{"data": {...}}`); the answer is then encrypted too and carries `x-encrypted: true` (docs/guides/transport-encryption-sdk.md; the SDK `@strongroom/client` does it).',
  },
  correlation: {
    type: 'string', maxLength: 128,
    description: 'Your own id for the request, echoed in `X-Correlation-ID` and logged; the service\'s id is `X-Request-ID` in the answer.',
    examples: ['checkout-7f3a'],
  },
};

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const isDocs = (url: string): boolean => url === '/api' || url.startsWith('/api/docs') || url.startsWith('/api/redoc') || url === '/api/openapi.json';
/** What the transport plugin decrypts and seals (only the versioned API: the rest is documents and operations). */
const encryptable = (url: string): boolean => url.startsWith('/api/v1/') && !isTransportExempt(url) && !isUssdPath(url);

/** Routes that record the caller's device fingerprint without a token (sign-in, second factors). */
const readsFingerprint = (url: string): boolean => /^\/api\/v1\/(auth|2fa)\//.test(url);

function hooksOf(route: RouteOptions): unknown[] {
  return [route.onRequest, route.preValidation, route.preHandler].flat().filter((h) => h !== undefined);
}

interface RouteKind {
  guarded: boolean;
  policy: boolean;
  permission: boolean;
  gateway: boolean;
}

function kindOf(route: RouteOptions, schema: Schema, url: string): RouteKind {
  const infos = hooksOf(route).map(guardHookInfo).filter((i) => i !== undefined);
  const security = (schema.security as Array<Record<string, unknown>> | undefined) ?? [];
  const declaredBearer = security.some((s) => 'bearer' in s);
  return {
    guarded: infos.length > 0 || declaredBearer,
    policy: infos.some((i) => i.policy) || (infos.length === 0 && declaredBearer),
    permission: infos.some((i) => i.permission !== undefined),
    gateway: isUssdPath(url),
  };
}

/** The codes every route of this kind can answer with, beside its own. */
function sharedErrors(route: RouteOptions, schema: Schema, url: string, kind: RouteKind): DeclaredError[] {
  const methods = [route.method].flat();
  const out: DeclaredError[] = [];
  if (kind.guarded) out.push(...GUARD_ERRORS);
  if (kind.policy) out.push(AccessErrors.POLICY_RESTRICTED);
  if (kind.permission) out.push(CommonErrors.PERMISSION_DENIED);
  if (kind.gateway) out.push(PinErrors.GATEWAY_UNAUTHORIZED, PinErrors.USSD_NOT_CONFIGURED);
  if (schema.body) out.push(...BODY_ERRORS);
  if (schema.params || schema.querystring) out.push(CommonErrors.VALIDATION_ERROR);
  if (encryptable(url)) {
    out.push(TransportErrors.DECRYPTION_FAILED);
    if (methods.some((m) => BODY_METHODS.has(m)) || route.config?.personalData === true) out.push(TransportErrors.ENCRYPTION_REQUIRED);
  }
  if (route.config?.rateLimit) out.push(CommonErrors.RATE_LIMITED);
  if (!isDocs(url)) out.push(CommonErrors.INTERNAL_ERROR);
  return out;
}

/** The route's responses with the shared codes merged into its own, one response per status. */
function withErrors(response: Record<string, unknown>, shared: DeclaredError[]): Record<string, unknown> {
  const out: Record<string, unknown> = { ...response };
  const byStatus = new Map<number, DeclaredError[]>();
  for (const [status, schema] of Object.entries(response)) {
    const codes = declaredCodes(schema);
    if (codes.length > 0) byStatus.set(Number(status), codes.map((c) => BY_CODE.get(c) ?? { code: c, status: Number(status), message: '' }));
  }
  for (const d of shared) {
    const existing = response[d.status] as Schema | undefined;
    if (existing !== undefined && declaredCodes(existing).length === 0 && !isErrorBodySchema(existing)) continue; // a documented non-error body (a 503 health answer)
    byStatus.set(d.status, [...(byStatus.get(d.status) ?? []), d]);
  }
  for (const [status, codes] of byStatus) out[status] = errorResponse(status, codes);
  return out;
}

/** The headers a route reads, for the document (its own `headers` schema kept). */
function withHeaders(schema: Schema, url: string, kind: RouteKind): Schema | undefined {
  const own = (schema.headers as Schema | undefined) ?? { type: 'object', properties: {} };
  const properties: Schema = { ...(own.properties as Schema) };
  if (kind.guarded || readsFingerprint(url)) properties['X-Device-Fingerprint'] = HEADERS.fingerprint;
  if (encryptable(url)) properties['x-encrypted'] = HEADERS.encrypted;
  if (!isDocs(url)) properties['X-Correlation-ID'] = HEADERS.correlation;
  return Object.keys(properties).length === 0 ? undefined : { ...own, type: 'object', properties };
}

function securityOf(schema: Schema, kind: RouteKind): unknown {
  if (kind.gateway) return [{ gatewayKey: [] }];
  if (kind.guarded && schema.security === undefined) return [{ bearer: [] }];
  return schema.security;
}

/** @fastify/swagger's per-route transform: the document's view of a route, never its runtime schema. */
export function transformRoute({ schema, url, route }: { schema: unknown; url: string; route: RouteOptions }): { schema: Schema; url: string } {
  const own = (schema ?? {}) as Schema;
  if (own.hide === true) return { schema: own, url };
  const kind = kindOf(route, own, url);
  const response = withErrors((own.response as Record<string, unknown> | undefined) ?? {}, sharedErrors(route, own, url, kind));
  const headers = withHeaders(own, url, kind);
  const security = securityOf(own, kind);
  return {
    schema: {
      ...own,
      operationId: own.operationId ?? operationId([route.method].flat()[0]!, url),
      response,
      ...(headers === undefined ? {} : { headers }),
      ...(security === undefined ? {} : { security }),
    },
    url,
  };
}

/** `post /api/v1/admin/users/:id/reset-pin` → `postAdminUsersByIdResetPin`. */
export function operationId(method: string, url: string): string {
  const words = url.replace(/^\/api\/v1(?=\/)/, '').split('/').filter((w) => w !== '')
    .flatMap((w) => (w.startsWith(':') ? ['by', w.slice(1)] : [w]))
    .flatMap((w) => w.split(/[^A-Za-z0-9]+/)).filter((w) => w !== '');
  return method.toLowerCase() + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

/** The @fastify/swagger options of the service's document. */
export function openapiOptions(tags: Array<{ name: string; description?: string }>): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Strongroom',
        version: '1.0',
        description: [
          'Authentication service of a banking platform.',
          '',
          'Every error has the body `{status_code, error_code, message, details}`; `error_code` is stable (each response lists the codes it can carry), `details.request_id` names the request (also the `X-Request-ID` header).',
          '',
          'Send `X-Device-Fingerprint` on every request when the token was issued with a device fingerprint. Request and response bodies of most routes may be encrypted (`x-encrypted: true`); plaintext is accepted unless transport encryption is enforced. USSD gateways authenticate with `X-Gateway-Key`.',
        ].join('\n'),
      },
      components: { securitySchemes: SECURITY_SCHEMES },
      tags,
    },
    transform: transformRoute as unknown as FastifyDynamicSwaggerOptions['transform'],
    transformObject: ((documentObject: { openapiObject: Schema }) => hoistBodies(documentObject.openapiObject)) as unknown as FastifyDynamicSwaggerOptions['transformObject'],
  };
}

export { exampleOf };
