/**
 * Errors of the real-time channel's HTTP side. Everything after the upgrade is told by close codes
 * (src/realtime/types.ts `CLOSE`, docs/realtime.md), not by error bodies.
 */
import { defineErrors } from '../platform/errors.js';

export const RealtimeErrors = defineErrors({
  /** A plain GET of the WebSocket route: it answers only an upgrade (`Connection: Upgrade`, `Upgrade: websocket`). */
  REALTIME_UPGRADE_REQUIRED: { status: 426, message: 'This route is a WebSocket: open it with an upgrade request, then send the access token in the first message.' },
});
