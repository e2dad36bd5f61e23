/**
 * USSD gateways authenticate with a key each (USSD_GATEWAY_KEYS), sent as `X-Gateway-Key`.
 * The presented key is compared with every configured key, always all of them: each side is
 * hashed with SHA-256 (equal lengths, so `timingSafeEqual` applies and the key's length does not
 * show) and compared in constant time, with no early exit on a match, so the answer time tells
 * neither which key matched nor how much of one did.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../platform/config.js';
import { PinErrors } from './errors.js';

export const GATEWAY_KEY_HEADER = 'x-gateway-key';

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

export class UssdGateways {
  private readonly keys: ReadonlyArray<{ name: string; digest: Buffer }>;
  /** Which gateway each authenticated request came through. */
  private readonly seen = new WeakMap<FastifyRequest, string>();

  /** `equal`: the constant-time comparison (`timingSafeEqual`; tests count its calls). */
  constructor(gateways: Config['ussd']['gateways'], private readonly equal: (a: Buffer, b: Buffer) => boolean = timingSafeEqual) {
    this.keys = gateways.map((g) => ({ name: g.name, digest: digest(g.key) }));
  }

  /** The gateway whose key `presented` is, or null (also when no gateway is configured). */
  identify(presented: string | undefined): string | null {
    const candidate = digest(presented ?? '');
    let match: string | null = null;
    for (const k of this.keys) {
      // Every key is compared; a match does not stop the loop.
      const equal = this.equal(candidate, k.digest);
      if (equal && presented !== undefined && presented !== '') match = k.name;
    }
    return match;
  }

  /**
   * An `onRequest` hook for the gateway routes: before the body is read and before any user is
   * looked up, a request without a configured gateway's key is `401 GATEWAY_UNAUTHORIZED`; with no
   * gateway configured at all, `503 USSD_NOT_CONFIGURED` (no key could be right: the operator must act).
   */
  readonly authenticate = async (request: FastifyRequest): Promise<void> => {
    if (this.keys.length === 0) throw PinErrors.USSD_NOT_CONFIGURED();
    const header = request.headers[GATEWAY_KEY_HEADER];
    const name = this.identify(typeof header === 'string' ? header : undefined);
    if (name === null) throw PinErrors.GATEWAY_UNAUTHORIZED();
    this.seen.set(request, name);
  };

  /** The gateway `authenticate` let through for this request. */
  gatewayOf(request: FastifyRequest): string {
    const name = this.seen.get(request);
    if (name === undefined) throw PinErrors.GATEWAY_UNAUTHORIZED();
    return name;
  }
}
