/**
 * The real-time channel across nodes (issue 30, section 1), on PostgreSQL: two nodes, two
 * connection pools on one database, each hearing the other through LISTEN/NOTIFY. A socket held by
 * node A receives an event published on node B; a sign-out handled by B closes it (4001); a refresh
 * handled by B (a new session key) closes it (4002). PGlite is one process by construction, so
 * this suite lives in the PostgreSQL-only project.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLOSE } from '../../src/realtime/types.js';
import { createTwoNodes, type TwoNodes } from '../harness/app.js';
import { bearer, seedUser, signIn, withoutRiskResponses } from '../harness/fixtures.js';
import { listenForSockets, TestSocket } from '../harness/realtime-client.js';

describe('real-time channel across two nodes', () => {
  let nodes: TwoNodes;
  let urlA: string;
  let userId: number;

  beforeAll(async () => {
    nodes = await createTwoNodes();
    await withoutRiskResponses(nodes.a.s);
    userId = (await seedUser(nodes.a.s, 'rt.nodes')).id;
    urlA = await listenForSockets(nodes.a.app);
  });
  afterAll(async () => nodes?.close());

  const openOnA = async () => {
    const s = await signIn(nodes.b.app, 'rt.nodes');
    const key = (await nodes.a.s.sessions.get(s.session_id))!.aesKey!;
    return { s, socket: (await TestSocket.ready(urlA, s.access_token, key)).socket };
  };

  it('an event published on node B reaches the socket on node A, sealed under the session key', async () => {
    const { s, socket } = await openOnA();
    const byUser = await nodes.b.s.realtime.publish({ userId }, { type: 'second_factor.approved', data: { request_id: 'r-1' } });
    expect(await socket.event()).toMatchObject({ id: byUser, type: 'second_factor.approved', data: { request_id: 'r-1' } });
    const bySession = await nodes.b.s.realtime.publish({ sessionId: s.session_id }, { type: 'second_factor.denied', data: { request_id: 'r-2' } });
    expect(await socket.event()).toMatchObject({ id: bySession, type: 'second_factor.denied' });
    expect(nodes.b.s.realtime.size).toBe(0); // B holds no socket: it only stored and announced
    socket.close();
  });

  it('a sign-out on node B closes the socket on node A (4001)', async () => {
    const { s, socket } = await openOnA();
    const res = await nodes.b.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(s.access_token), payload: {} });
    expect(res.statusCode, res.body).toBe(200);
    expect((await socket.closed).code).toBe(CLOSE.SESSION_ENDED);
  });

  it('a refresh on node B (a new session key) closes the socket on node A (4002)', async () => {
    const { s, socket } = await openOnA();
    const res = await nodes.b.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: s.refresh_token } });
    expect(res.statusCode, res.body).toBe(200);
    expect((await socket.closed).code).toBe(CLOSE.KEY_ROTATED);
  });
});
