/**
 * What other capabilities raise that the account holder's sockets hear, through their listeners
 * (no capability imports this one): a session of theirs ended elsewhere, a security alert about
 * their account, an account recovery started on it; and, for the sockets themselves, a session
 * given a new key on this node (other nodes hear `session.changed` on the bus).
 */
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { BackgroundWork } from '../platform/background.js';
import type { Db } from '../platform/db/database.js';
import type { RecoveryService } from '../recovery/service.js';
import type { AlertService, RecordedAlert } from '../risk/alerts/service.js';
import type { SessionService } from '../sessions/service.js';
import type { UserStore } from '../users/store.js';
import type { RealtimeHub } from './hub.js';

export interface HookDeps {
  hub: RealtimeHub;
  db: Db;
  log: Logger;
  background: BackgroundWork;
  sessions: SessionService;
  alerts: AlertService;
  recovery: RecoveryService;
  users: Pick<UserStore, 'findByUuid'>;
  /** Waits `ms` (wall time): between looks for an alert whose transaction has not committed yet (PGlite only). */
  sleep?: (ms: number) => Promise<void>;
}

/** Where there is no NOTIFY (PGlite), how long an alert recorded inside a caller's transaction is waited for (it may roll back). */
const ALERT_WAIT_MS = 15_000;

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

export function installHooks(d: HookDeps): void {
  const run = (what: string, work: () => Promise<unknown>): void => {
    d.background.track(work().catch((err: unknown) => d.log.warn({ err }, `real-time event not published: ${what}`)));
  };

  d.sessions.onRekeyed((session) => d.hub.rekeyed(session));

  d.sessions.onEnded((ended) => run('session.ended_elsewhere', async () => {
    for (const e of ended) {
      await d.hub.publish({ userId: e.userId }, { type: 'session.ended_elsewhere', data: { session_id: e.sessionId, reason: e.reason } });
    }
  }));

  d.alerts.onRecorded((alert, db) => {
    if (alert.userUuid === null) return;
    const event = {
      type: 'security.alert' as const,
      data: { alert_id: alert.id, rule: alert.rule, severity: alert.severity, channel: alert.channel, raised_at: new Date(alert.createdAt).toISOString() },
    };
    if (db.isTransaction) return alertInTransaction(d, run, db, alert.userUuid, alert, event);
    run('security.alert', async () => {
      const user = await d.users.findByUuid(alert.userUuid!);
      if (user) await d.hub.publish({ userId: user.id }, event);
    });
  });

  d.recovery.onStarted((r) => run('recovery.started', () => d.hub.publish({ userId: r.userId }, {
    type: 'recovery.started',
    data: { kind: r.kind, started_at: new Date(r.startedAt).toISOString(), expires_at: new Date(r.expiresAt).toISOString(), at_branch: r.atBranch },
  })));
}

/**
 * An alert recorded in a caller's transaction: its event is written in that transaction (under a
 * savepoint, so a failure here never fails the caller's change), delivered when it commits (the
 * commit's NOTIFY) and never if it rolls back. Where there is no NOTIFY (PGlite) this node is told
 * once the alert is visible.
 */
async function alertInTransaction(
  d: HookDeps, run: (what: string, work: () => Promise<unknown>) => void, trx: Db, userUuid: string, alert: RecordedAlert,
  event: Parameters<RealtimeHub['publish']>[1],
): Promise<void> {
  let stored: Awaited<ReturnType<RealtimeHub['publishIn']>> = null;
  try {
    await sql`SAVEPOINT realtime_event`.execute(trx);
    const user = await trx.selectFrom('users').select('id').where('uuid', '=', userUuid).executeTakeFirst();
    if (user) stored = await d.hub.publishIn(trx, { userId: user.id }, event);
    await sql`RELEASE SAVEPOINT realtime_event`.execute(trx);
  } catch (err) {
    stored = null;
    await sql`ROLLBACK TO SAVEPOINT realtime_event`.execute(trx).catch(() => undefined);
    d.log.warn({ err }, 'real-time event not published: security.alert');
    return;
  }
  if (stored && !stored.noticeOnCommit) {
    const userId = stored.userId;
    run('security.alert', async () => {
      if (await committed(d, alert)) await d.hub.announce(userId);
    });
  }
}

/** Whether an alert recorded in a transaction became visible (it committed) within ALERT_WAIT_MS. */
async function committed(d: HookDeps, alert: RecordedAlert): Promise<boolean> {
  const sleep = d.sleep ?? defaultSleep;
  let waited = 0;
  for (let pause = 20; ; pause = Math.min(pause * 2, 1000)) {
    const row = await d.db.selectFrom('security_alerts').select('id').where('id', '=', alert.id).executeTakeFirst();
    if (row) return true;
    if (waited >= ALERT_WAIT_MS) return false;
    await sleep(pause);
    waited += pause;
  }
}
