/**
 * Cache invalidation between nodes. A node publishes an event; its own subscribers hear it at
 * once, and on PostgreSQL every other node hears it through LISTEN/NOTIFY. On PGlite only one
 * process can open the database, so the bus is local.
 *
 * Lost notifications (a dropped LISTEN connection) are covered by each cache's periodic
 * re-sync; `onReconnect` lets caches flush when the listener comes back.
 */
import { randomUUID } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';

export type BusEvent =
  | { type: 'session.ended'; sessionId: string }
  | { type: 'session.changed'; sessionId: string }
  | { type: 'token.denied'; jti: string; expiresAt: number }
  | { type: 'keyring.changed' }
  | { type: 'transport-keys.changed' }
  | { type: 'access-policies.changed' }
  | { type: 'device-bindings.changed'; userId: number }
  | { type: 'ldap-config.changed' }
  | { type: 'saml-config.changed' }
  | { type: 'saml-sp-keys.changed' }
  | { type: 'faq.changed' }
  | { type: 'risk-policy.changed' }
  /** A real-time event was stored for this user (src/realtime): the node holding a socket of theirs reads it. */
  | { type: 'realtime.event'; userId: number }
  /** Push-approval requests left `pending` (answered, expired, denied with the factor): the node holding a long-poll of one answers it (src/push-approval). */
  | { type: 'push-approval.settled'; requestIds: string[] }
  | { type: 'risk-address.blocked'; network: string; until: number };

const CHANNEL = 'strongroom_events';

export interface EventBus {
  publish(event: BusEvent): Promise<void>;
  /**
   * For a writer that folds the notice into its own statement (one round trip less): the SQL
   * expression that tells the other nodes when that statement commits (`pg_notify`; NULL where
   * there are none). This node's own caches are the writer's to update.
   */
  remoteNotice(event: BusEvent): RawBuilder<unknown>;
  /**
   * For a writer inside a transaction that may still roll back: the SQL expression that tells
   * every node, this one included, once that transaction commits (and no one if it rolls back);
   * null where there is no NOTIFY (PGlite: the writer tells this node itself after commit).
   */
  commitNotice(event: BusEvent): RawBuilder<unknown> | null;
  subscribe(handler: (event: BusEvent) => void): void;
  onReconnect(handler: () => void): void;
  close(): Promise<void>;
}

export class LocalBus implements EventBus {
  protected readonly handlers: Array<(e: BusEvent) => void> = [];
  protected readonly reconnectHandlers: Array<() => void> = [];
  async publish(event: BusEvent): Promise<void> {
    this.deliver(event);
  }
  subscribe(handler: (event: BusEvent) => void): void {
    this.handlers.push(handler);
  }
  onReconnect(handler: () => void): void {
    this.reconnectHandlers.push(handler);
  }
  protected deliver(event: BusEvent): void {
    for (const h of this.handlers) h(event);
  }
  remoteNotice(_event: BusEvent): RawBuilder<unknown> {
    return sql`NULL`;
  }
  commitNotice(_event: BusEvent): RawBuilder<unknown> | null {
    return null;
  }
  async close(): Promise<void> {}
}

export class PgBus extends LocalBus {
  private readonly nodeId = randomUUID();
  private client: pg.Client | undefined;
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly connectionString: string,
    private readonly log: Logger,
  ) {
    super();
  }

  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString });
    client.on('notification', (msg) => {
      if (msg.channel !== CHANNEL || !msg.payload) return;
      const sep = msg.payload.indexOf('|');
      if (msg.payload.slice(0, sep) === this.nodeId) return; // our own, already delivered (a commit notice is `*|`: every node's)
      try {
        this.deliver(JSON.parse(msg.payload.slice(sep + 1)) as BusEvent);
      } catch (err) {
        this.log.warn({ err }, 'ignored a malformed cache-invalidation notification');
      }
    });
    client.on('error', (err) => {
      this.log.warn({ err }, 'cache-invalidation listener lost its connection; reconnecting');
      this.reconnectLater();
    });
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
    this.client = client;
  }

  private reconnectLater(): void {
    const old = this.client;
    this.client = undefined;
    old?.end().catch(() => undefined);
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.start()
        .then(() => {
          for (const h of this.reconnectHandlers) h();
        })
        .catch(() => this.reconnectLater());
    }, 1000);
    this.retryTimer.unref();
  }

  override remoteNotice(event: BusEvent): RawBuilder<unknown> {
    return sql`pg_notify(${CHANNEL}, ${`${this.nodeId}|${JSON.stringify(event)}`})`;
  }

  override commitNotice(event: BusEvent): RawBuilder<unknown> {
    return sql`pg_notify(${CHANNEL}, ${`*|${JSON.stringify(event)}`})`;
  }

  override async publish(event: BusEvent): Promise<void> {
    this.deliver(event);
    await this.pool.query('SELECT pg_notify($1, $2)', [CHANNEL, `${this.nodeId}|${JSON.stringify(event)}`]);
  }

  override async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    await this.client?.end().catch(() => undefined);
  }
}
