/**
 * `GET /api/v1/admin/users/{id}/factors` (permission users.read): what second factors a user
 * has, for an operator before an MFA reset (src/admin/user-factors.ts). Read-only: factors are
 * removed by an approved MFA reset (four eyes), or a passkey by `DELETE .../passkeys/{id}`.
 */
import Type, { type TSchema } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Db } from '../platform/db/database.js';
import type { App } from '../platform/http/app.js';
import { errors } from '../platform/http/schemas.js';
import type { Guard } from '../sessions/guard.js';
import { refuseIntegerUserId, USER_UUID_EXAMPLE, UserIdParams } from '../users/public-id.js';
import { AdminErrors } from './errors.js';
import { ISO } from './schemas.js';
import type { UserDirectory } from './user-directory.js';
import { APPROVAL_USES_KEPT_DAYS, CODE_USES_KEPT_DAYS, UserFactorReader } from './user-factors.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const At = (description: string) => Type.String({ ...ISO, description });
const MaybeAt = (description: string) => Type.Union([Type.String(ISO), Type.Null()], { description });
const ENROLLED = At('When it was enrolled (the first code entered back).');
const Dates = (lastUsed: string) => ({ enrolled_at: ENROLLED, last_used_at: MaybeAt(lastUsed) });
const days = (n: number) => (n === 1 ? '1 day' : `${n} days`);
/** A factor whose uses are known only while its codes or requests are kept (deleted `days` after they expire). */
const KeptDates = (what: string, kept: string, n: number) => ({
  enrolled_at: ENROLLED,
  last_used_at: MaybeAt(`When ${what} last finished a sign-in or a step-up: the last use within the ${kept} kept (${days(n)} after they expire); null: none in that time (an older use is no longer known, so null does not mean "never used").`),
  uses_kept_days: Type.Integer({ minimum: 1, description: `For how many days back a use is known (${n}): \`last_used_at\` null means none in that time.`, examples: [n] }),
});
const DeviceName = Nullable(Type.String({ description: 'The name the holder gave the phone (null: none given).', examples: ['Pixel 8'] }));

const Method = Type.Union([Type.Literal('totp'), Type.Literal('email'), Type.Literal('sms'), Type.Literal('push'), Type.Literal('passkey'), Type.Literal('push_approval')]);

const UserFactorsSchema = Type.Object({
  user_id: Type.String({ format: 'uuid', examples: [USER_UUID_EXAMPLE] }),
  enrolled: Type.Array(Method, { description: 'The enrolled second factors by name, as a sign-in challenge names them (security questions and backup codes are not sign-in factors of their own).' }),
  factors: Type.Object({
    authenticator_app: Nullable(Type.Object(Dates('The start of the 30-second step of the last code accepted. The code that confirmed the enrolment counts as the first use, so an enrolled app always has one: a time at or just before `enrolled_at` is that code\'s (no use since, or one within the same minute).'))),
    backup_codes: Type.Object({
      left: Type.Integer({ minimum: 0, description: 'Unused backup codes (they ride on the authenticator app).' }),
      issued: Type.Integer({ minimum: 0, description: 'Codes in the current set.' }),
      issued_at: MaybeAt('When the current set was issued; null: none.'),
      last_used_at: MaybeAt('When a code of the set was last used; null: none used.'),
    }),
    email_codes: Nullable(Type.Object(KeptDates('a code by email', 'codes', CODE_USES_KEPT_DAYS))),
    sms_codes: Nullable(Type.Object(KeptDates('a code by text message', 'codes', CODE_USES_KEPT_DAYS))),
    push_codes: Nullable(Type.Object({ ...KeptDates('a code by push', 'codes', CODE_USES_KEPT_DAYS), device_name: DeviceName })),
    push_approval: Nullable(Type.Object({
      ...KeptDates('an approval on the phone', 'requests', APPROVAL_USES_KEPT_DAYS), device_name: DeviceName,
      paused_until: MaybeAt('Until when a fraud report from the phone paused push approval; null: not paused.'),
    })),
    passkeys: Type.Array(Type.Object({
      name: Type.String({ description: 'The name its holder gave it.' }),
      created_at: Type.String(ISO), last_used_at: MaybeAt('null: never used.'),
      synced: Type.Boolean({ description: 'A synced (multi-device) passkey, copied to the holder\'s other devices by their platform.' }),
      suspended: Type.Boolean({ description: 'Refused since its signature counter went back (a copy of it was detected).' }),
    }), { description: 'Oldest first.' }),
    security_questions: Type.Object({
      count: Type.Integer({ minimum: 0 }),
      set_at: MaybeAt('When they were last set; null: none.'),
      questions: Type.Array(Type.String(), { description: 'The questions chosen, in the bank\'s words (its own catalogue); never an answer.' }),
    }, { description: 'For recovery and step-up; never a sign-in factor.' }),
  }),
}, {
  title: 'AdminUserFactors',
  description: 'A user\'s second factors as an operator sees them: dates, counts and names; never a secret, a hash, a code, an answer, a key or a device token.',
  examples: [{
    user_id: USER_UUID_EXAMPLE, enrolled: ['passkey', 'sms', 'totp'],
    factors: {
      authenticator_app: { enrolled_at: '2026-03-02T09:14:00.000Z', last_used_at: '2026-11-20T08:15:00.000Z' },
      backup_codes: { left: 8, issued: 10, issued_at: '2026-03-02T09:14:00.000Z', last_used_at: '2026-06-11T17:40:00.000Z' },
      email_codes: null,
      sms_codes: { enrolled_at: '2026-04-18T12:00:00.000Z', last_used_at: null, uses_kept_days: CODE_USES_KEPT_DAYS },
      push_codes: null,
      push_approval: null,
      passkeys: [{ name: 'Work laptop', created_at: '2026-05-07T10:21:00.000Z', last_used_at: '2026-11-19T07:58:00.000Z', synced: true, suspended: false }],
      security_questions: { count: 3, set_at: '2026-03-02T09:20:00.000Z', questions: ['What was the name of your first school?', 'In what town was your mother born?', 'What was your first car?'] },
    },
  }],
});

export interface FactorRouteDeps {
  db: Db;
  guard: Guard;
  directory: UserDirectory;
}

export function userFactorRoutes(s: FactorRouteDeps): FastifyPluginAsync {
  const reader = new UserFactorReader(s);
  return async (instance) => {
    const app = instance as unknown as App;
    app.get('/api/v1/admin/users/:id/factors', {
      config: { personalData: true },
      schema: {
        tags: ['Administration'], security: [{ bearer: [] }], summary: 'List a user\'s second factors (permission users.read)',
        description: `Every second factor the account has: the authenticator app and its backup codes (how many are left), codes by email, text message or push, push approval, passkeys, and security questions (how many, and which of the bank's questions; never an answer). Each with when it was enrolled and, where the service records it, when it was last used: for codes by email, text message or push (${days(CODE_USES_KEPT_DAYS)}) and push approval (${days(APPROVAL_USES_KEPT_DAYS)}), only within the days their codes and requests are kept (\`uses_kept_days\`), so a null there means no use in that time, not none ever. Never a secret, a hash, a code, an answer, a key or a device token. Deleted accounts too. Removing factors is an MFA reset (\`POST /api/v1/auth/reset/mfa/admin/approve\`, another operator's decision), not this route. \`404 USER_NOT_FOUND\` for an unknown uuid; an integer id is refused (\`422 VALIDATION_ERROR\`): send the uuid.`,
        params: UserIdParams,
        response: { 200: UserFactorsSchema, ...errors(AdminErrors.USER_NOT_FOUND) },
      },
      onRequest: s.guard.requirePermission('users.read'), preValidation: refuseIntegerUserId,
    }, async (request) => {
      const user = await s.directory.byUuid(request.params.id);
      if (!user) throw AdminErrors.USER_NOT_FOUND();
      const { enrolled, ...factors } = await reader.of(user.id);
      return { user_id: user.uuid, enrolled, factors };
    });
  };
}
