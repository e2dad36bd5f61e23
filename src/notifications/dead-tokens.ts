/**
 * A token the provider reports dead (unregistered, another sender's, malformed) turns inactive by
 * itself (SPEC), audited DEVICE_TOKEN_DEACTIVATED `by: push_provider`: the one way every sender
 * (the test route, the delivery worker, one-time codes) retires it. `tokenId` is the internal id;
 * the audit entry names the token by its uuid.
 */
import type { AuditInput, AuditLog } from '../audit/service.js';
import type { DeviceTokenStore } from '../devices/store.js';
import type { Db } from '../platform/db/database.js';

export async function retireDeadToken(
  d: { db: Db; deviceTokens: DeviceTokenStore; audit: AuditLog },
  userId: number, tokenId: number, reason: string,
  entry: Omit<AuditInput, 'eventType' | 'status' | 'details'> = {}, details: Record<string, unknown> = {},
): Promise<void> {
  await d.db.transaction().execute(async (trx) => {
    const uuid = await d.deviceTokens.deactivateDead(userId, tokenId, trx);
    if (uuid !== undefined) {
      await d.audit.record({ userId: null, username: null, ...entry, eventType: 'DEVICE_TOKEN_DEACTIVATED', status: 'SUCCESS', details: { device_token_id: uuid, by: 'push_provider', reason, ...details } }, trx);
    }
  });
}
