/**
 * Your own sessions (`GET /api/v1/auth/sessions`, `DELETE /api/v1/auth/sessions/{session_id}`),
 * which the account pages show: the list is the caller's own, with this request's session
 * marked; ending one ends it on every node and is audited; another person's session id is
 * answered like an unknown one and stays untouched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, seedUser, signIn } from '../harness/fixtures.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
  await seedUser(t.s, 'own.sessions');
  await seedUser(t.s, 'someone.else');
});
afterAll(async () => t?.close());

const list = (token: string) => t.app.inject({ method: 'GET', url: '/api/v1/auth/sessions', headers: bearer(token) });
const end = (token: string, id: string) => t.app.inject({ method: 'DELETE', url: `/api/v1/auth/sessions/${id}`, headers: bearer(token) });
const validate = (token: string) => t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(token) });

describe('your own sessions', () => {
  it('lists only the caller\'s sessions, this one marked current, never a token or a fingerprint', async () => {
    const laptop = await signIn(t.app, 'own.sessions');
    const phone = await signIn(t.app, 'own.sessions');
    await signIn(t.app, 'someone.else');
    const res = await list(laptop.access_token);
    expect(res.statusCode, res.body).toBe(200);
    const sessions = res.json<{ sessions: { session_id: string; current: boolean; channel: string }[] }>().sessions;
    expect(sessions.map((s) => s.session_id).sort()).toEqual([laptop.session_id, phone.session_id].sort());
    expect(sessions.find((s) => s.current)?.session_id).toBe(laptop.session_id);
    expect(res.body).not.toContain(laptop.access_token);
    expect(Object.keys(sessions[0]!).sort()).toEqual(['channel', 'created_at', 'current', 'expires_at', 'last_activity', 'mfa_completed', 'session_id', 'user_agent']);
  });

  it('ends another of your sessions: its token is refused at once, the rest go on, and it is audited', async () => {
    const keep = await signIn(t.app, 'own.sessions');
    const lost = await signIn(t.app, 'own.sessions');
    const res = await end(keep.access_token, lost.session_id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ status: 'success', sessions_ended: [lost.session_id] });
    expectError(await validate(lost.access_token), 401, 'SESSION_INVALID');
    expect((await validate(keep.access_token)).statusCode).toBe(200);
    const audit = await t.s.database.db.selectFrom('audit_log').select(['details']).where('event_type', '=', 'SESSION_ENDED').execute();
    expect(audit.map((a) => (typeof a.details === 'string' ? JSON.parse(a.details) : a.details))).toContainEqual(expect.objectContaining({ reason: 'ended_by_holder', sessions_ended: [lost.session_id], from_session: keep.session_id }));
    expectError(await end(keep.access_token, lost.session_id), 404, 'SESSION_NOT_FOUND'); // ended already
  });

  it('a burst of eight requests ending the same session ends it once: one 200, seven 404 SESSION_NOT_FOUND, one SESSION_ENDED entry', async () => {
    const keep = await signIn(t.app, 'own.sessions');
    const lost = await signIn(t.app, 'own.sessions');
    const answers = await Promise.all(Array.from({ length: 8 }, () => end(keep.access_token, lost.session_id)));
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, ...Array<number>(7).fill(404)]);
    for (const r of answers.filter((x) => x.statusCode === 404)) expectError(r, 404, 'SESSION_NOT_FOUND');
    const audit = await t.s.database.db.selectFrom('audit_log').select(['details']).where('event_type', '=', 'SESSION_ENDED').execute();
    const ending = audit.map((a) => (typeof a.details === 'string' ? JSON.parse(a.details) : a.details) as { sessions_ended?: string[] }).filter((d) => d.sessions_ended?.includes(lost.session_id));
    expect(ending).toHaveLength(1);
  });

  it('threat: ending another person\'s session by its id is 404 SESSION_NOT_FOUND, and that session stays active', async () => {
    const attacker = await signIn(t.app, 'own.sessions');
    const victim = await signIn(t.app, 'someone.else');
    expectError(await end(attacker.access_token, victim.session_id), 404, 'SESSION_NOT_FOUND');
    expect((await validate(victim.access_token)).statusCode).toBe(200);
  });
});
