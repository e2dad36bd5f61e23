/**
 * The push outbox and its delivery (issue 14 section 2; docs/decisions.md "Push delivery").
 *
 * `enqueue` writes one `pending` row per active device of the user, in the caller's transaction
 * (so a notification exists exactly when the event that causes it committed). `deliver`, the
 * worker every node runs, claims due rows with `FOR UPDATE SKIP LOCKED` and a lease, sends each
 * through the provider, and marks it `sent` (with the provider's message id), retries it later
 * (exponential backoff with jitter, at least the provider's Retry-After), or marks it `failed`
 * with the reason. Delivery is at least once: a node that dies after the provider accepted a
 * message and before marking it leaves the claim to expire, and another node sends it again, so
 * a crash duplicates at most the messages that node had claimed (one batch).
 */
import { sql, type Selectable } from 'kysely';
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/service.js';
import type { DeviceTokenStore } from '../devices/store.js';
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';
import { purgeInBatches } from '../platform/db/purge.js';
import type { PushMessagesTable } from '../platform/db/schema.js';
import { retireDeadToken } from './dead-tokens.js';
import { textProblem } from './text.js';
import type { PushProvider, PushResult } from './fcm.js';

export interface PushContent {
  title: string;
  body: string;
  data?: Record<string, string>;
  imageUrl?: string;
}

/** SPEC's push limits. */
export const PUSH_TEXT_MAX = 240;

/** What is wrong with a notification's content (SPEC's limits), by field; empty when nothing. */
export function contentProblems(c: { title?: unknown; body?: unknown; data?: unknown; imageUrl?: unknown }): Array<{ field: string; message: string }> {
  const out: Array<{ field: string; message: string }> = [];
  for (const f of ['title', 'body'] as const) {
    const v = c[f];
    const unsafe = typeof v === 'string' ? textProblem(v, f === 'body') : undefined;
    if (typeof v !== 'string' || v.trim() === '') out.push({ field: f, message: 'is required' });
    else if ([...v].length > PUSH_TEXT_MAX) out.push({ field: f, message: `must be at most ${PUSH_TEXT_MAX} characters` });
    else if (unsafe) out.push({ field: f, message: unsafe });
  }
  if (c.data !== undefined) {
    if (typeof c.data !== 'object' || c.data === null || Array.isArray(c.data)) out.push({ field: 'push_data', message: 'must be an object of string keys and string values' });
    else {
      for (const [k, v] of Object.entries(c.data)) {
        const badKey = textProblem(k);
        const field = `push_data.${badKey ? JSON.stringify(k).slice(0, 80) : k}`;
        const badValue = typeof v === 'string' ? textProblem(v, true) : 'must be a string';
        if (badKey) out.push({ field, message: `key ${badKey}` });
        else if (badValue) out.push({ field, message: badValue });
      }
    }
  }
  if (c.imageUrl !== undefined && !(typeof c.imageUrl === 'string' && !textProblem(c.imageUrl) && URL.canParse(c.imageUrl) && new URL(c.imageUrl).protocol === 'https:')) {
    out.push({ field: 'image_url', message: 'must be an https:// URL' });
  }
  return out;
}

export interface DeliveryOptions {
  batchSize: number;
  leaseMs: number;
  maxAttempts: number;
}

const DEFAULT_DELIVERY: DeliveryOptions = { batchSize: 50, leaseMs: 60_000, maxAttempts: 5 };

/** Full batches one worker turn takes at most (10,000 messages; then the next tick goes on). */
const DRAIN_ROUNDS = 200;

/** Seconds before attempt `attempts + 1`: 5 s, 10 s, 20 s ... up to 10 minutes, ±20%, never before Retry-After. */
export function backoffSec(attempts: number, retryAfterSec: number | undefined, random: () => number = Math.random): number {
  const base = Math.min(600, 5 * 2 ** Math.max(0, attempts - 1));
  const jittered = base * (0.8 + 0.4 * random());
  return Math.max(retryAfterSec ?? 0, Math.round(jittered));
}

type Claimed = Pick<Selectable<PushMessagesTable>, 'user_id' | 'device_token_id' | 'title' | 'body' | 'data' | 'image_url' | 'attempts' | 'created_at'> & { id: string };

/** What became of one send: `latencyMs` (queued to accepted) only when sent. */
export interface DeliveryOutcome {
  outcome: 'sent' | 'retry' | 'failed';
  reason?: string;
  latencyMs?: number;
}

export interface DeliveryReport {
  claimed: number;
  sent: number;
  retried: number;
  failed: number;
}

export class PushOutbox {
  constructor(private readonly deps: { db: Db; clock: Clock; log: Logger; audit: AuditLog; deviceTokens: DeviceTokenStore; push: PushProvider | undefined; options?: DeliveryOptions; onResult?: (result: DeliveryOutcome) => void }) {}

  private get options(): DeliveryOptions {
    return this.deps.options ?? DEFAULT_DELIVERY;
  }

  /** One pending message per active device of the user; their ids (none: the user has no active device). */
  async enqueue(trx: Db, userId: number, content: PushContent): Promise<string[]> {
    const now = new Date(this.deps.clock.now());
    const rows = await sql<{ id: string }>`
      INSERT INTO push_messages (user_id, device_token_id, title, body, data, image_url, next_attempt_at, created_at, updated_at)
      SELECT ${userId}, d.id, ${content.title}, ${content.body}, ${content.data === undefined ? null : JSON.stringify(content.data)}::jsonb, ${content.imageUrl ?? null}, ${now}, ${now}, ${now}
      FROM device_tokens d WHERE d.user_id = ${userId} AND d.is_active
      ORDER BY d.id
      RETURNING id`.execute(trx);
    return rows.rows.map((r) => String(r.id));
  }

  /**
   * One message to one device of the user, tried once: never retried after a failure nor after a
   * node's crash mid-send (it is queued as if on its last attempt), for a message that must not
   * arrive twice (a sign-in approval request). Its id; none when the device is not the user's
   * active one.
   */
  async enqueueOnce(trx: Db, userId: number, deviceTokenId: number, content: PushContent): Promise<string | null> {
    const now = new Date(this.deps.clock.now());
    const rows = await sql<{ id: string }>`
      INSERT INTO push_messages (user_id, device_token_id, title, body, data, image_url, attempts, next_attempt_at, created_at, updated_at)
      SELECT ${userId}, d.id, ${content.title}, ${content.body}, ${content.data === undefined ? null : JSON.stringify(content.data)}::jsonb, ${content.imageUrl ?? null}, ${this.options.maxAttempts - 1}, ${now}, ${now}, ${now}
      FROM device_tokens d WHERE d.id = ${deviceTokenId} AND d.user_id = ${userId} AND d.is_active
      RETURNING id`.execute(trx);
    return rows.rows[0] ? String(rows.rows[0].id) : null;
  }

  /** Due messages, claimed for this node until the lease ends (no other node takes them meanwhile). */
  async claim(limit = this.options.batchSize): Promise<Claimed[]> {
    const now = new Date(this.deps.clock.now());
    const leaseUntil = new Date(this.deps.clock.now() + this.options.leaseMs);
    const { rows } = await sql<Claimed>`
      UPDATE push_messages SET lease_until = ${leaseUntil}, attempts = attempts + 1, updated_at = ${now}
      WHERE id IN (
        SELECT id FROM push_messages
        WHERE status = 'pending' AND next_attempt_at <= ${now} AND (lease_until IS NULL OR lease_until <= ${now})
        ORDER BY next_attempt_at, id
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      )
      RETURNING id, user_id, device_token_id, title, body, data, image_url, attempts, created_at`.execute(this.deps.db);
    return rows.map((r) => ({ ...r, id: String(r.id) }));
  }

  private async finish(m: Claimed, set: Record<string, unknown>): Promise<void> {
    await this.deps.db.updateTable('push_messages').set({ ...set, lease_until: null, updated_at: new Date(this.deps.clock.now()) })
      .where('id', '=', m.id).where('status', '=', 'pending').execute();
  }

  private async settle(m: Claimed, result: PushResult): Promise<'sent' | 'retry' | 'failed'> {
    if (result.ok) {
      await this.finish(m, { status: 'sent', provider_message_id: result.messageId, sent_at: new Date(this.deps.clock.now()) });
      return 'sent';
    }
    if (result.deactivate && m.device_token_id !== null) await retireDeadToken(this.deps, m.user_id, m.device_token_id, result.reason, {}, { push_message_id: m.id });
    if (result.retryable && m.attempts < this.options.maxAttempts) {
      const next = new Date(this.deps.clock.now() + backoffSec(m.attempts, result.retryAfterSec) * 1000);
      await this.finish(m, { next_attempt_at: next, failure_reason: result.reason });
      return 'retry';
    }
    await this.finish(m, { status: 'failed', failure_reason: result.reason });
    return 'failed';
  }

  /** One round of the worker: claims a batch and settles every message of it. */
  async deliver(): Promise<DeliveryReport> {
    const report: DeliveryReport = { claimed: 0, sent: 0, retried: 0, failed: 0 };
    if (!this.deps.push) return report;
    const push = this.deps.push;
    const batch = await this.claim();
    report.claimed = batch.length;
    // The batch's devices in one query, and their last use in one statement at the end.
    const devices = await this.deps.deviceTokens.getMany(batch.flatMap((m) => (m.device_token_id === null ? [] : [m.device_token_id])));
    const used: Array<{ userId: number; id: number }> = [];
    await Promise.all(batch.map(async (m) => {
      let outcome: 'sent' | 'retry' | 'failed';
      let reason: string | undefined;
      const found = m.device_token_id === null ? undefined : devices.get(m.device_token_id);
      const device = found?.user_id === m.user_id ? found : undefined; // moved to another user since: not theirs to get
      if (m.attempts > this.options.maxAttempts) {
        // Claimed once more than the attempts allow: every claim before ended in a node's crash,
        // not in an answer. Given up, so that a message that kills nodes stops doing so.
        reason = 'attempts_exhausted';
        await this.finish(m, { status: 'failed', failure_reason: reason });
        outcome = 'failed';
      } else if (!device || !device.is_active) {
        reason = device ? 'token_inactive' : 'token_deleted';
        await this.finish(m, { status: 'failed', failure_reason: reason });
        outcome = 'failed';
      } else {
        const result = await push.send({ token: device.push_token, title: m.title, body: m.body, ...(m.data === null ? {} : { data: m.data }), ...(m.image_url === null ? {} : { imageUrl: m.image_url }) });
        reason = result.ok ? undefined : result.reason;
        outcome = await this.settle(m, result);
        if (outcome === 'sent') used.push({ userId: m.user_id, id: device.id });
      }
      report[outcome === 'sent' ? 'sent' : outcome === 'retry' ? 'retried' : 'failed']++;
      this.deps.onResult?.(outcome === 'sent' ? { outcome, latencyMs: this.deps.clock.now() - new Date(m.created_at).getTime() } : { outcome, reason: reason ?? 'unknown' });
    }));
    await this.deps.deviceTokens.markUsedMany(used);
    if (report.claimed > 0) this.deps.log.debug({ push: report }, 'push delivery round');
    return report;
  }

  /**
   * The worker's turn: rounds of `deliver` while each claims a full batch and the provider takes
   * some of it (a backlog drains at the provider's pace, not one batch per tick; a provider
   * that fails is not hammered), at most `maxRounds`, and none once the node is stopping.
   */
  async drain(stopping?: AbortSignal, maxRounds = DRAIN_ROUNDS): Promise<DeliveryReport> {
    const total: DeliveryReport = { claimed: 0, sent: 0, retried: 0, failed: 0 };
    for (let i = 0; i < maxRounds && !stopping?.aborted; i++) {
      const r = await this.deliver();
      for (const k of Object.keys(total) as Array<keyof DeliveryReport>) total[k] += r[k];
      if (r.claimed < this.options.batchSize || r.sent === 0) break;
    }
    return total;
  }

  /**
   * Deletes the messages delivered or failed before `cutoff` (RECORD_RETENTION_DAYS), in
   * batches: the outbox keeps a delivery record long enough for support, not for ever.
   */
  purgeDone(cutoff: Date, stopping?: AbortSignal): Promise<number> {
    return purgeInBatches(async (limit) => {
      const r = await this.deps.db.deleteFrom('push_messages').where('id', 'in', (eb) => eb.selectFrom('push_messages').select('id')
        .where('status', '<>', 'pending').where('updated_at', '<', cutoff).orderBy('updated_at').limit(limit)).executeTakeFirst();
      return Number(r.numDeletedRows);
    }, stopping);
  }

  /** Pending messages (the queue's depth, for /metrics). */
  async depth(): Promise<number> {
    const [{ n }] = await this.deps.db.selectFrom('push_messages').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'pending').execute() as [{ n: number | string }];
    return Number(n);
  }
}
