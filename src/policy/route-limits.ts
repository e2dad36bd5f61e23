/**
 * Rate limits on the authentication routes (issue 10, section 3). A route opts in by naming its
 * group, and how to find the account it acts on, in its config:
 *
 *   config: { rateLimit: { group: 'signin', account: (request) => body.username } }
 *
 * One root `onRoute` hook then appends a pre-handler to exactly those routes, after their own
 * (so a signed-in route's account is `request.auth`), before the handler does any work. It
 * counts the request per client and per account in one statement, answers 429 RATE_LIMITED with
 * Retry-After past a limit, and sets RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset on
 * every answer of the route, errors included. Limits per group: src/platform/config-rate-limits.ts.
 */
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import type { RateDimension, RateGroup, RateLimits } from '../platform/config-rate-limits.js';
import type { App } from '../platform/http/app.js';
import { CommonErrors } from '../platform/errors.js';
import { errors } from '../platform/http/schemas.js';
import type { Metrics } from '../platform/observability/metrics.js';
import { clientNetwork } from './network.js';
import { RateLimitedError, rateHeaders, rateKey, type Bucket, type RateLimiter } from './rate-limit.js';

export interface RouteRateLimit {
  group: RateGroup;
  /** The account the request names or acts for (username, email, phone, user id, token); none: not counted per account. */
  account?: (request: FastifyRequest) => string | undefined;
  /** Counts the client by this instead of its network: a USSD gateway's name, whose address all its subscribers share. */
  client?: (request: FastifyRequest) => string | undefined;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    rateLimit?: RouteRateLimit;
  }
}

export interface RouteLimitDeps {
  rateLimiter: RateLimiter;
  limits: RateLimits;
  /** Hashes client networks (the same keys the sign-in budget uses). */
  ipHasher: Hasher;
  /** Hashes account names, so the counters table holds no usernames or phone numbers. */
  accountHasher: Hasher;
  metrics: Metrics;
}

/** Account names differ only in case and surrounding spaces for the same person. */
function normalise(account: string): string {
  return account.normalize('NFKC').trim().toLowerCase();
}

/** The group's buckets for this request (the `signin` group's per-network one is the sign-in budget re-authentication shares). */
function buckets(d: RouteLimitDeps, spec: RouteRateLimit, request: FastifyRequest): Bucket[] {
  const limits = d.limits[spec.group];
  const out: Bucket[] = [];
  if (limits.ip) {
    const client = spec.client?.(request);
    out.push(client === undefined
      ? { key: rateKey(spec.group, 'ip', d.ipHasher.hex(clientNetwork(request.ip))), kind: 'ip', rule: limits.ip }
      : { key: rateKey(spec.group, 'client', d.accountHasher.hex(client)), kind: 'client', rule: limits.ip });
  }
  const account = limits.account ? spec.account?.(request) : undefined;
  if (limits.account && typeof account === 'string' && normalise(account) !== '') {
    out.push({ key: rateKey(spec.group, 'account', d.accountHasher.hex(normalise(account))), kind: 'account', rule: limits.account });
  }
  return out;
}

function describe(limits: RateLimits[RateGroup], group: RateGroup): string {
  const rule = (dim: RateDimension, who: string): string | undefined => {
    const r = limits[dim];
    return r ? `${r.limit} per ${r.windowSec >= 60 ? `${r.windowSec / 60} min` : `${r.windowSec} s`} ${who}` : undefined;
  };
  const parts = [rule('ip', group === 'ussd' ? 'per gateway' : 'per client network'), rule('account', group === 'ussd' ? 'per subscriber' : 'per account')].filter(Boolean);
  return parts.length === 0
    ? ''
    : `\n\nRate limit (group \`${group}\`, as this server is configured): ${parts.join(', ')}; past it \`429 RATE_LIMITED\` with \`Retry-After\`. Every answer carries \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\`.`;
}

/** Installs the hook; call from a module's root-scope `setup`, before any routes are registered. */
export function installRouteLimits(app: App, d: RouteLimitDeps): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const spec = route.config?.rateLimit;
    if (!spec) return;
    const limits = d.limits[spec.group];
    const check = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      try {
        const state = await d.rateLimiter.take(buckets(d, spec, request));
        if (state) reply.headers(rateHeaders(state));
      } catch (err) {
        if (!(err instanceof RateLimitedError)) throw err;
        d.metrics.rateLimited.inc({ group: spec.group, dimension: err.bucket.kind === 'account' ? 'account' : 'client' });
        throw err.toAppError();
      }
    };
    const own = route.preHandler === undefined ? [] : Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler];
    route.preHandler = [...own, check];
    if (route.schema) {
      route.schema.description = `${route.schema.description ?? ''}${describe(limits, spec.group)}`;
      const responses = route.schema.response as Record<number, unknown> | undefined;
      if (responses && !(429 in responses)) route.schema.response = { ...responses, ...errors(CommonErrors.RATE_LIMITED) };
    }
  });
}

/** The account named by a string field of the body (username, email, phone number, token). */
export function bodyField(name: string): (request: FastifyRequest) => string | undefined {
  return (request) => {
    const value = (request.body as Record<string, unknown> | null | undefined)?.[name];
    return typeof value === 'string' ? value : undefined;
  };
}
