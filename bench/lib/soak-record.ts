/**
 * What `npm run soak` records of every request: per node and route, the time it ended and its
 * latency when it got the answer expected, or the error (status and the start of the body, or
 * the socket error) when not.
 */
import { post } from './client.js';

export const ROUTES = ['sign-in', 'totp', 'validate', 'refresh', 'faq search', 'logout', 'push send'] as const;
export type Route = (typeof ROUTES)[number];

export interface RouteRecord {
  /** Seconds since the load began, and latency in ms, of each answer as expected. */
  t: number[];
  ms: number[];
  errors: number;
  /** The first few distinct errors, for the report. */
  examples: string[];
}

export class Recorder {
  readonly nodes: Array<Record<Route, RouteRecord>>;
  private readonly t0: number;

  constructor(readonly bases: string[], t0 = performance.now()) {
    this.t0 = t0;
    this.nodes = bases.map(() => Object.fromEntries(ROUTES.map((r): [Route, RouteRecord] => [r, { t: [], ms: [], errors: 0, examples: [] }])) as Record<Route, RouteRecord>);
  }

  /** Seconds since the load began. */
  now(): number {
    return (performance.now() - this.t0) / 1000;
  }

  fail(node: number, route: Route, what: string): void {
    const rec = this.nodes[node]![route];
    rec.errors++;
    if (rec.examples.length < 5 && !rec.examples.includes(what)) rec.examples.push(what);
  }

  /**
   * POST `body` to `path` on `node`; the answer when its status is one of `expected` (and
   * `check`, when given, accepts it), otherwise undefined after counting an error.
   */
  async call(node: number, route: Route, path: string, body: unknown, opts: { token?: string; expected?: number[]; check?: (status: number, json: Record<string, unknown>) => boolean } = {}): Promise<{ status: number; json: Record<string, unknown> } | undefined> {
    const start = performance.now();
    let res: { status: number; body: string };
    try {
      res = await post(`${this.bases[node]}${path}`, JSON.stringify(body), opts.token ? { authorization: `Bearer ${opts.token}` } : {});
    } catch (err) {
      this.fail(node, route, `socket: ${(err as Error).message}`);
      return undefined;
    }
    const end = performance.now();
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(res.body) as Record<string, unknown>;
    } catch {
      // judged by the status below
    }
    if (!(opts.expected ?? [200]).includes(res.status) || (opts.check && !opts.check(res.status, json))) {
      this.fail(node, route, `${res.status} ${res.body.slice(0, 160)}`);
      return undefined;
    }
    const rec = this.nodes[node]![route];
    rec.t.push((end - this.t0) / 1000);
    rec.ms.push(end - start);
    return { status: res.status, json };
  }
}
