/**
 * Accounts whose password another system keeps (an LDAP directory; later a SAML identity
 * provider, which keeps no password this service could check). Such an account has no usable
 * local password: its current password is checked where it lives, and this service never sets
 * one for it (docs/decisions.md "LDAP": a local password would outlive the directory account).
 *
 * The module that speaks to the other system registers its check here at composition (the LDAP
 * module binds as the linked DN); for an identity-provider type with no check registered there
 * is no password to confirm (409 PASSWORD_MANAGED_EXTERNALLY).
 */
import type { Db } from '../platform/db/database.js';
import { CredentialErrors } from './errors.js';
import type { UserIdentityProvidersTable } from '../platform/db/schema.js';

export type IdentityProviderType = UserIdentityProvidersTable['idp_type'];

/** The link that makes an account another system's. */
export interface ExternalLink {
  userId: number;
  idpType: IdentityProviderType;
  /** The identity provider's name for the account (for LDAP, the lower-cased DN). */
  subject: string;
}

/** True when `password` is the account's password in the other system. May throw the system's own "unavailable" error. */
export type ExternalPasswordCheck = (link: ExternalLink, password: string) => Promise<boolean>;

export class ExternalPasswords {
  private readonly checks = new Map<IdentityProviderType, ExternalPasswordCheck>();

  constructor(private readonly db: Db) {}

  register(idpType: IdentityProviderType, check: ExternalPasswordCheck): void {
    if (this.checks.has(idpType)) throw new Error(`a password check for ${idpType} accounts is already registered`);
    this.checks.set(idpType, check);
  }

  /** The account's link to another system, when it has one (its password is then that system's). */
  async linkOf(userId: number, trx: Db = this.db): Promise<ExternalLink | undefined> {
    // An LDAP link first: it is the one that can check a password.
    const row = await trx.selectFrom('user_identity_providers').select(['idp_type', 'idp_subject']).where('user_id', '=', userId)
      .orderBy('idp_type').orderBy('id').executeTakeFirst();
    return row ? { userId, idpType: row.idp_type, subject: row.idp_subject } : undefined;
  }

  /**
   * Whether `password` is the account's password where it lives. An identity provider that keeps
   * no password this service can check (SAML) is 409 PASSWORD_MANAGED_EXTERNALLY: thrown under a
   * reserved attempt, it gives the attempt back, so the user is not locked out for asking.
   */
  async verify(link: ExternalLink, password: string): Promise<boolean> {
    const check = this.checks.get(link.idpType);
    if (!check) throw CredentialErrors.PASSWORD_MANAGED_EXTERNALLY({ idp_type: link.idpType });
    return check(link, password);
  }
}
