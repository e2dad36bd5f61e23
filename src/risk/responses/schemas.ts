/** Bodies and answers of the "this was not me" routes and the administrator's lift of the lock. */
import Type from 'typebox';

const EXAMPLE_TOKEN = 'rnm_Q2hhbmdlIG1lOiB0aGlzIGlzIG5vdCBhIHJlYWwgdG9';

export const NotMeBody = Type.Object({
  not_me_token: Type.String({
    pattern: '^rnm_[A-Za-z0-9_-]{43}$',
    description: 'The single-use token of a sign-in notice\'s "this was not me" link (the part after `#`).',
    examples: [EXAMPLE_TOKEN],
  }),
}, { additionalProperties: false, examples: [{ not_me_token: EXAMPLE_TOKEN }] });

export const NotMeAnswerSchema = Type.Object({
  reported: Type.Literal(true, { description: 'The bank\'s security team was alerted.' }),
  sessions_ended: Type.Integer({ minimum: 0, description: 'How many sessions of the account were signed out.' }),
  account_locked: Type.Literal(true, { description: 'The account refuses every sign-in (`403 ACCOUNT_SECURITY_LOCKED`) until a new password is set through an account recovery or an administrator lifts the lock.' }),
  recover_path: Type.String({ description: 'Where the holder starts recovering the account.' }),
}, { title: 'SignInReportedNotMe', examples: [{ reported: true, sessions_ended: 2, account_locked: true, recover_path: '/api/v1/auth/reset/initiate' }] });

export const SecurityUnlockAnswer = Type.Object({
  status: Type.Literal('success'),
  was_locked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the holder had locked the account; null: it was not locked (nothing changed).' }),
}, { title: 'AccountSecurityUnlocked', examples: [{ status: 'success', was_locked_at: '2026-12-07T09:45:00.000Z' }, { status: 'success', was_locked_at: null }] });
