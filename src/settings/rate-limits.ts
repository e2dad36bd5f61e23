/**
 * The rate limits in force, as configured (GET /api/v1/admin/rate-limits): each group's limit per
 * client and per account with its window and the variable that sets it, and the routes the group
 * covers, collected as the routes are registered (the same `config.rateLimit` the limiter reads:
 * src/policy/route-limits.ts).
 */
import type { RouteOptions } from 'fastify';
import { DEFAULT_RATE_LIMITS, RATE_GROUPS, rateLimitVar, type RateDimension, type RateGroup, type RateLimits, type RateRule } from '../platform/config-rate-limits.js';
import type { App } from '../platform/http/app.js';

export interface RateLimitView {
  limit: number;
  window_sec: number;
  /** The variable that sets it (`RATE_LIMIT_<GROUP>_<IP|ACCOUNT>`). */
  variable: string;
  /** `default`: the service's own value; `configured`: set by the environment. */
  source: 'default' | 'configured';
}

export interface RateGroupView {
  group: RateGroup;
  /** What "per client" counts: a client network, or for USSD the gateway. */
  per_client: RateLimitView | null;
  per_account: RateLimitView | null;
  routes: Array<{ method: string; url: string }>;
}

const same = (a: RateRule | null, b: RateRule | null): boolean => (a === null ? b === null : b !== null && a.limit === b.limit && a.windowSec === b.windowSec);

/** The routes of each group, as registered. */
export class RateLimitCatalogue {
  private readonly routes = new Map<RateGroup, Map<string, { method: string; url: string }>>();

  constructor(private readonly limits: RateLimits) {}

  /** Records every route that names a group; call from a module's root-scope `setup`. */
  install(app: App): void {
    app.addHook('onRoute', (route: RouteOptions) => {
      const group = route.config?.rateLimit?.group;
      if (!group) return;
      const byKey = this.routes.get(group) ?? new Map<string, { method: string; url: string }>();
      for (const method of [route.method].flat()) {
        if (method === 'HEAD') continue; // Fastify's automatic twin of a GET
        byKey.set(`${method} ${route.url}`, { method, url: route.url });
      }
      this.routes.set(group, byKey);
    });
  }

  view(): RateGroupView[] {
    const rule = (group: RateGroup, dim: RateDimension): RateLimitView | null => {
      const r = this.limits[group][dim];
      return r && { limit: r.limit, window_sec: r.windowSec, variable: rateLimitVar(group, dim), source: same(r, DEFAULT_RATE_LIMITS[group][dim]) ? 'default' : 'configured' };
    };
    return RATE_GROUPS.map((group) => ({
      group,
      per_client: rule(group, 'ip'),
      per_account: rule(group, 'account'),
      routes: [...(this.routes.get(group)?.values() ?? [])].sort((a, b) => a.url.localeCompare(b.url) || a.method.localeCompare(b.method)),
    }));
  }
}
