/**
 * PIN and USSD routes (SPEC "Core authentication" login/ussd, "Credential management" pin,
 * password/ussd, reset/pin; issue 10, section 1), and the administrator's PIN reset.
 *
 * The USSD routes are called by the bank's USSD gateway on a subscriber's behalf: the gateway
 * authenticates with its key (`X-Gateway-Key`, checked before the body is read), names the
 * subscriber by phone number, and is exempt from transport encryption by the `ussd` segment of
 * the path (SPEC Transport encryption 7).
 */
import { randomUUID } from 'node:crypto';
import Type from 'typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { auditContext, type AuditLog } from '../audit/service.js';
import { AdminErrors } from '../admin/errors.js';
import { assertTargetHeld } from '../roles/held.js';
import { RoleErrors } from '../roles/errors.js';
import { confirmCurrentPassword, confirmSecret, resetTokenHolder, type ReauthDeps } from '../credentials/reauth.js';
import { maskPhone } from '../mfa/otp/templates.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { Db } from '../platform/db/database.js';
import { CommonErrors } from '../platform/errors.js';
import type { App } from '../platform/http/app.js';
import { errors } from '../platform/http/schemas.js';
import { bodyField, type RouteRateLimit } from '../policy/route-limits.js';
import { requestActor, requestAuditContext, signedInAccount, type Guard } from '../sessions/guard.js';
import type { SessionService } from '../sessions/service.js';
import type { ClientContext, SignInPipeline } from '../signin/pipeline.js';
import { clientContext, SignInResponseSchema } from '../signin/routes.js';
import type { Denylist } from '../tokens/denylist.js';
import { TokenErrors } from '../tokens/errors.js';
import type { TokenService } from '../tokens/service.js';
import { refuseIntegerUserId, UserIdParams } from '../users/public-id.js';
import { PHONE_PATTERN } from '../users/rules.js';
import type { UserRow, UserStore } from '../users/store.js';
import { PinErrors } from './errors.js';
import { GATEWAY_KEY_HEADER, type UssdGateways } from './gateway.js';
import { failureReason, type PinResetNotifier } from './notices.js';
import { PIN_CHANGE_PURPOSE, type PinService, type PreparedPin } from './service.js';
import { WRONG_PIN, type PinStrategy } from './strategy.js';
import { SIGN_IN_ERRORS } from '../signin/error-sets.js';
import { SignInErrors } from '../signin/errors.js';
import { PolicyErrors } from '../policy/errors.js';

/** What a USSD caller is told for an unknown phone number, a phone without a PIN, or a wrong PIN: one answer. */

const RULES_DOC = 'A rule violation is `422 PIN_POLICY_VIOLATION` whose `details.violations` lists each broken rule as `{rule, message}` (rules: digits_only, min_length, max_length, repeated_digits, sequential_digits, contains_phone_digits, history).';

const NewPin = Type.String({
  minLength: 1, maxLength: 32,
  description: 'Digits only, 4 to 6 of them; not one digit throughout (1111), not a run up or down (1234, 9876, 0123, 7890), not 4 digits in a row of your phone number, not one of your last 4 PINs (limits: the `pin` row of `password_restrictions`).',
  examples: ['2580'],
});
const Pin = Type.String({ minLength: 1, maxLength: 32, pattern: '^[0-9]+$', description: 'Digits only.', examples: ['2580'] });
const PhoneNumber = Type.String({ pattern: PHONE_PATTERN, maxLength: 16, description: 'The subscriber\'s phone number, E.164 (a plus sign and 7 to 15 digits).', examples: ['+254712345678'] });

const PinDone = Type.Object(
  { status: Type.Literal('success'), message: Type.String({ examples: ['PIN changed.'] }) },
  { examples: [{ status: 'success', message: 'PIN changed.' }, { status: 'success', message: 'PIN set.' }] },
);

const GATEWAY_DOC = `The USSD gateway authenticates with its key in \`${GATEWAY_KEY_HEADER}\` (one per gateway, \`USSD_GATEWAY_KEYS\`); without a configured gateway's key the answer is \`401 GATEWAY_UNAUTHORIZED\`, before the body is read or any subscriber looked up; with no gateway configured on the server at all (\`USSD_GATEWAY_KEYS\` unset), \`503 USSD_NOT_CONFIGURED\`. Not encrypted: USSD gateways cannot run the cryptography, so USSD routes are excluded from transport encryption.`;

export interface PinRouteDeps extends ReauthDeps {
  db: Db;
  config: Pick<Config, 'signin' | 'rateLimits' | 'tokens'>;
  users: UserStore;
  pins: PinService;
  pinStrategy: PinStrategy;
  pinResetNotices: PinResetNotifier;
  clock: Clock;
  sessions: SessionService;
  gateways: UssdGateways;
  pipeline: SignInPipeline;
  tokens: TokenService;
  denylist: Denylist;
  guard: Guard;
  audit: AuditLog;
}

export function pinRoutes(s: PinRouteDeps): FastifyPluginAsync {
  /**
   * A gateway's request: the channel is `ussd`; the in-flight bound counts the gateway's address
   * (so made-up phone numbers cannot queue unbounded bcrypt), and the session and audit trail name
   * the gateway and its USSD session. Rates are counted per gateway and per subscriber (`ussdLimit`).
   */
  const ussdContext = (request: FastifyRequest, ussdSession?: string): ClientContext => {
    const gateway = s.gateways.gatewayOf(request);
    return { ...clientContext(request, s.ipHasher, 'ussd'), userAgent: `ussd-gateway/${gateway}${ussdSession ? ` ussd-session/${ussdSession}` : ''}` };
  };
  /** The `ussd` rate group: every subscriber of a gateway shares its address, so the gateway is the client. */
  const ussdLimit: RouteRateLimit = {
    group: 'ussd',
    client: (request) => s.gateways.gatewayOf(request),
    account: (request) => (request.body as { phone_number?: string }).phone_number,
  };

  /**
   * Stores a prepared PIN with its audit row in one transaction (after `first`, when given),
   * ends the USSD sessions but `keep`, and returns the answer.
   */
  const store = async (user: UserRow, prepared: PreparedPin, ctx: ClientContext, via: string, opts: { keep?: string; first?: (trx: Db) => Promise<void> } = {}) => {
    const { replaced, ended } = await s.db.transaction().execute(async (trx) => {
      await opts.first?.(trx);
      const r = await s.pins.store(trx, user, prepared, opts.keep);
      await s.audit.record({ eventType: r.replaced ? 'PIN_CHANGED' : 'PIN_SET', status: 'SUCCESS', userId: user.uuid, username: user.username, ...auditContext(ctx), details: { via, ussd_sessions_ended: r.ended.length } }, trx);
      return r;
    });
    await s.sessions.announce(ended);
    return { status: 'success' as const, message: replaced ? 'PIN changed.' : 'PIN set.' };
  };

  return async (instance) => {
    const app = instance as unknown as App;
    const credentialTags = ['Credential management'];

    app.post('/api/v1/auth/pin', {
      schema: {
        tags: credentialTags, security: [{ bearer: [] }], summary: 'Set or change your USSD PIN',
        description: [
          'Signed in. Send `new_pin` and exactly one of `current_password` (sets a first PIN, or changes it) or `current_pin` (changes it). A wrong current password counts toward the password lockout, a wrong current PIN toward the PIN\'s (401 INVALID_CREDENTIALS, then 429 ACCOUNT_LOCKED with `Retry-After`); both toward the address\'s sign-in rate (429 RATE_LIMITED). `409 PIN_NOT_SET` for `current_pin` when no PIN is set. Sessions the old PIN opened (USSD) end. Audited as PIN_SET or PIN_CHANGED.',
          RULES_DOC,
        ].join('\n\n'),
        body: Type.Object({
          new_pin: NewPin,
          current_password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, examples: ['Vt7#qLm2!xRp9$'] })),
          current_pin: Type.Optional(Pin),
        }, { additionalProperties: false, examples: [{ current_password: 'Vt7#qLm2!xRp9$', new_pin: '2580' }, { current_pin: '2580', new_pin: '7391' }] }),
        response: { 200: PinDone, ...errors(SignInErrors.INVALID_CREDENTIALS, PolicyErrors.ACCOUNT_LOCKED, PinErrors.PIN_NOT_SET, PinErrors.PIN_POLICY_VIOLATION) },
      },
      onRequest: s.guard.authenticate,
      config: { rateLimit: { group: 'account', account: signedInAccount } },
    }, async (request) => {
      const auth = request.auth!;
      const { new_pin: newPin, current_password: password, current_pin: currentPin } = request.body;
      if ((password === undefined) === (currentPin === undefined)) {
        throw CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'body', field: '(root)', message: 'give exactly one of current_password or current_pin' }] });
      }
      const user = await s.users.findById(auth.session.userId);
      if (!user) throw TokenErrors.TOKEN_REVOKED();
      const ctx = clientContext(request, s.ipHasher, auth.session.channel);
      const audit = auditContext(ctx);
      // The new PIN's rules and history (bcrypt) run in the same in-flight slot as the check.
      const next = () => s.pins.prepare(user, newPin);
      if (password !== undefined) {
        const prepared = await confirmCurrentPassword(s, user, password, audit, 'pin_change', next);
        return store(user, prepared, ctx, 'current_password', { keep: auth.session.sessionId });
      }
      if ((await s.pins.hashOf(user.id)) === undefined) throw PinErrors.PIN_NOT_SET();
      const key = s.pins.userKey(user.id);
      const prepared = await confirmSecret(s, {
        who: { userId: user.uuid, username: user.username }, key, boundKey: true, verify: () => s.pins.verify(user, currentPin!, key),
        reason: 'invalid_current_pin', message: 'The current PIN is incorrect.',
      }, audit, 'pin_change', next);
      return store(user, prepared, ctx, 'current_pin', { keep: auth.session.sessionId });
    });

    app.post('/api/v1/auth/reset/pin', {
      schema: {
        tags: credentialTags, summary: 'Set a PIN with a reset token',
        description: `Like \`POST /api/v1/auth/reset/password\`: the \`reset_token\` (10 minutes, works once) comes from an administrator's PIN reset (\`POST /api/v1/admin/users/{id}/reset-pin\`); a password's reset token is refused (401 TOKEN_INVALID), a used one is 401 TOKEN_REVOKED. The PIN's failed attempts and lock are cleared. ${RULES_DOC}`,
        body: Type.Object({ reset_token: Type.String({ minLength: 1, maxLength: 8192 }), new_pin: NewPin }, { additionalProperties: false, examples: [{ reset_token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ...', new_pin: '2580' }] }),
        response: { 200: PinDone, ...errors(TokenErrors.TOKEN_INVALID, TokenErrors.TOKEN_EXPIRED, TokenErrors.TOKEN_REVOKED, PinErrors.PIN_POLICY_VIOLATION) },
      },
      config: { rateLimit: { group: 'recovery', account: bodyField('reset_token') } },
    }, async (request) => {
      const { claims, user } = await resetTokenHolder(s, request.body.reset_token, PIN_CHANGE_PURPOSE);
      const ctx = clientContext(request, s.ipHasher, 'web');
      const prepared = await s.pins.prepare(user, request.body.new_pin); // rules and bcrypt outside the transaction
      const answer = await store(user, prepared, ctx, 'reset_token', {
        // Spend the token first: of two parallel uses exactly one gets the row.
        first: async (trx) => {
          if (!(await s.denylist.spend(claims.jti, claims.exp * 1000, 'reset_used', trx))) throw TokenErrors.TOKEN_REVOKED();
        },
      });
      await s.denylist.announce(claims.jti, claims.exp * 1000);
      await s.pins.clearFailures(user.id);
      return answer;
    });

    app.post('/api/v1/auth/login/ussd', {
      schema: {
        tags: ['Core authentication'], summary: 'Sign a subscriber in over USSD with phone number and PIN (USSD gateway)',
        description: [
          GATEWAY_DOC,
          'The one sign-in pipeline, on the `ussd` channel: the subscriber\'s PIN, then the account state, the access policy of the `ussd` channel, the second factor, tokens and a session whose channel is `ussd`. `session_id` is the gateway\'s own USSD session id: it goes into the audit trail and the session\'s user agent.',
          '',
          '- `401 INVALID_CREDENTIALS`: the phone number is unknown, has no PIN, or the PIN is wrong; the three answer alike, in the same time.',
          '- `429 ACCOUNT_LOCKED` (with `Retry-After`): too many wrong PINs; the PIN has its own counter, so the password sign-in is not locked by it, nor the PIN by wrong passwords.',
          '- `429 RATE_LIMITED` (with `Retry-After`): too many sign-ins of this subscriber, or through this gateway, this minute.',
          '- `403 POLICY_RESTRICTED` (`details.rule`), `403 ACCOUNT_DISABLED`, `401 2FA_REQUIRED`: as for every sign-in.',
        ].join('\n'),
        body: Type.Object({
          phone_number: PhoneNumber,
          pin: Pin,
          session_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7e]+$', description: 'The gateway\'s USSD session id, for the audit trail.', examples: ['ATUid_6b2f1c0e4a'] })),
        }, { additionalProperties: false, examples: [{ phone_number: '+254712345678', pin: '2580', session_id: 'ATUid_6b2f1c0e4a' }] }),
        response: { 200: SignInResponseSchema, ...errors(...SIGN_IN_ERRORS) },
      },
      onRequest: s.gateways.authenticate,
      config: { rateLimit: ussdLimit },
    }, async (request) => {
      const b = request.body;
      const ctx = ussdContext(request, b.session_id);
      return (await s.pipeline.signIn(s.pinStrategy, { phone: b.phone_number, pin: b.pin }, ctx)).body;
    });

    app.post('/api/v1/auth/password/ussd', {
      schema: {
        tags: credentialTags, summary: 'Change a subscriber\'s PIN over USSD (USSD gateway)',
        description: [
          GATEWAY_DOC,
          'The subscriber proves the current PIN: a wrong one counts on the PIN\'s counter (401 INVALID_CREDENTIALS, then 429 ACCOUNT_LOCKED with `Retry-After`), and an unknown phone number or a phone without a PIN answers exactly like a wrong PIN. Then the account state (`403 ACCOUNT_DISABLED`) and the access policy of the `ussd` channel (`403 POLICY_RESTRICTED`) apply, as at sign-in. The subscriber\'s USSD sessions end. Audited as PIN_CHANGED.',
          RULES_DOC,
        ].join('\n\n'),
        body: Type.Object({ phone_number: PhoneNumber, current_pin: Pin, new_pin: NewPin }, { additionalProperties: false, examples: [{ phone_number: '+254712345678', current_pin: '2580', new_pin: '7391' }] }),
        response: { 200: PinDone, ...errors(SignInErrors.INVALID_CREDENTIALS, SignInErrors.ACCOUNT_DISABLED, PolicyErrors.ACCOUNT_LOCKED, PinErrors.PIN_POLICY_VIOLATION) },
      },
      onRequest: s.gateways.authenticate,
      config: { rateLimit: ussdLimit },
    }, async (request) => {
      const b = request.body;
      const ctx = ussdContext(request);
      const user = await s.users.findByPhone(b.phone_number);
      const key = s.pins.attemptKey(user?.id, b.phone_number);
      const prepared = await confirmSecret(s, {
        who: { userId: user?.uuid, username: user?.username ?? maskPhone(b.phone_number) }, key, boundKey: false,
        rateCountedByRoute: true, // ussdLimit: per gateway and per subscriber
        limits: s.pipeline.attemptLimits('ussd'), // the PIN's counter locks as at USSD sign-in
        verify: () => s.pins.verify(user, b.current_pin, key), reason: 'invalid_current_pin', message: WRONG_PIN,
      }, auditContext(ctx), 'ussd_pin_change', async () => {
        const subscriber = user!; // a right PIN has an account
        await s.pipeline.admit(subscriber, ctx); // active, and the ussd channel's policy, as at sign-in
        return s.pins.prepare(subscriber, b.new_pin);
      });
      return store(user!, prepared, ctx, 'ussd');
    });

    app.post('/api/v1/admin/users/:id/reset-pin', {
      schema: {
        tags: ['Administration'], security: [{ bearer: [] }], summary: 'Reset a user\'s USSD PIN (permission users.update)',
        description: 'Removes the PIN at once (it no longer signs in), ends the sessions it opened (USSD), clears its failed attempts and lock, and returns a `reset_token` (10 minutes, single use) with which the new PIN is set at `POST /api/v1/auth/reset/pin`: typically on the branch\'s device, the customer typing the new PIN. The customer is told at once, on every contact the account has (email when mail is configured, SMS when an SMS gateway is), in their language, that the bank reset their PIN, when, and to call the bank if it was not them; `customer_notified` lists the contacts a notice is being sent to: it is sent in the background, started as soon as the removal of the PIN is committed, so a mail server that is slow or down does not hold the reset; a delivery that fails is logged at warn and audited as PIN_RESET_NOTICE_FAILED (FAILURE, `details.via`: call the customer). Audited as PIN_RESET_BY_ADMIN (with `customer_notified`). `404 USER_NOT_FOUND` for an unknown uuid (`id` is the user\'s uuid; an integer is refused with 422 VALIDATION_ERROR), `409 ACCOUNT_DELETED` for a deleted account.',
        params: UserIdParams,
        response: {
          200: Type.Object({
            status: Type.Literal('success'),
            reset_token: Type.String({ description: 'For `POST /api/v1/auth/reset/pin`; shown once.' }),
            expires_in: Type.Integer({ description: 'Seconds the reset token lives', examples: [600] }),
            customer_notified: Type.Array(Type.Union([Type.Literal('email'), Type.Literal('sms')]), { description: 'The contacts a notice of the reset is being sent to (in the background, so not yet delivered when this answers; a failed delivery is logged and audited PIN_RESET_NOTICE_FAILED with `via`, and does not undo the reset); empty: the account has no contact a configured transport reaches (tell the customer in person).', examples: [['email', 'sms']] }),
          }, { examples: [{ status: 'success', reset_token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ...', expires_in: 600, customer_notified: ['email', 'sms'] }] }),
          ...errors(AdminErrors.USER_NOT_FOUND, AdminErrors.ACCOUNT_DELETED, RoleErrors.ACCOUNT_MORE_PRIVILEGED),
        },
      },
      onRequest: s.guard.requirePermission('users.update'), preValidation: refuseIntegerUserId,
    }, async (request) => {
      const user = await s.users.findByUuid(request.params.id);
      if (!user) throw AdminErrors.USER_NOT_FOUND();
      if (user.deleted_at !== null) throw AdminErrors.ACCOUNT_DELETED();
      const actor = await requestActor(request, s.users);
      await assertTargetHeld(s.db, s.users, actor.uuid, user.id);
      const notified = s.pinResetNotices.channels(user);
      const context = requestAuditContext(request);
      const resetBy = { reset_by: actor.username, reset_by_id: actor.uuid };
      const ended = await s.db.transaction().execute(async (trx) => {
        const { hadPin, ended } = await s.pins.remove(trx, user.id);
        await s.audit.record({ ...context, eventType: 'PIN_RESET_BY_ADMIN', status: 'SUCCESS', userId: user.uuid, username: user.username, details: { ...resetBy, had_pin: hadPin, ussd_sessions_ended: ended.length, customer_notified: notified } }, trx);
        return ended;
      });
      // At once after the commit, before anything that may still fail: the PIN is gone, so the
      // customer hears of it even if what follows throws; never of a reset rolled back.
      s.pinResetNotices.tell(user, new Date(s.clock.now()), `pin-reset-${randomUUID()}`, async (via, err) => {
        await s.audit.record({ ...context, eventType: 'PIN_RESET_NOTICE_FAILED', status: 'FAILURE', userId: user.uuid, username: user.username, details: { ...resetBy, via, reason: failureReason(err) } });
      });
      await s.pins.clearFailures(user.id);
      await s.sessions.announce(ended);
      const reset = await s.tokens.issue('reset', { user_id: user.uuid, purpose: PIN_CHANGE_PURPOSE });
      return { status: 'success' as const, reset_token: reset.token, expires_in: s.config.tokens.resetTtlSec, customer_notified: notified };
    });
  };
}
