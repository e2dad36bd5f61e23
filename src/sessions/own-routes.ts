/**
 * A signed-in person's own sessions (the account pages, and any app that shows "where you are
 * signed in"): `GET /api/v1/auth/sessions` lists them, never a token, a key or a device
 * fingerprint; `DELETE /api/v1/auth/sessions/{session_id}` ends one of them. Only the caller's
 * own: another user's session id is answered like one that does not exist.
 */
import Type from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { AuditLog } from '../audit/service.js';
import { AdminErrors } from '../admin/errors.js';
import type { Db } from '../platform/db/database.js';
import type { App } from '../platform/http/app.js';
import { errors } from '../platform/http/schemas.js';
import { requestWho, signedInAccount, type Guard } from './guard.js';
import type { Session, SessionService } from './service.js';

export interface OwnSessionRouteDeps {
  db: Db;
  sessions: SessionService;
  guard: Guard;
  audit: AuditLog;
  users: Parameters<typeof requestWho>[1];
}

const tags = ['Your sessions'];
const rateLimit = { group: 'account' as const, account: signedInAccount };
const security = [{ bearer: [] }];
const ISO = { format: 'date-time' } as const;
const SESSION_ID_EXAMPLE = '8e2b7c1d-4f3a-4b5c-9d6e-7f8a9b0c1d2e';

const OwnSession = Type.Object({
  session_id: Type.String({ format: 'uuid', examples: [SESSION_ID_EXAMPLE] }),
  channel: Type.String({ description: '`web`, `mobile`, `ussd` or `agent`.', examples: ['web'] }),
  created_at: Type.String({ ...ISO, description: 'When it was signed in.' }),
  last_activity: Type.String({ ...ISO, description: 'Written at most every SESSION_ACTIVITY_WRITE_SECONDS (default 60), so up to that much behind.' }),
  expires_at: Type.String({ ...ISO, description: 'The end of its lifetime, whatever its activity.' }),
  user_agent: Type.String({ description: 'The browser or app that signed in, as it named itself.', examples: ['Mozilla/5.0 (X11; Linux x86_64)'] }),
  mfa_completed: Type.Boolean({ description: 'Signed in with a second factor.' }),
  current: Type.Boolean({ description: 'The session of this request.' }),
}, { title: 'OwnSession' });

const OWN_SESSION_EXAMPLE = {
  session_id: SESSION_ID_EXAMPLE, channel: 'web', created_at: '2026-11-27T08:00:00.000Z', last_activity: '2026-11-27T08:40:00.000Z',
  expires_at: '2026-12-04T08:00:00.000Z', user_agent: 'Mozilla/5.0 (X11; Linux x86_64)', mfa_completed: true, current: true,
};

const OwnSessions = Type.Object({ sessions: Type.Array(OwnSession, { description: 'Oldest first.' }) }, {
  title: 'OwnSessions', description: 'Your active sessions.', examples: [{ sessions: [OWN_SESSION_EXAMPLE] }],
});

const OwnSessionEnded = Type.Object({
  status: Type.Literal('success'),
  sessions_ended: Type.Array(Type.String({ format: 'uuid' }), { description: 'The id of the session ended.', examples: [[SESSION_ID_EXAMPLE]] }),
}, { title: 'OwnSessionEnded', examples: [{ status: 'success', sessions_ended: [SESSION_ID_EXAMPLE] }] });

const NOT_YOURS = 'You have no active session with this id. List yours with GET /api/v1/auth/sessions.';

function present(s: Session, current: string) {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    session_id: s.sessionId, channel: s.channel, created_at: iso(s.createdAt), last_activity: iso(s.lastActivity), expires_at: iso(s.expiresAt),
    user_agent: s.userAgent, mfa_completed: s.mfaCompleted, current: s.sessionId === current,
  };
}

export function ownSessionRoutes(s: OwnSessionRouteDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as App;
    app.get('/api/v1/auth/sessions', {
      config: { personalData: true, rateLimit },
      schema: {
        tags, security, summary: 'List your sessions',
        description: 'Your active sessions on every channel, oldest first, with the one of this request marked `current`: never a token, a key or a device fingerprint. The access policy of this session\'s channel applies (`403 POLICY_RESTRICTED`).',
        response: { 200: OwnSessions },
      },
      onRequest: s.guard.authenticate,
    }, async (request) => {
      const auth = request.auth!;
      return { sessions: (await s.sessions.activeOf(auth.session.userId)).map((x) => present(x, auth.session.sessionId)) };
    });

    app.delete('/api/v1/auth/sessions/:session_id', {
      schema: {
        tags, security, summary: 'End one of your sessions',
        description: 'Ends the session now, on every node: its access and refresh tokens stop working, and its real-time socket closes (`4001`). Your other sessions are told (`session.ended_elsewhere`). Ending the session of this request signs it out like `POST /api/v1/auth/logout`. `404 SESSION_NOT_FOUND` when you have no active session with this id (another person\'s session is answered the same way). Like logout, a session refused by its access policy where it is now can still end sessions. Audited as SESSION_ENDED.',
        params: Type.Object({ session_id: Type.String({ format: 'uuid', description: 'The `session_id` of one of your sessions (`GET /api/v1/auth/sessions`).', examples: [SESSION_ID_EXAMPLE] }) }),
        response: { 200: OwnSessionEnded, ...errors(AdminErrors.SESSION_NOT_FOUND) },
      },
      config: { rateLimit },
      onRequest: s.guard.identify,
    }, async (request) => {
      const auth = request.auth!;
      const { session_id: sessionId } = request.params;
      const who = await requestWho(request, s.users);
      await s.db.transaction().execute(async (trx) => {
        const row = await trx.selectFrom('sessions').select('session_id').where('session_id', '=', sessionId).where('user_id', '=', auth.session.userId).where('is_active', '=', true).forUpdate().executeTakeFirst();
        if (!row) throw AdminErrors.SESSION_NOT_FOUND({}, { message: NOT_YOURS });
        await s.sessions.endMany(trx, [sessionId], 'logout', auth.session.userId);
        await s.audit.record({
          ...who.context, eventType: 'SESSION_ENDED', status: 'SUCCESS', userId: auth.claims.user_id, username: who.actor.username,
          details: { reason: 'ended_by_holder', all_sessions: false, sessions_ended: [sessionId], from_session: auth.session.sessionId },
        }, trx);
      });
      await s.sessions.announce([sessionId]);
      return { status: 'success' as const, sessions_ended: [sessionId] };
    });
  };
}
