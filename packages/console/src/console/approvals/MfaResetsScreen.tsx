/**
 * MFA resets (permission approve_mfa_reset): the people who lost their second factor and asked,
 * from their app, for a reset (POST /api/v1/auth/reset/mfa/admin/pending: the queue, oldest
 * first). Each shows who it is for, how they proved who they are (the password with a factor they
 * still hold, or with their security questions), their reason, when they asked and when the
 * request lapses. Approving (.../approve) removes every second factor of the person and ends their
 * sessions; rejecting (.../reject, permission reject_mfa_reset) leaves them as they are. Four eyes
 * are the API's: your own request is refused you (403 MFA_RESET_SELF_APPROVAL), said in the dialog.
 */
import { useState } from 'react';
import { Heading, Link } from 'react-aria-components';
import { useApi } from '../../lib/data.js';
import { useI18n, type MessageKey } from '../../lib/i18n.js';
import { useHref } from '../../lib/router.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Field, Notice } from '../../ui/forms.js';
import { ConfirmDialog } from './ConfirmDialog.js';

export interface MfaReset {
  request_id: string;
  user: { id: string; username: string };
  status: string;
  reason: string;
  proof: string;
  requested_at: string;
  expires_at: string;
}

interface Queue {
  requests: MfaReset[];
  total: number;
}

const PAGE_SIZE = 20;

export function MfaResetsScreen() {
  const { t } = useI18n();
  const [page, setPage] = useState(1);
  // The list route is a POST: its filters are a body.
  const queue = useApi<Queue>('/api/v1/auth/reset/mfa/admin/pending', { method: 'POST', body: { status: 'pending', limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE } });
  const [done, setDone] = useState<string | null>(null);
  const pages = queue.data ? Math.max(1, Math.ceil(queue.data.total / PAGE_SIZE)) : 1;
  const decided = (message: string) => {
    setDone(message);
    queue.reload();
  };
  return (
    <>
      <Heading level={1}>{t('queues.nav.mfaResets')}</Heading>
      <p>{t('queues.mfa.intro')}</p>
      {done ? <Notice>{done}</Notice> : null}
      <ErrorNotice error={queue.error} />
      {!queue.data && !queue.error ? <p>{t('common.loading')}</p> : null}
      {queue.data?.requests.length === 0 ? <p>{t('queues.mfa.none')}</p> : null}
      {queue.data?.requests.map((r) => <ResetRequest key={r.request_id} request={r} onDecided={decided} />)}
      {pages > 1 ? (
        <div className="actions">
          <Button variant="secondary" isDisabled={page <= 1} onPress={() => setPage(page - 1)}>{t('approvals.previous')}</Button>
          <span>{t('approvals.pageOf', { page, pages })}</span>
          <Button variant="secondary" isDisabled={page >= pages} onPress={() => setPage(page + 1)}>{t('approvals.next')}</Button>
        </div>
      ) : null}
    </>
  );
}

type Decision = 'approve' | 'reject';

/** How the person proved who they are when asking (the route's `proof`). */
const PROOFS = new Set(['password_and_factor', 'password_and_security_questions']);

function ResetRequest({ request: r, onDecided }: { request: MfaReset; onDecided(message: string): void }) {
  const { t, when } = useI18n();
  const { call, can, signedIn } = useSession();
  const href = useHref();
  const [deciding, setDeciding] = useState<Decision | null>(null);
  const vars = { username: r.user.username, when: when(r.requested_at) };
  const own = signedIn?.profile.username === r.user.username;
  const proof = PROOFS.has(r.proof) ? t(`queues.mfa.proof.${r.proof}` as MessageKey) : r.proof;

  const decide = (decision: Decision) => async (values: Record<string, string>) => {
    const body = decision === 'approve'
      ? { request_id: r.request_id, ...(values.note ? { note: values.note } : {}) }
      : { request_id: r.request_id, reason: values.reason };
    await call('POST', `/api/v1/auth/reset/mfa/admin/${decision}`, body);
    onDecided(t(decision === 'approve' ? 'queues.mfa.approved' : 'queues.mfa.rejected', vars));
  };

  return (
    <section className="card" aria-labelledby={`mfa-reset-${r.request_id}`}>
      <Heading level={2} id={`mfa-reset-${r.request_id}`}>{t('queues.mfa.heading', vars)}</Heading>
      {own ? <p className="notice notice-info">{t('queues.mfa.own')}</p> : null}
      <dl className="facts">
        <dt>{t('queues.mfa.account')}</dt><dd>{can('users.read') ? <Link href={href('users', r.user.id)}>{r.user.username}</Link> : r.user.username}</dd>
        <dt>{t('queues.mfa.askedBy')}</dt><dd>{t('queues.mfa.askedByPerson')}</dd>
        <dt>{t('queues.mfa.proof')}</dt><dd>{proof}</dd>
        <dt>{t('queues.mfa.reason')}</dt><dd className="their-words">{r.reason}</dd>
        <dt>{t('queues.mfa.asked')}</dt><dd>{when(r.requested_at)}</dd>
        <dt>{t('queues.mfa.expires')}</dt><dd>{when(r.expires_at)}</dd>
      </dl>
      <div className="actions">
        <Button onPress={() => setDeciding('approve')} aria-label={t('queues.mfa.approveOne', vars)}>{t('queues.mfa.approve')}</Button>
        {can('reject_mfa_reset') ? <Button variant="danger" onPress={() => setDeciding('reject')} aria-label={t('queues.mfa.rejectOne', vars)}>{t('queues.mfa.reject')}</Button> : null}
      </div>
      {deciding === 'approve' ? (
        <ConfirmDialog title={t('queues.mfa.confirmApprove', vars)} allows={t('queues.mfa.allowsApprove', vars)} confirmLabel={t('queues.mfa.approve')} onConfirm={decide('approve')} onClose={() => setDeciding(null)}>
          <Field name="note" label={t('queues.mfa.note')} maxLength={500} autoComplete="off" />
        </ConfirmDialog>
      ) : null}
      {deciding === 'reject' ? (
        <ConfirmDialog title={t('queues.mfa.confirmReject', vars)} allows={t('queues.mfa.allowsReject', vars)} confirmLabel={t('queues.mfa.reject')} variant="danger" onConfirm={decide('reject')} onClose={() => setDeciding(null)}>
          <Field name="reason" label={t('queues.mfa.rejectReason')} isRequired maxLength={500} autoComplete="off" />
        </ConfirmDialog>
      ) : null}
    </section>
  );
}
