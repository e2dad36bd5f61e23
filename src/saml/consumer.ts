/**
 * The assertion consumer's first step, before any account is touched: the response is valid
 * (src/saml/response.ts), the request it answers is spent (one of parallel posts wins), a
 * browser sign-in's response is posted by the browser that started it (src/saml/browser-binding.ts)
 * and the assertion's ID reserved in the replay cache (a replay on any node is refused).
 */
import type { Logger } from 'pino';
import type { Clock } from '../platform/clock.js';
import type { SamlSettings } from '../platform/config-saml.js';
import { AppError } from '../platform/errors.js';
import type { Metrics } from '../platform/observability/metrics.js';
import { bindingMatches } from './browser-binding.js';
import { SamlErrors } from './errors.js';
import { identityOf, type SamlIdentity } from './provision.js';
import type { SamlAssertionCache } from './replay.js';
import type { SamlRequests, SentRequest } from './requests.js';
import type { SamlAssertion } from './response.js';

export interface Consumed {
  assertion: SamlAssertion;
  identity: SamlIdentity;
  /** The request it answers; null for an IdP-initiated sign-in. */
  request: SentRequest | null;
}

/**
 * A browser sign-in's response posted without that sign-in's cookie (401 SAML_VALIDATION_FAILED
 * `browser_binding`, counted and logged): the request is spent, nothing else was written. The
 * caller answers the browser at the request's relay URL.
 */
export interface RefusedBrowser {
  refused: AppError;
  request: SentRequest & { relayUrl: string };
}

/** Whether a request must be answered by the browser that started it: a browser sign-in (a relay URL), or any request recorded with a binding. */
export const browserBound = (request: SentRequest | null): request is SentRequest => request !== null && (request.relayUrl !== null || request.browserBinding !== null);

export class SamlConsumer {
  private readonly refused;

  constructor(private readonly deps: { clock: Clock; requests: SamlRequests; replay: SamlAssertionCache; log: Logger; metrics: Metrics }) {
    this.refused = deps.metrics.counter('strongroom_saml_responses_refused_total', 'SAML responses the assertion consumer refused, by error code and reason', ['code', 'reason']);
  }

  /**
   * `browserNonce`: the browser-binding cookie the post carried, if any. A response to a request
   * that is browser-bound (`browserBound`) is refused unless its SHA-256 is the one recorded
   * (a browser sign-in recorded without one, too: fail closed).
   */
  async consume(settings: SamlSettings, samlResponse: string, browserNonce?: string): Promise<Consumed | RefusedBrowser> {
    try {
      // The SAML library (./response.js and what it imports) is loaded by the first response, not at start.
      const { readResponse } = await import('./response.js');
      const assertion = await readResponse(settings, samlResponse, this.deps.clock.now(), this.deps.requests);
      let request: SentRequest | null = null;
      if (assertion.inResponseTo !== null) {
        request = (await this.deps.requests.consume(assertion.inResponseTo, 'authn')) ?? null;
        if (!request) throw SamlErrors.SAML_VALIDATION_FAILED({ reason: 'in_response_to' });
      }
      if (browserBound(request) && !bindingMatches(browserNonce, request.browserBinding)) {
        const refused = SamlErrors.SAML_VALIDATION_FAILED({ reason: 'browser_binding' });
        // A request with a binding but no relay URL is not made here; were it, there is no page to go back to.
        if (request.relayUrl === null) throw refused;
        this.count(refused);
        return { refused, request: { ...request, relayUrl: request.relayUrl } };
      }
      if (!(await this.deps.replay.reserve(assertion.issuer, assertion.assertionId, assertion.acceptableUntil))) throw SamlErrors.SAML_VALIDATION_FAILED({ reason: 'replayed' });
      return { assertion, identity: identityOf(assertion, settings.attributeMap), request };
    } catch (err) {
      if (err instanceof AppError) this.count(err);
      throw err;
    }
  }

  /** Counts and logs a refusal (for operators: why, the library's own words when it was the library; never the response itself). */
  private count(err: AppError): void {
    const reason = String(err.details.reason ?? err.details.element ?? err.details.status ?? '');
    this.refused.inc({ code: err.code, reason });
    this.deps.log.warn({ code: err.code, reason, cause: err.cause instanceof Error ? err.cause.message : undefined }, 'SAML response refused');
  }
}
