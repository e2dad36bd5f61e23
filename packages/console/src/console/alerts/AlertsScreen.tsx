/**
 * Security alerts (permission alerts.manage): newest first (GET /api/v1/admin/alerts, keyset
 * pages), filtered by state and severity, each with its rule, user, when and state, linking to
 * the alert. With audit.read too, the chart of account locks and alerts raised over the last day.
 */
import { useState } from 'react';
import { Cell, Column, Heading, Link, Row, Table, TableBody, TableHeader } from 'react-aria-components';
import { useApi } from '../../lib/data.js';
import { useI18n } from '../../lib/i18n.js';
import { useHref } from '../../lib/router.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice } from '../../ui/forms.js';
import { FilterSelect } from '../audit/AuditScreen.js';
import { LOCK_CHART, TrendChart } from '../audit/TrendChart.js';
import type { AuditFilters } from '../audit/types.js';
import { useSummary } from '../audit/useSummary.js';
import { ALERT_SEVERITIES, ALERT_STATES, alertsPath, type AlertList } from './types.js';

const LAST_DAY: AuditFilters = {};

function LocksChart() {
  const { t } = useI18n();
  const chart = useSummary(LAST_DAY);
  return (
    <>
      <h2>{t('audit.locksTitle')}</h2>
      <ErrorNotice error={chart.error} />
      {chart.data ? <TrendChart data={chart.data} kind={LOCK_CHART} /> : null}
    </>
  );
}

export function AlertsScreen() {
  const { t, when, language } = useI18n();
  const { call, can } = useSession();
  const href = useHref();
  const [filters, setFilters] = useState({ state: '', severity: '' });
  const path = alertsPath(filters);
  const first = useApi<AlertList>(path);
  const [more, setMore] = useState<{ path: string; pages: AlertList[] }>({ path: '', pages: [] });
  const [error, setError] = useState<unknown>(null);
  const pages = [...(first.data ? [first.data] : []), ...(more.path === path ? more.pages : [])];
  const alerts = pages.flatMap((p) => p.alerts);
  const next = pages.at(-1)?.next_cursor ?? null;

  const loadMore = async (cursor: string) => {
    setError(null);
    try {
      const page = await call<AlertList>('GET', alertsPath(filters, cursor));
      setMore((m) => ({ path, pages: m.path === path ? [...m.pages, page] : [page] }));
    } catch (err) {
      setError(err);
    }
  };

  return (
    <>
      <Heading level={1}>{t('alerts.title')}</Heading>
      <div className="filters" role="group" aria-label={t('alerts.filters')}>
        <FilterSelect label={t('alerts.state')} any={t('alerts.anyState')} value={filters.state} onChange={(state) => setFilters((f) => ({ ...f, state }))} options={ALERT_STATES.map((s) => ({ id: s, name: t(`alerts.state.${s}`) }))} />
        <FilterSelect label={t('alerts.severity')} any={t('alerts.anySeverity')} value={filters.severity} onChange={(severity) => setFilters((f) => ({ ...f, severity }))} options={ALERT_SEVERITIES.map((s) => ({ id: s, name: t(`alerts.severity.${s}`) }))} />
      </div>
      <ErrorNotice error={error ?? first.error} />
      {pages[0] ? <p className="description">{t(pages[0].total_exact ? 'alerts.count' : 'alerts.countMore', { shown: alerts.length, total: pages[0].total })}</p> : null}
      <Table aria-label={t('alerts.list')} className="table">
        <TableHeader>
          <Column isRowHeader>{t('alerts.rule')}</Column>
          <Column>{t('alerts.severity')}</Column>
          <Column>{t('alerts.user')}</Column>
          <Column>{t('alerts.raised')}</Column>
          <Column>{t('alerts.state')}</Column>
        </TableHeader>
        <TableBody items={alerts} dependencies={[language]} renderEmptyState={() => (first.loading ? t('common.loading') : t('alerts.none'))}>
          {(a) => (
            <Row id={a.id}>
              <Cell><Link href={href('alerts', a.id)} aria-label={t('alerts.open', { rule: a.rule, when: when(a.created_at) })}><code>{a.rule}</code></Link></Cell>
              <Cell><span className={`badge badge-severity-${a.severity}`}>{t(`alerts.severity.${a.severity}`)}</span></Cell>
              <Cell>{a.user_id && can('users.read') ? <Link href={href('users', a.user_id)}>{a.username ?? a.user_id}</Link> : (a.username ?? a.user_id ?? t('alerts.noUser'))}</Cell>
              <Cell>{when(a.created_at)}</Cell>
              <Cell><span className={`badge badge-alert-${a.state}`}>{t(`alerts.state.${a.state}`)}</span></Cell>
            </Row>
          )}
        </TableBody>
      </Table>
      {next ? <Button variant="secondary" onPress={() => void loadMore(next)}>{t('alerts.more')}</Button> : null}
      {can('audit.read') ? <LocksChart /> : null}
    </>
  );
}
