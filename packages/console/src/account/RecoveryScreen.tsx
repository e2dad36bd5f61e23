/**
 * Your account recoveries and second-factor reset requests, and where each stands
 * (GET /api/v1/auth/recoveries, read with the session like the Sessions page: no step-up, and not
 * logged as an export; it answers only your own metadata, the reasons you wrote and the decisions).
 * A recovery still active has *Stop*: a dialog says what it does and asks whether you started it
 * (POST /api/v1/auth/recoveries/{reference}/cancel; `not_me` also alerts the bank, but never blocks
 * recovery: a session may be a lost phone's, so the block is left to the link in the email). One a
 * branch started (an identity document checked) or a blocked one (a decoy: it leads nowhere) has
 * no *Stop*; a note under the table says why. A reset request is decided by staff, or lapses.
 */
import { useState } from 'react';
import { Cell, Checkbox, Column, Heading, Row, Table, TableBody, TableHeader } from 'react-aria-components';
import { ConfirmDialog } from '../console/approvals/ConfirmDialog.js';
import { useApi } from '../lib/data.js';
import { useI18n, type MessageKey } from '../lib/i18n.js';
import { useSession } from '../lib/session.js';
import { Button, ErrorNotice, Notice } from '../ui/forms.js';

interface Recovery { reference: string | null; lost: 'password' | 'pin' | 'mfa' | 'device'; state: string; started_at_branch: boolean; blocked: boolean; created_at: string; expires_at: string; waiting_until: string | null; completed_at: string | null; ended_at: string | null; cancellable: boolean }
interface ResetRequest { request_id: string; status: string; reason: string; requested_at: string; expires_at: string; decided_at: string | null; decision_note: string | null }
interface Own { recoveries: Recovery[]; factor_resets: ResetRequest[]; recovery_locked_until: string | null }

export function RecoveryScreen() {
  const { t, when } = useI18n();
  const own = useApi<Own>('/api/v1/auth/recoveries');
  const [done, setDone] = useState<string | null>(null);
  const cancelled = (message: string) => {
    setDone(message);
    own.reload();
  };
  return (
    <>
      <Heading level={1}>{t('account.navRecovery')}</Heading>
      <p>{t('recoveries.own.intro')}</p>
      <p>{t('account.resetDecided')}</p>
      {done ? <Notice>{done}</Notice> : null}
      <ErrorNotice error={own.error} />
      {own.data?.recovery_locked_until ? <p role="status">{t('account.recoveryLocked', { until: when(own.data.recovery_locked_until) })}</p> : null}
      {own.data ? <Workflows workflows={own.data.recoveries} onCancelled={cancelled} /> : null}
      {own.data ? <Resets resets={own.data.factor_resets} /> : null}
      {!own.data && !own.error ? <p>{t('common.loading')}</p> : null}
    </>
  );
}

function Workflows({ workflows, onCancelled }: { workflows: Recovery[]; onCancelled(message: string): void }) {
  const { t, language, when } = useI18n();
  const [cancelling, setCancelling] = useState<Recovery | null>(null);
  return (
    <section aria-labelledby="recoveries-heading">
      <Heading level={2} id="recoveries-heading">{t('account.recoveries')}</Heading>
      <Table aria-label={t('account.recoveries')} className="table">
        <TableHeader>
          <Column isRowHeader>{t('account.reference')}</Column>
          <Column>{t('account.lost')}</Column>
          <Column>{t('account.state')}</Column>
          <Column>{t('account.started')}</Column>
          <Column>{t('account.takesEffect')}</Column>
          <Column>{t('recoveries.own.action')}</Column>
        </TableHeader>
        <TableBody items={workflows.map((w) => ({ ...w, id: `${w.reference ?? ''}-${w.created_at}` }))} dependencies={[language]} renderEmptyState={() => t('account.noRecovery')}>
          {(w) => (
            <Row id={w.id}>
              <Cell>{w.reference ?? '—'}{w.started_at_branch ? ` (${t('account.atBranch')})` : ''}</Cell>
              <Cell>{t(`approvals.lost.${w.lost}`)}</Cell>
              <Cell><span className={`badge ${w.cancellable ? 'badge-active' : 'badge-disabled'}`}>{w.blocked ? t('recoveries.own.blocked') : t(`approvals.state.${w.state}` as MessageKey)}</span></Cell>
              <Cell>{when(w.created_at)}</Cell>
              <Cell>{when(w.waiting_until ?? w.completed_at ?? w.ended_at ?? w.expires_at)}</Cell>
              <Cell>
                {w.cancellable && w.reference ? (
                  <Button variant="danger" onPress={() => setCancelling(w)} aria-label={t('recoveries.own.cancelOne', { reference: w.reference })}>{t('recoveries.own.cancel')}</Button>
                ) : null}
              </Cell>
            </Row>
          )}
        </TableBody>
      </Table>
      {workflows.some((w) => w.blocked) ? <p className="description">{t('recoveries.own.blockedNote')}</p> : null}
      {workflows.some((w) => w.started_at_branch && !w.blocked && w.ended_at === null) ? <p className="description">{t('recoveries.own.atBranchNote')}</p> : null}
      {cancelling ? <CancelDialog recovery={cancelling} onCancelled={onCancelled} onClose={() => setCancelling(null)} /> : null}
    </section>
  );
}

function CancelDialog({ recovery: r, onCancelled, onClose }: { recovery: Recovery; onCancelled(message: string): void; onClose(): void }) {
  const { t, when } = useI18n();
  const { call } = useSession();
  const reference = r.reference ?? '';
  const vars = { reference, lost: t(`approvals.lost.${r.lost}`), when: when(r.created_at) };
  const confirm = async (values: Record<string, string>) => {
    const notMe = values.not_me === 'yes';
    await call('POST', `/api/v1/auth/recoveries/${encodeURIComponent(reference)}/cancel`, { not_me: notMe });
    onCancelled(t(notMe ? 'recoveries.own.cancelledReported' : 'recoveries.own.cancelled', { reference }));
  };
  return (
    <ConfirmDialog title={t('recoveries.own.confirmTitle', vars)} allows={t('recoveries.own.confirmAllows', vars)} confirmLabel={t('recoveries.own.confirm')} variant="danger" onConfirm={confirm} onClose={onClose}>
      <div className="field">
        <Checkbox className="checkbox" name="not_me" value="yes" aria-describedby="not-me-help">
          {({ isSelected }) => <><span className="checkbox-box" aria-hidden="true">{isSelected ? '✓' : ''}</span>{t('recoveries.own.notMe')}</>}
        </Checkbox>
        <p id="not-me-help" className="description">{t('recoveries.own.notMeHelp')}</p>
      </div>
    </ConfirmDialog>
  );
}

function Resets({ resets }: { resets: ResetRequest[] }) {
  const { t, language, when } = useI18n();
  return (
    <section aria-labelledby="resets-heading">
      <Heading level={2} id="resets-heading">{t('account.resets')}</Heading>
      <Table aria-label={t('account.resets')} className="table">
        <TableHeader>
          <Column isRowHeader>{t('account.requested')}</Column>
          <Column>{t('account.state')}</Column>
          <Column>{t('account.reason')}</Column>
          <Column>{t('account.decided')}</Column>
        </TableHeader>
        <TableBody items={resets.map((r) => ({ ...r, id: r.request_id }))} dependencies={[language]} renderEmptyState={() => t('account.noReset')}>
          {(r) => (
            <Row id={r.id}>
              <Cell>{when(r.requested_at)}</Cell>
              <Cell><span className="badge badge-disabled">{t(`recoveries.own.reset.${r.status}` as MessageKey)}</span></Cell>
              <Cell>{r.reason}</Cell>
              <Cell>{r.decided_at ? `${when(r.decided_at)}${r.decision_note ? `: ${r.decision_note}` : ''}` : t('account.notDecided', { until: when(r.expires_at) })}</Cell>
            </Row>
          )}
        </TableBody>
      </Table>
    </section>
  );
}
