/**
 * The assertion consumer's first step, before any account is touched: the response is valid
 * (src/saml/response.ts), the request it answers is spent (one of parallel posts wins) and the
 * assertion's ID reserved in the replay cache (a replay on any node is refused).
 */
import type { Logger } from 'pino';
import type { Clock } from '../platform/clock.js';
import type { SamlSettings } from '../platform/config-saml.js';
import { AppError } from '../platform/errors.js';
import type { Metrics } from '../platform/observability/metrics.js';
import { SamlErrors } from './errors.js';
import { identityOf, type SamlIdentity } from './provision.js';
import type { SamlAssertionCache } from './replay.js';
import type { SamlRequests, SentRequest } from './requests.js';
import { readResponse, type SamlAssertion } from './response.js';

export interface Consumed {
  assertion: SamlAssertion;
  identity: SamlIdentity;
  /** The request it answers; null for an IdP-initiated sign-in. */
  request: SentRequest | null;
}

export class SamlConsumer {
  private readonly refused;

  constructor(private readonly deps: { clock: Clock; requests: SamlRequests; replay: SamlAssertionCache; log: Logger; metrics: Metrics }) {
    this.refused = deps.metrics.counter('strongroom_saml_responses_refused_total', 'SAML responses the assertion consumer refused, by error code and reason', ['code', 'reason']);
  }

  async consume(settings: SamlSettings, samlResponse: string): Promise<Consumed> {
    try {
      const assertion = await readResponse(settings, samlResponse, this.deps.clock.now(), this.deps.requests);
      let request: SentRequest | null = null;
      if (assertion.inResponseTo !== null) {
        request = (await this.deps.requests.consume(assertion.inResponseTo, 'authn')) ?? null;
        if (!request) throw SamlErrors.SAML_VALIDATION_FAILED({ reason: 'in_response_to' });
      }
      if (!(await this.deps.replay.reserve(assertion.issuer, assertion.assertionId, assertion.acceptableUntil))) throw SamlErrors.SAML_VALIDATION_FAILED({ reason: 'replayed' });
      return { assertion, identity: identityOf(assertion, settings.attributeMap), request };
    } catch (err) {
      if (err instanceof AppError) {
        const reason = String(err.details.reason ?? err.details.element ?? err.details.status ?? '');
        this.refused.inc({ code: err.code, reason });
        // For operators: why (the library's own words when it was the library); never the response itself.
        this.deps.log.warn({ code: err.code, reason, cause: err.cause instanceof Error ? err.cause.message : undefined }, 'SAML response refused');
      }
      throw err;
    }
  }
}
