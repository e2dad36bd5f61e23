/**
 * Every PostgreSQL advisory lock the service takes, in one place: the first key of the two-key
 * form (`pg_advisory_xact_lock(space, hashtext(name))`) or the single key. Two features that
 * picked the same number by chance would serialise each other, or worse, one would believe it
 * holds the other's lock; a unit test keeps the numbers distinct.
 */
export const ADVISORY_LOCKS = {
  /** Creating users that share an identifier (src/admin/service.ts), and provisioning from an identity provider. */
  userCreate: 5_550_017,
  /** One-node background jobs, one per job name (src/platform/scheduler.ts). */
  jobs: 7_340_032,
  /** Sending one-time codes, one per challenge (src/mfa/otp/store.ts). */
  otpSend: 0x4f545053, // "OTPS"
  /** Adding a JWT signing key (src/tokens/keyring.ts); single-key form. */
  jwtKeys: 8_675_309,
  /** Creating or rotating the transport key (src/transport/keys.ts); single-key form. */
  transportKeys: 8_675_310,
  /** Creating or rotating the SAML service provider's signing key (src/saml/sp-keys.ts); single-key form. */
  samlSpKeys: 8_675_311,
  /** Setting who may use a channel, one per channel (src/access/channels.ts): its row may not exist yet to lock. */
  channelAccess: 8_675_312,
  /** A change that may leave no active administrator (src/admin/lifecycle.ts): counted one at a time; single-key form. */
  adminMembership: 8_675_313,
  /** Saving the risk response policy (src/risk/decisions/routes.ts): its row may not exist yet to lock; single-key form. */
  riskPolicy: 8_675_314,
} as const;
