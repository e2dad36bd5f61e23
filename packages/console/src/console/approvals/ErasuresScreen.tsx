/**
 * Erasure requests (permission gdpr.read): the people who asked, signed in with their password,
 * to be forgotten, soonest due first (GET /api/v1/admin/gdpr/erasures). The route answers only
 * the account's id, when it was asked, when it is due and any legal hold: the account's name is
 * read from the users' route when the operator may read users, never from this one. A hold
 * (POST .../{id}/hold with a reason, permission gdpr.hold) suspends the erasure until it is
 * released (.../release), when it goes ahead at its date, or at the job's next run if that passed.
 * Both dialogs name the account; releasing, which starts an erasure that cannot be undone, also
 * names the hold's reason, who placed it and when. The route answers the soonest due first, at
 * most `limit` (100 by default, 500 at most, no cursor): *Show more* asks for 100 more, and a
 * full list says that more are pending.
 */
import { useState } from 'react';
import { Cell, Column, Heading, Link, Row, Table, TableBody, TableHeader } from 'react-aria-components';
import { useKept } from '../../account/kept.js';
import { useApi } from '../../lib/data.js';
import { useI18n } from '../../lib/i18n.js';
import { useHref } from '../../lib/router.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Field, Notice } from '../../ui/forms.js';
import { ConfirmDialog } from './ConfirmDialog.js';

export interface PendingErasure {
  id: string;
  user_id: string;
  requested_at: string;
  erase_after: string;
  hold: { reason: string; since: string; by: string | null } | null;
}

/** A user by their uuid: the username (a link to their page) for an operator who may read users, the id otherwise. */
export function UserName({ id }: { id: string }) {
  const { can } = useSession();
  return can('users.read') ? <LookedUp id={id} /> : <span className="user-id">{id}</span>;
}

function LookedUp({ id }: { id: string }) {
  const href = useHref();
  const user = useApi<{ user: { username: string } }>(`/api/v1/admin/users/${encodeURIComponent(id)}`);
  return <Link href={href('users', id)}>{user.data?.user.username ?? id}</Link>;
}

/** The list's first page and its step (the route's default), and the most it gives (its `limit` maximum). */
const PAGE = 100;
const MOST = 500;

interface Deciding {
  erasure: PendingErasure;
  decision: 'hold' | 'release';
}

export function ErasuresScreen() {
  const { t, language, when } = useI18n();
  const { call, can } = useSession();
  const [limit, setLimit] = useState(PAGE);
  const list = useApi<{ erasures: PendingErasure[] }>(`/api/v1/admin/gdpr/erasures?limit=${limit}`);
  const [deciding, setDeciding] = useState<Deciding | null>(null);
  const [done, setDone] = useState<string | null>(null);
  // While a longer list (or the list after a decision) is read, the rows already shown stay.
  const erasures = useKept(list.data?.erasures) ?? null;
  const full = erasures !== null && erasures.length >= limit;
  const [now] = useState(Date.now); // when the screen opened: a date before it has passed
  const due = (e: PendingErasure) => (new Date(e.erase_after).getTime() <= now ? t('queues.erasure.dueNow', { when: when(e.erase_after) }) : when(e.erase_after));

  const decide = async ({ erasure, decision }: Deciding, values: Record<string, string>) => {
    const path = `/api/v1/admin/gdpr/erasures/${encodeURIComponent(erasure.id)}/${decision}`;
    await call('POST', path, decision === 'hold' ? { reason: values.reason } : {});
    setDone(t(decision === 'hold' ? 'queues.erasure.held' : 'queues.erasure.released'));
    list.reload();
  };

  return (
    <>
      <Heading level={1}>{t('queues.nav.erasures')}</Heading>
      <p>{t('queues.erasure.intro')}</p>
      <ErrorNotice error={list.error} />
      {done ? <Notice>{done}</Notice> : null}
      <Table aria-label={t('queues.erasure.queue')} className="table">
        <TableHeader>
          <Column isRowHeader>{t('queues.erasure.account')}</Column>
          <Column>{t('queues.erasure.asked')}</Column>
          <Column>{t('queues.erasure.due')}</Column>
          <Column>{t('queues.erasure.state')}</Column>
          <Column>{t('queues.erasure.action')}</Column>
        </TableHeader>
        <TableBody items={erasures ?? []} dependencies={[language, done]} renderEmptyState={() => (erasures ? t('queues.erasure.none') : t('common.loading'))}>
          {(e) => (
            <Row id={e.id}>
              <Cell><UserName id={e.user_id} /></Cell>
              <Cell>{when(e.requested_at)}</Cell>
              <Cell>{e.hold ? t('queues.erasure.suspended', { when: due(e) }) : due(e)}</Cell>
              <Cell>{e.hold ? <Hold hold={e.hold} /> : t('queues.erasure.pending')}</Cell>
              <Cell>
                {can('gdpr.hold') ? (
                  <div className="row-actions">
                    {e.hold
                      ? <Button variant="secondary" onPress={() => setDeciding({ erasure: e, decision: 'release' })} aria-label={t('queues.erasure.releaseOne', { when: when(e.requested_at) })}>{t('queues.erasure.release')}</Button>
                      : <Button variant="danger" onPress={() => setDeciding({ erasure: e, decision: 'hold' })} aria-label={t('queues.erasure.holdOne', { when: when(e.requested_at) })}>{t('queues.erasure.hold')}</Button>}
                  </div>
                ) : '—'}
              </Cell>
            </Row>
          )}
        </TableBody>
      </Table>
      {full ? (
        <div className="actions">
          <p className="description" role="status">{t(limit < MOST ? 'queues.erasure.morePending' : 'queues.erasure.mostShown', { count: limit })}</p>
          {limit < MOST ? <Button variant="secondary" isPending={list.loading} onPress={() => setLimit((l) => Math.min(l + PAGE, MOST))}>{t('queues.erasure.showMore')}</Button> : null}
        </div>
      ) : null}
      {deciding ? <ErasureDialog deciding={deciding} due={due(deciding.erasure)} onConfirm={(values) => decide(deciding, values)} onClose={() => setDeciding(null)} /> : null}
    </>
  );
}

function Hold({ hold }: { hold: NonNullable<PendingErasure['hold']> }) {
  const { t, when } = useI18n();
  return (
    <>
      <strong>{t('queues.erasure.heldSince', { when: when(hold.since) })}</strong>
      {hold.by ? <> {t('queues.erasure.heldBy')} <UserName id={hold.by} /></> : null}
      <span className="their-words">{hold.reason}</span>
    </>
  );
}

function ErasureDialog({ deciding: { erasure, decision }, due, onConfirm, onClose }: { deciding: Deciding; due: string; onConfirm(values: Record<string, string>): Promise<void>; onClose(): void }) {
  const { t, when } = useI18n();
  const { hold } = erasure;
  if (decision === 'release') {
    // The erasure this starts cannot be undone: the dialog names the account and the hold being lifted.
    return (
      <ConfirmDialog title={t('queues.erasure.confirmRelease')} allows={t('queues.erasure.allowsRelease', { due })} confirmLabel={t('queues.erasure.release')} variant="danger" onConfirm={onConfirm} onClose={onClose}>
        <dl className="facts">
          <dt>{t('queues.erasure.account')}</dt><dd><UserName id={erasure.user_id} /></dd>
          <dt>{t('queues.erasure.asked')}</dt><dd>{when(erasure.requested_at)}</dd>
          {hold ? (
            <>
              <dt>{t('queues.erasure.holdReason')}</dt><dd className="their-words">{hold.reason}</dd>
              <dt>{t('queues.erasure.placedBy')}</dt><dd>{hold.by ? <UserName id={hold.by} /> : t('queues.erasure.placedByUnknown')}</dd>
              <dt>{t('queues.erasure.placedOn')}</dt><dd>{when(hold.since)}</dd>
            </>
          ) : null}
        </dl>
      </ConfirmDialog>
    );
  }
  return (
    <ConfirmDialog title={t('queues.erasure.confirmHold')} allows={t('queues.erasure.allowsHold', { due })} confirmLabel={t('queues.erasure.hold')} variant="danger" onConfirm={onConfirm} onClose={onClose}>
      <dl className="facts">
        <dt>{t('queues.erasure.account')}</dt><dd><UserName id={erasure.user_id} /></dd>
        <dt>{t('queues.erasure.asked')}</dt><dd>{when(erasure.requested_at)}</dd>
      </dl>
      <Field name="reason" label={t('queues.erasure.holdReason')} description={t('queues.erasure.holdReasonHint')} isRequired minLength={3} maxLength={500} autoComplete="off" />
    </ConfirmDialog>
  );
}
