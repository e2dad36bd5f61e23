/**
 * The signed-in person's profile: read it, correct it, confirm a new email or phone. Every route
 * rides on the shared guard (token, session, device binding, access policy); each person reaches
 * only their own profile, so no route takes an id.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { AdminErrors } from '../../admin/errors.js';
import type { ExternalPasswords } from '../../credentials/external.js';
import { MfaErrors } from '../../mfa/errors.js';
import { OtpErrors } from '../../mfa/otp/errors.js';
import type { App } from '../../platform/http/app.js';
import { errors } from '../../platform/http/schemas.js';
import { PolicyErrors } from '../../policy/errors.js';
import { requestAuditContext, signedInAccount, signedInUser, type Guard } from '../../sessions/guard.js';
import { SignInErrors } from '../../signin/errors.js';
import type { UserRow, UserStore } from '../../users/store.js';
import { ProfileErrors } from './errors.js';
import { ContactVerified, presentProfile, ProfileRead, ProfileUpdateBody, ProfileUpdated, VerifyContactBody } from './schemas.js';
import type { ProfileService } from './service.js';

export interface ProfileRouteDeps {
  profile: ProfileService;
  users: UserStore;
  externalPasswords: ExternalPasswords;
  guard: Guard;
}

const tags = ['Profile'];
const security = [{ bearer: [] }];

const CONTACT_TEXT = 'A new `email` or `phone` does not change at once: a 6-digit code goes to the NEW address (by email, or by text message), valid `OTP_VALIDITY_MINUTES`, single use, `OTP_MAX_ATTEMPTS` attempts; it takes effect when the code is entered (POST /api/v1/auth/profile/verify-contact). The OLD address is told when the change is asked and when it takes effect. Asking again replaces the code (at most one code every `OTP_RESEND_SECONDS` and `OTP_MAX_SENDS` an hour per kind: `429 OTP_RESEND_THROTTLED`, `429 OTP_SEND_LIMIT`, with Retry-After).';

export function profileRoutes(s: ProfileRouteDeps): FastifyPluginAsync {
  const owner = (request: FastifyRequest): Promise<UserRow> => signedInUser(request, s.users);
  const view = async (user: UserRow) => {
    const profile = await s.profile.read(user.id);
    const link = await s.externalPasswords.linkOf(user.id);
    return presentProfile(profile!, link?.idpType ?? null);
  };
  const onRequest = s.guard.authenticate;
  const config = { rateLimit: { group: 'account' as const, account: signedInAccount } };

  return async (instance) => {
    const app = instance as unknown as App;

    app.get('/api/v1/auth/profile', {
      schema: {
        tags, security, summary: 'Your profile',
        description: 'Your username, name, email and phone (in clear: they are yours), language (`en` when never set), date of birth, whether a directory or identity provider keeps your name and contacts (`managed_by`), and any new email or phone waiting for its code (masked: it is not known to be yours yet).',
        response: { 200: ProfileRead },
      },
      onRequest,
      config: { personalData: true },
    }, async (request) => ({ profile: await view(await owner(request)) }));

    app.put('/api/v1/auth/profile/update', {
      schema: {
        tags, security, summary: 'Correct your profile',
        description: [
          'Name, language and date of birth change at once (audited PROFILE_UPDATED with the field names, never the values).',
          '',
          `${CONTACT_TEXT} A new email or phone needs \`current_password\` (\`422 VALIDATION_ERROR\` naming it when absent; a wrong one is \`401 INVALID_CREDENTIALS\` and counts toward the account lockout, \`429 ACCOUNT_LOCKED\`), and, when the account has a second factor, a step-up in the last 10 minutes (\`403 STEP_UP_REQUIRED\`). An address that is another account's email, phone or username is answered exactly as a free one (this route does not tell whether an address is a customer's), but no code goes to it, so it can never be confirmed.`,
          '',
          'Everything is checked before anything is written: a refusal changes nothing. Codes are sent after the answer (`codes_sent`); one that cannot be delivered is void, and the person asks again after `resend_after` seconds. `503 OTP_DELIVERY_FAILED` when codes of that kind cannot be sent at all (no mail server or SMS gateway configured). A directory (LDAP) or identity-provider (SAML) account changes only `language` and `date_of_birth`: `409 PROFILE_MANAGED_EXTERNALLY` (`details.fields`). `422 VALIDATION_ERROR` names the field: a phone not in E.164, a date that is not a real day, in the future or before 1900, a language other than `en`, `pt`, `fr`, an unknown field.',
        ].join('\n'),
        body: ProfileUpdateBody,
        response: {
          200: ProfileUpdated,
          ...errors(ProfileErrors.PROFILE_MANAGED_EXTERNALLY, SignInErrors.INVALID_CREDENTIALS, PolicyErrors.ACCOUNT_LOCKED, MfaErrors.STEP_UP_REQUIRED,
            OtpErrors.OTP_RESEND_THROTTLED, OtpErrors.OTP_SEND_LIMIT, OtpErrors.OTP_DELIVERY_FAILED),
        },
      },
      onRequest, config,
    }, async (request) => {
      const user = await owner(request);
      const b = request.body;
      const r = await s.profile.update(request.auth!, user, {
        fullName: b.full_name?.trim(), language: b.language, dateOfBirth: b.date_of_birth, email: b.email, phone: b.phone, currentPassword: b.current_password,
      }, requestAuditContext(request));
      return { profile: await view(user), changed: r.changed, codes_sent: r.sent };
    });

    app.post('/api/v1/auth/profile/verify-contact', {
      schema: {
        tags, security, summary: 'Confirm a new email or phone with its code',
        description: 'The new address takes effect (sign-in by the new email works, by the old one no longer; codes and notices go there), audited CONTACT_CHANGED with both addresses masked, and the old address is told. `401 OTP_INVALID`: a wrong code (`details.attempts_remaining`) or one already used; `401 OTP_EXPIRED`; `429 OTP_ATTEMPTS_EXCEEDED`: ask again; `404 CONTACT_CHANGE_NOT_PENDING`: nothing of this kind is waiting. `409 IDENTIFIER_CONFLICT`: another account holds the address (the change is void).',
        body: VerifyContactBody,
        response: {
          200: ContactVerified,
          ...errors(OtpErrors.OTP_INVALID, OtpErrors.OTP_EXPIRED, OtpErrors.OTP_ATTEMPTS_EXCEEDED, ProfileErrors.CONTACT_CHANGE_NOT_PENDING, AdminErrors.IDENTIFIER_CONFLICT),
        },
      },
      onRequest, config,
    }, async (request) => {
      const user = await owner(request);
      await s.profile.confirm(user, request.body.kind, request.body.code, requestAuditContext(request));
      return { profile: await view(user), changed: request.body.kind };
    });
  };
}

