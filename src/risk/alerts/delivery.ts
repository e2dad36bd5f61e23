/**
 * Sends the queued alert deliveries to the security team, in the background (a job on every
 * node), as the push outbox sends push messages: due deliveries are claimed atomically
 * (AlertStore.claim: `FOR UPDATE SKIP LOCKED`, a claim token and a lease), so nodes running at
 * once, or a run overlapping another, never send one delivery at the same time; each is then
 * sent (the email through the mailer, the webhook signed) and settled: `sent`, due again later
 * (exponential backoff: 30 s doubling to an hour, ±20%, never before the receiver's Retry-After),
 * or `failed` after SECURITY_ALERT_MAX_ATTEMPTS tries.
 *
 * Delivery is at least once: a node that dies after the receiver accepted a delivery and before
 * recording it leaves the lease to expire, and another node sends it again. The lease (2 minutes)
 * is longer than any one send may take (the webhook's timeout is at most 30 s; SMTP's, 40 s), so
 * a live node's delivery is never taken over mid-send. Receivers drop a repeat by `delivery_id`.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Mailer } from '../../mail/mailer.js';
import type { Clock } from '../../platform/clock.js';
import type { AlertsConfig } from '../../platform/config-alerts.js';
import { alertMail, webhookBody } from './message.js';
import type { AlertRow, AlertStore, ClaimedDelivery, DeliveryChannel } from './store.js';
import { postWebhook } from './webhook.js';

export type DeliveryOutcome = 'sent' | 'retry' | 'failed';
export const DELIVERY_OUTCOMES: readonly DeliveryOutcome[] = ['sent', 'retry', 'failed'];
export const DELIVERY_CHANNELS: readonly DeliveryChannel[] = ['email', 'webhook'];

/** Deliveries one claim takes. */
const BATCH = 20;
/** Claims one run makes at most (then the next tick goes on). */
const MAX_ROUNDS = 50;
const LEASE_MS = 2 * 60_000;
const MAX_DELAY_SEC = 3600;

/** Seconds before attempt `attempts + 1`: 30 s, 60 s, 2 min ... up to an hour, ±20%, never before Retry-After (itself capped at an hour). */
export function retryDelaySec(attempts: number, retryAfterSec: number | undefined, random: () => number = Math.random): number {
  const base = Math.min(MAX_DELAY_SEC, 30 * 2 ** Math.max(0, attempts - 1));
  const jittered = Math.round(base * (0.8 + 0.4 * random()));
  return Math.max(Math.min(retryAfterSec ?? 0, MAX_DELAY_SEC), jittered);
}

export interface DeliveryReport {
  claimed: number;
  sent: number;
  retried: number;
  failed: number;
}

export interface AlertDeliveryDeps {
  store: AlertStore;
  config: AlertsConfig;
  mailer: Mailer;
  clock: Clock;
  log: Logger;
  onOutcome?: (channel: DeliveryChannel, outcome: DeliveryOutcome) => void;
  random?: () => number;
}

type Attempt = { ok: true } | { ok: false; reason: string; retryable: boolean; retryAfterSec?: number };

export class AlertDelivery {
  constructor(private readonly deps: AlertDeliveryDeps) {}

  /** Sends every due delivery (at most MAX_ROUNDS claims); safe to run on every node at once. */
  async run(stopping?: AbortSignal): Promise<DeliveryReport> {
    const total: DeliveryReport = { claimed: 0, sent: 0, retried: 0, failed: 0 };
    for (let round = 0; round < MAX_ROUNDS && !stopping?.aborted; round++) {
      const now = this.deps.clock.now();
      const batch = await this.deps.store.claim(new Date(now), new Date(now + LEASE_MS), randomUUID(), BATCH);
      total.claimed += batch.length;
      const alerts = await this.deps.store.getMany(batch.map((d) => d.alert_id));
      const outcomes = await Promise.all(batch.map((d) => this.deliver(d, alerts.get(d.alert_id))));
      for (const o of outcomes) total[o === 'sent' ? 'sent' : o === 'retry' ? 'retried' : 'failed']++;
      // A batch that sent nothing (a receiver down) waits for its backoff, not for the next round.
      if (batch.length < BATCH || !outcomes.includes('sent')) break;
    }
    if (total.claimed > 0) this.deps.log.debug({ alert_deliveries: total }, 'security alert delivery round');
    return total;
  }

  private async deliver(d: ClaimedDelivery, alert: AlertRow | undefined): Promise<DeliveryOutcome> {
    const { store, clock, config, log } = this.deps;
    const attempt: Attempt = d.attempts > config.maxAttempts
      // Claimed once more than the attempts allow: every claim before ended in a node's crash.
      ? { ok: false, reason: 'attempts_exhausted', retryable: false }
      : alert === undefined ? { ok: false, reason: 'alert_gone', retryable: false } : await this.send(d, alert);
    const now = new Date(clock.now());
    let outcome: DeliveryOutcome;
    if (attempt.ok) {
      await store.settle(d, now, { state: 'sent' });
      outcome = 'sent';
    } else if (attempt.retryable && d.attempts < config.maxAttempts) {
      const delay = retryDelaySec(d.attempts, attempt.retryAfterSec, this.deps.random);
      await store.settle(d, now, { state: 'pending', reason: attempt.reason, retryAt: new Date(now.getTime() + delay * 1000) });
      outcome = 'retry';
    } else {
      await store.settle(d, now, { state: 'failed', reason: attempt.reason });
      outcome = 'failed';
    }
    if (!attempt.ok) log.warn({ alert_id: d.alert_id, delivery_id: d.id, channel: d.channel, attempts: d.attempts, reason: attempt.reason, outcome }, `security alert ${d.channel} delivery not accepted: ${attempt.reason}`);
    this.deps.onOutcome?.(d.channel, outcome);
    return outcome;
  }

  /** One attempt; never throws. */
  private async send(d: ClaimedDelivery, alert: AlertRow): Promise<Attempt> {
    const { config, mailer, clock } = this.deps;
    if (d.channel === 'webhook') {
      // The setting may have been removed since the delivery was queued (a restart in between).
      if (!config.webhook) return { ok: false, reason: 'webhook_not_configured', retryable: false };
      const r = await postWebhook(config.webhook, webhookBody(alert, d.id), d.id, clock.now());
      return r.ok ? { ok: true } : { ok: false, reason: r.reason, retryable: true, ...(r.retryAfterSec === undefined ? {} : { retryAfterSec: r.retryAfterSec }) };
    }
    if (config.emails.length === 0 || !mailer.configured) return { ok: false, reason: 'email_not_configured', retryable: false };
    try {
      await mailer.send(alertMail(config.emails, alert));
      return { ok: true };
    } catch (err) {
      return { ok: false, reason: String((err as { reason?: unknown }).reason ?? 'error').slice(0, 200), retryable: true };
    }
  }
}
