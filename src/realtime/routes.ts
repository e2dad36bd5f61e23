/**
 * `GET /api/v1/ws`: the real-time channel, a WebSocket on the service's own port (docs/realtime.md,
 * the messages in docs/asyncapi.yaml). A plain GET (no upgrade) answers 426.
 */
import websocket from '@fastify/websocket';
import type { FastifyPluginAsync } from 'fastify';
import type { App } from '../platform/http/app.js';
import { errors } from '../platform/http/schemas.js';
import { MAX_CLIENT_FRAME_BYTES } from './envelope.js';
import { RealtimeErrors as E } from './errors.js';
import { handleSocket, type SocketDeps } from './socket.js';

export const REALTIME_PATH = '/api/v1/ws';

const DESCRIPTION = [
  'A WebSocket (RFC 6455) that tells the signed-in client, as they happen, of its second-factor approvals (requested, approved, denied, expired), of its other sessions ending, of security alerts about its account and of an account recovery started on it. Every message and its payload, with examples: the AsyncAPI 3 document `docs/asyncapi.yaml`; for client developers and operators: `docs/realtime.md`.',
  '',
  '1. Open the socket with no token in the URL (a URL with `access_token` is refused: URLs are logged).',
  '2. Send, within `REALTIME_AUTH_TIMEOUT_SECONDS`, `{"type":"auth","access_token":"<access token>","device_fingerprint":"<when the session is bound to a device>"}` in clear. The token is checked exactly as on every authenticated route (signature, expiry, revocation, session, device binding, access policy).',
  '3. Every message after it, either way, is `{"seq","type","nonce","ciphertext","tag"}`: AES-256-GCM under the session\'s key (the key of transport encryption), a fresh 12-byte nonce, a 128-bit tag, and `strongroom-ws|<s2c or c2s>|<type>|<seq>` as additional data. The server numbers its messages 1, 2, 3...; a client\'s numbers must increase.',
  '',
  'Close codes: 4401 not authenticated (the reason names the refusal, e.g. `TOKEN_EXPIRED`), 4400 a frame that does not open (tampered, replayed, unknown), 4001 the session ended, 4002 the session key rotated (after a refresh) or expired, 4003 the access token expired, 4008 replaced by a newer socket of the same session (past `REALTIME_MAX_SOCKETS_PER_SESSION`), 4029 refused: the user already has `REALTIME_MAX_SOCKETS_PER_USER` sockets (another session\'s are never closed for it), 4009 silent for two heartbeats, 1008 too many frames waiting to be handled, 1013 reading too slowly or too many sockets waiting to authenticate, 1001 the server is shutting down. A second `resume` on one socket closes it 4400. At each heartbeat the session is checked as a request would be: ended for inactivity or past its lifetime, 4001; refused by its access policy now, 4401 `POLICY_RESTRICTED`.',
].join('\n');

export function realtimeRoutes(deps: SocketDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as App;
    await app.register(websocket, {
      options: { maxPayload: MAX_CLIENT_FRAME_BYTES, perMessageDeflate: false },
      preClose(done) {
        deps.hub.closeAll(); // 1001 to the authenticated sockets; the others are simply closed
        for (const client of this.websocketServer.clients) client.close(1001, 'server shutting down');
        this.websocketServer.close();
        done();
      },
    });
    app.route({
      method: 'GET',
      url: REALTIME_PATH,
      // Opening sockets is counted per client network with refresh and sign-out (RATE_LIMIT_TOKEN_IP): past it, 429 before the upgrade.
      config: { rateLimit: { group: 'token' } },
      schema: {
        tags: ['Real-time channel'], summary: 'The real-time channel (WebSocket)', description: DESCRIPTION,
        response: { ...errors(E.REALTIME_UPGRADE_REQUIRED) },
      },
      handler: async () => {
        throw E.REALTIME_UPGRADE_REQUIRED();
      },
      wsHandler: (socket, request) => handleSocket(deps, socket, request),
    });
  };
}
