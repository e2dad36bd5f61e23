/**
 * Rate limits in force (permission config.manage, read-only): each group's limit per client and
 * per account with its window and variable, and the routes it counts
 * (GET /api/v1/admin/rate-limits). The variables change them, at a restart.
 */
import { Cell, Column, Heading, Row, Table, TableBody, TableHeader } from 'react-aria-components';
import { useApi } from '../../lib/data.js';
import { useI18n, type Translate } from '../../lib/i18n.js';
import { ErrorNotice } from '../../ui/forms.js';
import type { RateGroup, RateLimit } from './types.js';

/** `30 per minute`, `10 per 15 minutes`, `off`. */
export function describeLimit(limit: RateLimit | null, t: Translate): string {
  if (!limit) return t('config.rate.off');
  const w = limit.window_sec;
  const window = w % 3600 === 0 ? t('config.rate.hours', { count: w / 3600 }) : w % 60 === 0 ? t('config.rate.minutes', { count: w / 60 }) : t('config.rate.seconds', { count: w });
  return t('config.rate.per', { limit: limit.limit, window });
}

function Limit({ limit }: { limit: RateLimit | null }) {
  const { t } = useI18n();
  return (
    <>
      {describeLimit(limit, t)}
      {limit ? <><br /><code className="variable">{limit.variable}</code>{limit.source === 'configured' ? <> <span className="badge badge-configured">{t('config.rate.configured')}</span></> : null}</> : null}
    </>
  );
}

export function RateLimitsScreen() {
  const { t, language } = useI18n();
  const read = useApi<{ groups: RateGroup[] }>('/api/v1/admin/rate-limits');
  const groups = read.data?.groups ?? null;
  return (
    <>
      <Heading level={1}>{t('config.nav.rateLimits')}</Heading>
      <p>{t('config.rate.intro')}</p>
      <ErrorNotice error={read.error} />
      <Table aria-label={t('config.rate.table')} className="table">
        <TableHeader>
          <Column isRowHeader>{t('config.rate.group')}</Column>
          <Column>{t('config.rate.perClient')}</Column>
          <Column>{t('config.rate.perAccount')}</Column>
          <Column>{t('config.rate.routes')}</Column>
        </TableHeader>
        <TableBody items={(groups ?? []).map((g) => ({ id: g.group, ...g }))} dependencies={[language]} renderEmptyState={() => (groups ? t('config.none') : t('common.loading'))}>
          {(g) => (
            <Row id={g.id}>
              <Cell><code>{g.group}</code></Cell>
              <Cell><Limit limit={g.per_client} /></Cell>
              <Cell><Limit limit={g.per_account} /></Cell>
              <Cell>{g.routes.length > 0 ? <ul className="plain-list">{g.routes.map((r) => <li key={`${r.method} ${r.url}`}><code>{r.method} {r.url}</code></li>)}</ul> : t('config.none')}</Cell>
            </Row>
          )}
        </TableBody>
      </Table>
      <p className="description">{t('config.rate.howToChange')}</p>
    </>
  );
}
