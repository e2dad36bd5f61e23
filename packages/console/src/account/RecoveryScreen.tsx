/**
 * Your account recoveries and second-factor reset requests, and where each stands. The API has no
 * route that lists them for a signed-in person (a recovery's own status route is keyed by the
 * handle held by the device that started it), so the page reads them from your data export
 * (GET /api/v1/auth/gdpr/export: the recovery_workflows, factor_reset_requests and recovery_locks
 * sections), on request: it needs a recent sign-in or step-up and is logged as an export. Neither
 * is cancelled from here: the API offers no such route to a signed-in person (see the page's text).
 */
import { useState } from 'react';
import { Cell, Column, Heading, Row, Table, TableBody, TableHeader } from 'react-aria-components';
import { useI18n } from '../lib/i18n.js';
import { useSession } from '../lib/session.js';
import { Button, ErrorNotice } from '../ui/forms.js';
import { useStepUp } from './security/StepUp.js';
import { usePending } from './security/submit.js';

interface Workflow { reference: string; kind: string; state: string; started_at_branch: boolean; created_at: string; expires_at: string; waiting_until: string | null; completed_at: string | null; ended_at: string | null }
interface ResetRequest { status: string; reason: string; requested_at: string; expires_at: string; decided_at: string | null; decision_note: string | null }
interface Found { workflows: Workflow[]; resets: ResetRequest[]; lockedUntil: string | null }

export function RecoveryScreen() {
  const { t, when } = useI18n();
  const { client } = useSession();
  const pending = usePending();
  const stepUp = useStepUp();
  const [found, setFound] = useState<Found | null>(null);
  const read = () => void pending.run(() => stepUp.guard(async () => {
    const data = await client.downloadExport('json');
    const locks = (data.recovery_locks as { locked_until: string }[] | undefined) ?? [];
    setFound({
      workflows: [...((data.recovery_workflows as Workflow[] | undefined) ?? [])].reverse(),
      resets: [...((data.factor_reset_requests as ResetRequest[] | undefined) ?? [])].reverse(),
      lockedUntil: locks.map((l) => l.locked_until).find((until) => new Date(until).getTime() > Date.now()) ?? null,
    });
  }));
  return (
    <>
      <Heading level={1}>{t('account.navRecovery')}</Heading>
      <p>{t('account.recoveryIntro')}</p>
      <ul>
        <li>{t('account.recoveryNotMe')}</li>
        <li>{t('account.recoveryOwn')}</li>
        <li>{t('account.resetDecided')}</li>
      </ul>
      <ErrorNotice error={pending.error} />
      {stepUp.panel}
      <div className="actions">
        <Button onPress={read} isPending={pending.busy}>{t(found ? 'account.recoveryReadAgain' : 'account.recoveryRead')}</Button>
      </div>
      {found?.lockedUntil ? <p role="status">{t('account.recoveryLocked', { until: when(found.lockedUntil) })}</p> : null}
      {found ? <Workflows workflows={found.workflows} /> : null}
      {found ? <Resets resets={found.resets} /> : null}
    </>
  );
}

function Workflows({ workflows }: { workflows: Workflow[] }) {
  const { t, language, when } = useI18n();
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
        </TableHeader>
        <TableBody items={workflows.map((w) => ({ ...w, id: w.reference }))} dependencies={[language]} renderEmptyState={() => t('account.noRecovery')}>
          {(w) => (
            <Row id={w.id}>
              <Cell>{w.reference}{w.started_at_branch ? ` (${t('account.atBranch')})` : ''}</Cell>
              <Cell>{w.kind}</Cell>
              <Cell><span className="badge badge-disabled">{w.state}</span></Cell>
              <Cell>{when(w.created_at)}</Cell>
              <Cell>{when(w.waiting_until ?? w.completed_at ?? w.ended_at ?? w.expires_at)}</Cell>
            </Row>
          )}
        </TableBody>
      </Table>
    </section>
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
        <TableBody items={resets.map((r) => ({ ...r, id: r.requested_at }))} dependencies={[language]} renderEmptyState={() => t('account.noReset')}>
          {(r) => (
            <Row id={r.id}>
              <Cell>{when(r.requested_at)}</Cell>
              <Cell><span className="badge badge-disabled">{r.status}</span></Cell>
              <Cell>{r.reason}</Cell>
              <Cell>{r.decided_at ? `${when(r.decided_at)}${r.decision_note ? `: ${r.decision_note}` : ''}` : t('account.notDecided', { until: when(r.expires_at) })}</Cell>
            </Row>
          )}
        </TableBody>
      </Table>
    </section>
  );
}
