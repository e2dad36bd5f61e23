/**
 * What the router does not say by itself: which methods a path takes. Every route is recorded
 * as it is registered; a request the router cannot match is then told apart:
 *
 * - a path no route has: 404 NOT_FOUND;
 * - a path some route has, with another method: 405 METHOD_NOT_ALLOWED, the `Allow` header and
 *   `details.allowed` listing the methods it takes (HEAD wherever GET is, and OPTIONS);
 * - OPTIONS on a path some route has (and not a CORS preflight, which src/platform/http/cors.ts
 *   answers when CORS is on): 204 with `Allow`.
 *
 * Query parameters on a route that takes a JSON body and no query are refused (422
 * VALIDATION_ERROR naming them): such a client is sending in the URL, where proxies and browser
 * history keep it, what belongs in the body (a password, say). Their values are never echoed
 * nor logged.
 */
import type { FastifyRequest, RouteOptions } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { AppError, CommonErrors } from '../errors.js';

/** Methods in the order `Allow` lists them. */
const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** A route as registered: what the schema walkers of the tests (and 405 answers) read. */
export interface KnownRoute {
  method: string;
  url: string;
  schema: RouteOptions['schema'];
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route of this app as registered (HEAD and OPTIONS included), with its schema. */
    knownRoutes(): readonly KnownRoute[];
  }
}

export interface RouteTable {
  /** An `onRoute` hook: records each route's pattern and method. */
  onRoute(route: RouteOptions): void;
  /** The methods `path` takes, in `Allow` order (with OPTIONS), or [] when no route has it. */
  allowed(path: string): string[];
  list(): readonly KnownRoute[];
}

/**
 * The table answers "which methods take this path" with a router of its own of the kind Fastify
 * routes with (find-my-way, the same matching rules: parameters, regular expressions, wildcards),
 * holding every route but the CORS plugin's catch-all preflight.
 */
export function routeTable(): RouteTable {
  const router = FindMyWay({ ignoreTrailingSlash: false });
  const known: KnownRoute[] = [];
  const noop = (): void => undefined;
  return {
    list: () => known,
    onRoute(route) {
      const methods = (Array.isArray(route.method) ? route.method : [route.method]).map((m) => m.toUpperCase());
      for (const method of methods) known.push({ method, url: route.url, schema: route.schema });
      if (route.url === '*' || route.url === '/*') return;
      for (const m of methods) if (!router.hasRoute(m as HTTPMethod, route.url)) router.on(m as HTTPMethod, route.url, noop);
    },
    allowed(path) {
      const found = new Set(ORDER.filter((m) => m !== 'OPTIONS' && router.find(m as HTTPMethod, path) !== null));
      if (found.size === 0) return [];
      if (found.has('GET')) found.add('HEAD');
      found.add('OPTIONS');
      return ORDER.filter((m) => found.has(m));
    },
  };
}

/** 405 METHOD_NOT_ALLOWED for `method` on a path that takes `allowed`. */
export function methodNotAllowed(method: string, allowed: string[]): AppError {
  const allow = allowed.join(', ');
  return CommonErrors.METHOD_NOT_ALLOWED({ method, allowed }, {
    headers: { allow },
    message: `This path does not take ${method.slice(0, 16)}; it takes ${allow}.`,
  });
}

/**
 * An `onRoute` hook: a route that declares a body and no query refuses query parameters (422
 * VALIDATION_ERROR) first thing, before its guard; other routes pay nothing.
 */
export function refuseQueryOnBodyRoutes(route: RouteOptions): void {
  const schema = route.schema as { body?: unknown; querystring?: unknown } | undefined;
  if (!schema?.body || schema.querystring) return;
  route.onRequest = [refuseQuery, ...[route.onRequest ?? []].flat()] as RouteOptions['onRequest'];
}

/** Only the parameters' names are told, never their values. */
async function refuseQuery(request: FastifyRequest): Promise<void> {
  const q = request.url.indexOf('?');
  if (q === -1 || q === request.url.length - 1) return;
  const names = [...new Set([...new URLSearchParams(request.url.slice(q + 1)).keys()])].filter((n) => n !== '').map((n) => n.slice(0, 64)).slice(0, 20);
  if (names.length === 0) return;
  throw CommonErrors.VALIDATION_ERROR({
    fields: names.map((field) => ({ location: 'querystring', field, constraint: 'no_query', message: 'is not read from the query string: send it as a field of the JSON body' })),
  }, { message: `This route takes no query parameters: send ${names.join(', ')} as fields of the JSON body (Content-Type: application/json), not in the URL.` });
}
