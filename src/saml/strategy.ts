/**
 * SAML sign-in as a strategy of the one sign-in pipeline (ARCHITECTURE 4), so that lockout,
 * access policy, second factors, tokens, sessions and audit apply as for every other method.
 * The IdP checked the secret; what reaches the strategy is an assertion already validated
 * (src/saml/response.ts), its request spent and its ID reserved (src/saml/consumer.ts). The
 * subject is the linked account when there is one (a locked account stays locked), else the
 * IdP's subject; `authenticate` provisions, and never fails as a wrong secret would.
 */
import type { AuditContext } from '../audit/service.js';
import type { SamlSettings } from '../platform/config-saml.js';
import type { LoginAttempts } from '../policy/lockout.js';
import type { Authenticated, SignInStrategy, Subject } from '../signin/strategy.js';
import type { SamlIdentity, SamlProvisioning } from './provision.js';

export interface SamlInput {
  identity: SamlIdentity;
  settings: SamlSettings;
  audit: AuditContext;
}

export class SamlStrategy implements SignInStrategy<SamlInput> {
  readonly name = 'saml' as const;
  readonly passwordElsewhere = true;

  constructor(private readonly deps: { provisioning: SamlProvisioning; attempts: LoginAttempts }) {}

  async subject(input: SamlInput): Promise<Subject> {
    const { issuer, nameId } = input.identity;
    const linked = await this.deps.provisioning.linked(issuer, nameId);
    const key = linked ? this.deps.attempts.userKey(linked.user.id) : this.deps.attempts.subjectKey(undefined, `saml:${issuer}\n${nameId}`);
    return { key, identifier: input.identity.email ?? nameId, user: linked?.user };
  }

  async authenticate(input: SamlInput): Promise<Authenticated> {
    return this.deps.provisioning.userFor(input.identity, input.settings, input.audit);
  }
}
