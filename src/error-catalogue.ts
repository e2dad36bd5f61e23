/**
 * Every error code the service can answer with, gathered explicitly from each capability's
 * catalogue. docs/errors.md is checked against it by a test.
 */
import { AccessErrors } from './access/errors.js';
import { AdminErrors } from './admin/errors.js';
import { AuditErrors } from './audit/errors.js';
import { CredentialErrors } from './credentials/errors.js';
import { MfaErrors } from './mfa/errors.js';
import { OtpErrors } from './mfa/otp/errors.js';
import { TotpErrors } from './mfa/totp/errors.js';
import { MfaResetErrors } from './mfa/reset/errors.js';
import { SecurityQuestionErrors } from './mfa/security-questions/errors.js';
import { CommonErrors, type ErrorDef } from './platform/errors.js';
import { OpsErrors } from './platform/http/ops-errors.js';
import { PasskeyErrors } from './passkeys/errors.js';
import { PushApprovalErrors } from './push-approval/errors.js';
import { PinErrors } from './pins/errors.js';
import { RecoveryErrors } from './recovery/errors.js';
import { ProfileErrors } from './gdpr/profile/errors.js';
import { GdprExportErrors } from './gdpr/export/errors.js';
import { ConsentErrors } from './gdpr/consent/errors.js';
import { BreachErrors } from './gdpr/breaches/errors.js';
import { ErasureErrors } from './gdpr/erasure/errors.js';
import { AlertErrors } from './risk/alerts/errors.js';
import { RiskResponseErrors } from './risk/responses/errors.js';
import { RiskDecisionErrors } from './risk/decisions/errors.js';
import { RealtimeErrors } from './realtime/errors.js';
import { LdapErrors } from './ldap/errors.js';
import { SamlErrors } from './saml/errors.js';
import { SettingsErrors } from './settings/errors.js';
import { ThirdPartyErrors } from './third-party/errors.js';
import { EntityErrors } from './entities/errors.js';
import { DeviceErrors } from './devices/errors.js';
import { FaqErrors } from './faq/errors.js';
import { PushErrors } from './notifications/errors.js';
import { TemplateErrors } from './notifications/templates/errors.js';
import { PolicyErrors } from './policy/errors.js';
import { RoleErrors } from './roles/errors.js';
import { SessionErrors } from './sessions/errors.js';
import { SignInErrors } from './signin/errors.js';
import { TokenErrors } from './tokens/errors.js';
import { TransportErrors } from './transport/errors.js';

export const ERROR_CATALOGUE: Record<string, Record<string, ErrorDef>> = {
  Common: CommonErrors.definitions,
  Tokens: TokenErrors.definitions,
  Sessions: SessionErrors.definitions,
  'Sign-in': SignInErrors.definitions,
  Credentials: CredentialErrors.definitions,
  'PINs and USSD': PinErrors.definitions,
  LDAP: LdapErrors.definitions,
  SAML: SamlErrors.definitions,
  'Third-party sign-in': ThirdPartyErrors.definitions,
  Branches: EntityErrors.definitions,
  FAQ: FaqErrors.definitions,
  'Device tokens': DeviceErrors.definitions,
  Push: PushErrors.definitions,
  'Notification templates': TemplateErrors.definitions,
  Policy: PolicyErrors.definitions,
  'Access policy': AccessErrors.definitions,
  Administration: AdminErrors.definitions,
  Roles: RoleErrors.definitions,
  'Transport encryption': TransportErrors.definitions,
  'Second factors': MfaErrors.definitions,
  TOTP: TotpErrors.definitions,
  'One-time codes': OtpErrors.definitions,
  'Security questions': SecurityQuestionErrors.definitions,
  'MFA reset': MfaResetErrors.definitions,
  Passkeys: PasskeyErrors.definitions,
  'Push approval': PushApprovalErrors.definitions,
  'Account recovery': RecoveryErrors.definitions,
  Profile: ProfileErrors.definitions,
  'Data export': GdprExportErrors.definitions,
  Consent: ConsentErrors.definitions,
  'Personal-data breaches': BreachErrors.definitions,
  Erasure: ErasureErrors.definitions,
  'Security alerts': AlertErrors.definitions,
  'Sign-in notices': RiskResponseErrors.definitions,
  'Risk responses': RiskDecisionErrors.definitions,
  'Real-time channel': RealtimeErrors.definitions,
  Operations: OpsErrors.definitions,
  Settings: SettingsErrors.definitions,
  'Audit summary': AuditErrors.definitions,
};

const INTRO = 'Every error answers with `{status_code, error_code, message, details}`. `error_code` is stable: match on it, never on `message`. `details` holds what the code documents and always `request_id`: the request\'s id (a UUID, also in the `X-Request-ID` header), which finds its access line and its trace (docs/operations.md); quote it when asking for support. Generated from the catalogues in `src/**/errors.ts` by `npm run docs:errors`; `src/error-catalogue.test.ts` keeps this page in step. Why each status was chosen: docs/decisions.md.';

/** docs/errors.md, exactly: one table per catalogue. */
export function renderErrorsDoc(): string {
  const sections = Object.entries(ERROR_CATALOGUE).map(([name, defs]) => [
    `## ${name}`,
    '',
    '| error_code | status | message |',
    '|---|---|---|',
    ...Object.entries(defs).map(([code, def]) => `| \`${code}\` | ${def.status} | ${def.message} |`),
  ].join('\n'));
  return ['# Error codes', '', INTRO, '', sections.join('\n\n'), ''].join('\n');
}
