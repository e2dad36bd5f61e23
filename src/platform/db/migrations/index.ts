import type { Migration, MigrationProvider } from 'kysely';
import * as core from './001-core.js';
import * as transport from './002-transport.js';
import * as fieldEncryption from './003-field-encryption.js';
import * as expiryWarning from './004-password-expiry-warning.js';
import * as mfa from './005-mfa.js';
import * as transportReplay from './006-transport-replay.js';
import * as accessPolicies from './007-access-policies.js';
import * as deviceBindings from './008-device-bindings.js';
import * as pins from './009-pins.js';
import * as phoneUnindexed from './010-phone-unindexed.js';
import * as rateLimitWindows from './011-rate-limit-windows.js';
import * as channelLimits from './012-channel-limits.js';
import * as identityProviders from './013-identity-providers.js';
import * as samlConfig from './014-saml-config.js';
import * as entities from './015-entities.js';
import * as samlRequests from './016-saml-requests.js';
import * as samlSignin from './017-saml-signin.js';
import * as faq from './018-faq.js';
import * as samlBrowserBinding from './019-saml-browser-binding.js';
import * as deviceTokens from './020-device-tokens.js';
import * as pushMessages from './021-push-messages.js';
import * as notificationTemplates from './022-notification-templates.js';
import * as pushCodeDevice from './023-push-code-device.js';
import * as otpDeviceIndex from './024-otp-device-index.js';
import * as channelAccess from './025-channel-access.js';
import * as userLifecycle from './026-user-lifecycle.js';
import * as roleAdmin from './027-role-admin.js';
import * as publicIds from './028-public-ids.js';
import * as auditPartitions from './029-audit-partitions.js';
import * as recordRetention from './030-record-retention.js';
import * as recovery from './031-recovery.js';
import * as recoveryPhase2 from './032-recovery-phase-2.js';
import * as recoverySnapshot from './033-recovery-snapshot.js';
import * as consent from './034-consent.js';
import * as profile from './035-profile.js';
import * as gdprRequests from './036-gdpr-requests.js';
import * as breaches from './037-breaches.js';
import * as erasure from './038-erasure.js';
import * as auditUsernameIndex from './039-audit-username-index.js';
import * as riskProfiles from './040-risk-profiles.js';
import * as securityAlerts from './041-security-alerts.js';
import * as riskNotMe from './042-risk-not-me.js';
import * as riskPolicy from './043-risk-policy.js';
import * as realtimeEvents from './044-realtime-events.js';
import * as passkeys from './045-passkeys.js';
import * as pushApproval from './046-push-approval.js';
import * as pushApprovalStepUp from './047-push-approval-step-up.js';
import * as pushApprovalAttestation from './048-push-approval-attestation.js';

/** Migrations live in code, in order; `Migrator` records which have run. */
export const migrations: Record<string, Migration> = {
  '001-core': core,
  '002-transport': transport,
  '003-field-encryption': fieldEncryption,
  '004-password-expiry-warning': expiryWarning,
  '005-mfa': mfa,
  '006-transport-replay': transportReplay,
  '007-access-policies': accessPolicies,
  '008-device-bindings': deviceBindings,
  '009-pins': pins,
  '010-phone-unindexed': phoneUnindexed,
  '011-rate-limit-windows': rateLimitWindows,
  '012-channel-limits': channelLimits,
  '013-identity-providers': identityProviders,
  '014-saml-config': samlConfig,
  '015-entities': entities,
  '016-saml-requests': samlRequests,
  '017-saml-signin': samlSignin,
  '018-faq': faq,
  '019-saml-browser-binding': samlBrowserBinding,
  '020-device-tokens': deviceTokens,
  '021-push-messages': pushMessages,
  '022-notification-templates': notificationTemplates,
  '023-push-code-device': pushCodeDevice,
  '024-otp-device-index': otpDeviceIndex,
  '025-channel-access': channelAccess,
  '026-user-lifecycle': userLifecycle,
  '027-role-admin': roleAdmin,
  '028-public-ids': publicIds,
  '029-audit-partitions': auditPartitions,
  '030-record-retention': recordRetention,
  '031-recovery': recovery,
  '032-recovery-phase-2': recoveryPhase2,
  '033-recovery-snapshot': recoverySnapshot,
  '034-consent': consent,
  '035-profile': profile,
  '036-gdpr-requests': gdprRequests,
  '037-breaches': breaches,
  '038-erasure': erasure,
  '039-audit-username-index': auditUsernameIndex,
  '040-risk-profiles': riskProfiles,
  '041-security-alerts': securityAlerts,
  '042-risk-not-me': riskNotMe,
  '043-risk-policy': riskPolicy,
  '044-realtime-events': realtimeEvents,
  '045-passkeys': passkeys,
  '046-push-approval': pushApproval,
  '047-push-approval-step-up': pushApprovalStepUp,
  '048-push-approval-attestation': pushApprovalAttestation,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
