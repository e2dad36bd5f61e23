/** Password change (signed in) and the forced change after a temporary password (ruling 11). */
import Type from 'typebox';
import { auditContext } from '../audit/service.js';
import { confirmCurrentPassword, resetTokenHolder } from './reauth.js';
import type { FastifyPluginAsync } from 'fastify';
import type { AuditLog } from '../audit/service.js';
import type { Db } from '../platform/db/database.js';
import type { App } from '../platform/http/app.js';
import { bodyField } from '../policy/route-limits.js';
import { signedInAccount, type Guard } from '../sessions/guard.js';
import type { SessionService } from '../sessions/service.js';
import type { Denylist } from '../tokens/denylist.js';
import type { TokenService } from '../tokens/service.js';
import type { UserStore } from '../users/store.js';
import type { ReauthDeps } from './reauth.js';
import { errors } from '../platform/http/schemas.js';
import { PASSWORD_CHANGE_PURPOSE } from '../signin/pipeline.js';
import { clientContext } from '../signin/routes.js';
import { TokenErrors } from '../tokens/errors.js';
import { SignInErrors } from '../signin/errors.js';
import { PolicyErrors } from '../policy/errors.js';
import { CredentialErrors } from './errors.js';
import { clearSecurityLock } from '../risk/responses/lock.js';

const NewPassword = Type.String({ minLength: 1, maxLength: 1024, description: 'At least 12 characters with upper and lower case, a digit and a symbol; no keyboard patterns, dictionary words, username or email; at most 72 bytes; not one of the last 8 nor used in the last 12 months; not a password known from data breaches (when the operator loads a breach corpus).', examples: ['Vt7#qLm2!xRp9$'] });

const PasswordChanged = Type.Object({
  status: Type.Literal('success'),
  password_expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  message: Type.String({ examples: ['Password changed.'] }),
});

const POLICY_DOC = 'A rule violation is `422 PASSWORD_POLICY_VIOLATION` whose `details.violations` lists each failed rule as `{rule, message}` (rules: min_length, max_bytes, control_characters, uppercase, lowercase, digit, symbol, contains_personal_data, keyboard_pattern, dictionary_word, breached, history). `breached`: the password is in the breach corpus the operator loaded (Pwned Passwords), checked on the server without any network call; the answer never says which breach or how often.';

export interface CredentialRouteDeps extends ReauthDeps {
  db: Db;
  users: UserStore;
  tokens: TokenService;
  denylist: Denylist;
  sessions: SessionService;
  guard: Guard;
  audit: AuditLog;
}

export function credentialRoutes(s: CredentialRouteDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as App;
    const tags = ['Credential management'];

    app.post('/api/v1/auth/password', {
      schema: {
        tags, security: [{ bearer: [] }], summary: 'Change your password',
        description: `Needs the current password; a wrong one counts toward the account lockout (401 INVALID_CREDENTIALS, then 429 ACCOUNT_LOCKED). Your other sessions end; this one stays. A directory (LDAP) user's password is the directory's: \`409 PASSWORD_MANAGED_EXTERNALLY\`, before anything is checked. ${POLICY_DOC}`,
        body: Type.Object({ current_password: Type.String({ minLength: 1, maxLength: 1024 }), new_password: NewPassword }, { additionalProperties: false }),
        response: { 200: PasswordChanged, ...errors(SignInErrors.INVALID_CREDENTIALS, PolicyErrors.ACCOUNT_LOCKED, CredentialErrors.PASSWORD_MANAGED_EXTERNALLY, CredentialErrors.PASSWORD_POLICY_VIOLATION) },
      },
      // A pre-auth route (SPEC 3): authenticate after decryption, so token errors are sealed too.
      preHandler: s.guard.authenticate,
      config: { rateLimit: { group: 'account', account: signedInAccount } },
    }, async (request) => {
      const auth = request.auth!;
      const ctx = clientContext(request, s.ipHasher, auth.session.channel);
      const user = await s.users.findById(auth.session.userId);
      if (!user) throw TokenErrors.TOKEN_REVOKED();
      await s.credentials.assertLocalPassword(user.id); // a directory user's is changed in the directory: nothing asked, nothing counted
      // The new password's rules and history comparisons (bcrypt, outside the transaction) run in
      // the same in-flight slot as the current-password check.
      const prepared = await confirmCurrentPassword(s, user, request.body.current_password, auditContext(ctx), 'password_change',
        () => s.credentials.prepare(user, request.body.new_password, { temporary: false }));
      const { result, ended } = await s.db.transaction().execute(async (trx) => {
        const result = await s.credentials.store(trx, user, prepared);
        const others = await s.sessions.endAllForUser(trx, user.id, 'password_changed', auth.session.sessionId);
        await s.audit.record({ eventType: 'PASSWORD_CHANGED', status: 'SUCCESS', userId: user.uuid, username: user.username, ...auditContext(ctx), details: { via: 'self_service', other_sessions_ended: others.length } }, trx);
        return { result, ended: others };
      });
      await s.sessions.announce(ended);
      return { status: 'success' as const, password_expires_at: result.expiresAt ? new Date(result.expiresAt).toISOString() : null, message: 'Password changed.' };
    });

    app.post('/api/v1/auth/reset/password', {
      schema: {
        tags, summary: 'Set a new password with a reset token',
        description: `Finishes a forced password change (temporary password, admin reset or expiry): the \`reset_token\` comes from the \`403 PASSWORD_CHANGE_REQUIRED\` answer of sign-in and lives 10 minutes; it works once. Every session of the user ends; sign in again with the new password. ${POLICY_DOC}`,
        body: Type.Object({ reset_token: Type.String({ minLength: 1, maxLength: 8192 }), new_password: NewPassword }, { additionalProperties: false }),
        response: { 200: PasswordChanged, ...errors(TokenErrors.TOKEN_INVALID, TokenErrors.TOKEN_EXPIRED, TokenErrors.TOKEN_REVOKED, CredentialErrors.PASSWORD_POLICY_VIOLATION) },
      },
      config: { rateLimit: { group: 'recovery', account: bodyField('reset_token') } },
    }, async (request) => {
      const { claims, user } = await resetTokenHolder(s, request.body.reset_token, PASSWORD_CHANGE_PURPOSE);
      const ctx = clientContext(request, s.ipHasher, 'web');
      const prepared = await s.credentials.prepare(user, request.body.new_password, { temporary: false }); // rules and bcrypt outside the transaction
      const { result, ended } = await s.db.transaction().execute(async (trx) => {
        // Spend the token first: of two parallel uses exactly one gets the row.
        if (!(await s.denylist.spend(claims.jti, claims.exp * 1000, 'reset_used', trx))) throw TokenErrors.TOKEN_REVOKED();
        const result = await s.credentials.store(trx, user, prepared);
        const ended = await s.sessions.endAllForUser(trx, user.id, 'password_changed');
        await s.audit.record({ eventType: 'PASSWORD_CHANGED', status: 'SUCCESS', userId: user.uuid, username: user.username, ...auditContext(ctx), details: { via: 'reset_token' } }, trx);
        // A holder who answered "this was not me" to a sign-in notice and recovered their account
        // has a new password now: their lock (src/risk/responses/lock.ts) is lifted with it, not at
        // the recovery's completion, when the password someone else used still worked.
        const locked = claims.recovered === true ? await clearSecurityLock(trx, user.id, { audit: s.audit, entry: { ...auditContext(ctx), userId: user.uuid, username: user.username } }) : null;
        if (locked) await s.audit.record({ eventType: 'ACCOUNT_SECURITY_UNLOCKED', status: 'SUCCESS', userId: user.uuid, username: user.username, ...auditContext(ctx), details: { by: 'account_recovery', locked_at: locked.toISOString() } }, trx);
        return { result, ended };
      });
      await s.denylist.announce(claims.jti, claims.exp * 1000);
      await s.sessions.announce(ended);
      return { status: 'success' as const, password_expires_at: result.expiresAt ? new Date(result.expiresAt).toISOString() : null, message: 'Password changed; sign in with the new password.' };
    });
  };
}
