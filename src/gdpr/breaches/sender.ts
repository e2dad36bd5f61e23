/**
 * Sends the queued breach notices, in the background (a job on every node). Each notice is
 * claimed atomically before anything is sent (BreachStore.claim), so nodes running at once, or a
 * run that overlaps another, never send one twice. Its outcome is recorded: `sent`, `no_contact`
 * (no email address or phone on the account), or `failed` (no transport configured, or the
 * transport refused it three times; a refusal is tried again 5, then 10 minutes later, since a
 * refused message was not sent). A notice claimed by a node that stopped mid-send is failed as
 * `interrupted`, never re-sent: it may have gone out.
 */
import type { Logger } from 'pino';
import type { Mailer } from '../../mail/mailer.js';
import type { OtpService } from '../../mfa/otp/service.js';
import type { Clock } from '../../platform/clock.js';
import type { UserRow, UserStore } from '../../users/store.js';
import type { BreachCategory } from './categories.js';
import { breachMail, breachSms } from './notices.js';
import type { BreachRow, BreachStore, ClaimedNotice } from './store.js';

const BATCH = 50;
const MAX_ATTEMPTS = 3;
const RETRY_MS = 5 * 60_000;
/** A claim older than this was abandoned (a send takes seconds: the SMTP and SMS timeouts are 20 s at most). */
const STALE_MS = 10 * 60_000;

export type NoticeOutcome = 'sent' | 'failed' | 'no_contact' | 'retry';

export interface SenderDeps {
  store: BreachStore;
  users: UserStore;
  mailer: Mailer;
  otp: OtpService;
  clock: Clock;
  log: Logger;
  onOutcome?: (channel: 'email' | 'sms', outcome: NoticeOutcome) => void;
}

export class BreachNoticeSender {
  constructor(private readonly deps: SenderDeps) {}

  /** Sends every due notice; returns how many were sent. Safe to run on every node at once. */
  async run(stopping?: AbortSignal): Promise<number> {
    const d = this.deps;
    await d.store.failStale(new Date(d.clock.now() - STALE_MS), new Date(d.clock.now()));
    const breaches = new Map<string, BreachRow | undefined>();
    let sent = 0;
    for (;;) {
      if (stopping?.aborted) return sent;
      const claimed = await d.store.claim(new Date(d.clock.now()), BATCH);
      for (const notice of claimed) {
        if (!breaches.has(notice.breach_id)) breaches.set(notice.breach_id, await d.store.get(notice.breach_id));
        if ((await this.deliver(notice, breaches.get(notice.breach_id))) === 'sent') sent++;
      }
      if (claimed.length < BATCH) return sent;
    }
  }

  private async deliver(notice: ClaimedNotice, breach: BreachRow | undefined): Promise<NoticeOutcome> {
    const d = this.deps;
    const now = () => new Date(d.clock.now());
    const user = await d.users.findById(notice.user_id);
    const outcome = await this.attempt(notice, breach, user).catch(async (err: unknown) => {
      const reason = String((err as { reason?: unknown }).reason ?? 'error').slice(0, 200);
      d.log.warn({ notice_id: notice.id, breach_id: notice.breach_id, channel: notice.channel, reason, attempts: notice.attempts }, 'breach notice not delivered');
      if (notice.attempts >= MAX_ATTEMPTS) {
        await d.store.finish(notice.id, 'failed', now(), reason);
        return 'failed' as const;
      }
      await d.store.retryLater(notice.id, new Date(d.clock.now() + RETRY_MS * notice.attempts), reason);
      return 'retry' as const;
    });
    d.onOutcome?.(notice.channel, outcome);
    return outcome;
  }

  /** Sends one notice and records its outcome; rejects when the transport refused it. */
  private async attempt(notice: ClaimedNotice, breach: BreachRow | undefined, user: UserRow | undefined): Promise<NoticeOutcome> {
    const d = this.deps;
    const finish = async (state: 'sent' | 'failed' | 'no_contact', reason: string | null): Promise<NoticeOutcome> => {
      await d.store.finish(notice.id, state, new Date(d.clock.now()), reason);
      return state;
    };
    if (!breach || !user) return finish('failed', 'account_or_breach_gone');
    if (notice.channel === 'email') {
      if (!user.email) return finish('no_contact', null);
      if (!d.mailer.configured) return finish('failed', 'email_not_configured');
      const mail = breachMail(user.email, {
        language: user.language, username: user.username, fullName: user.full_name, occurredFrom: new Date(breach.occurred_from),
        occurredTo: new Date(breach.occurred_to), categories: breach.categories as BreachCategory[], contactPoint: breach.contact_point,
      });
      await d.mailer.send(mail);
      return finish('sent', null);
    }
    if (!user.phone) return finish('no_contact', null);
    // The notice's id is the gateway's idempotency key: a gateway that got it already does not send it again.
    const delivered = await d.otp.sendRecoveryNotice(user, breachSms(user), `breach-${notice.id}`);
    return finish(delivered ? 'sent' : 'failed', delivered ? null : 'sms_not_configured');
  }
}
