/**
 * A user's second factors (GET /api/v1/admin/users/{id}/factors, users.read): what the person has
 * enrolled, since when and when last used, for an operator before an MFA reset. A use of codes or
 * of push approval is known only while its code or request is kept, so for them "not in the last
 * N days", never "not since enrolment". Read-only: a reset is asked by the person and decided by
 * a second operator in the MFA resets queue.
 */
import { Cell, Column, Heading, Link, Row, Table, TableBody, TableHeader } from 'react-aria-components';
import { useApi } from '../../lib/data.js';
import { useI18n } from '../../lib/i18n.js';
import { useHref } from '../../lib/router.js';
import { useSession } from '../../lib/session.js';
import { ErrorNotice } from '../../ui/forms.js';
import { factorRows, notUsed, type FactorRow, type UserFactorsAnswer } from './factors.js';

export function UserFactors({ id, username }: { id: string; username: string }) {
  const { t, language, when } = useI18n();
  const { can } = useSession();
  const href = useHref();
  const read = useApi<UserFactorsAnswer>(`/api/v1/admin/users/${encodeURIComponent(id)}/factors`);
  const rows = read.data ? factorRows(read.data.factors) : null;
  const lastUsed = (r: FactorRow): string => {
    if (r.kind === 'questions') return '—';
    if (r.lastUsedAt) return when(r.lastUsedAt);
    const none = notUsed(r);
    return t(none.key, none.values);
  };

  return (
    <section aria-labelledby="factors-heading">
      <Heading level={2} id="factors-heading">{t('users.factors.heading')}</Heading>
      <ErrorNotice error={read.error} />
      <Table aria-label={t('users.factors.of', { username })} className="table">
        <TableHeader>
          <Column isRowHeader>{t('users.factors.factor')}</Column>
          <Column>{t('users.factors.enrolled')}</Column>
          <Column>{t('users.factors.lastUsed')}</Column>
          <Column>{t('users.factors.details')}</Column>
        </TableHeader>
        <TableBody items={rows ?? []} dependencies={[language]} renderEmptyState={() => (rows ? t('users.factors.none') : t('common.loading'))}>
          {(r) => (
            <Row id={r.id}>
              <Cell>{t(`users.factors.kind.${r.kind}`)}</Cell>
              <Cell>{when(r.enrolledAt)}</Cell>
              <Cell>{lastUsed(r)}</Cell>
              <Cell>{r.detail ? t(r.detail.key, r.detail.values.until ? { ...r.detail.values, until: when(String(r.detail.values.until)) } : r.detail.values) : '—'}</Cell>
            </Row>
          )}
        </TableBody>
      </Table>
      {read.data && read.data.factors.security_questions.questions.length > 0 ? (
        <>
          <p>{t('users.factors.questionsChosen', { count: read.data.factors.security_questions.count })}</p>
          <ul aria-label={t('users.factors.questionsOf', { username })}>
            {read.data.factors.security_questions.questions.map((q) => <li key={q}>{q}</li>)}
          </ul>
        </>
      ) : null}
      <p>
        {t('users.factors.resetNote')}{' '}
        {can('approve_mfa_reset') ? <Link href={href('mfa-resets')}>{t('users.factors.resetQueue')}</Link> : null}
      </p>
    </section>
  );
}
