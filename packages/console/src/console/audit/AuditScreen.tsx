/**
 * The audit log: filters (user, event, status, channel, country, time range), the entries newest
 * first in keyset pages (the cursor, never offsets), an export of everything the filters match
 * to CSV (fetched page by page through the API, built in the page), and charts over time by
 * channel of sign-ins and failures, and of account locks and security alerts (counted by the
 * server: GET /api/v1/admin/audit/summary).
 */
import { useState, type FormEvent } from 'react';
import { Cell, Column, Form, Heading, Label, ListBox, ListBoxItem, Popover, Row, Select, SelectValue, Table, TableBody, TableHeader, Button as AriaButton } from 'react-aria-components';
import { useApi } from '../../lib/data.js';
import { download } from '../../lib/download.js';
import { useI18n } from '../../lib/i18n.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Field, Notice } from '../../ui/forms.js';
import { auditCsv } from './csv.js';
import { LOCK_CHART, SIGN_IN_CHART, TrendChart } from './TrendChart.js';
import { AUDIT_CHANNELS, AUDIT_STATUSES, auditPath, countryOf, fetchAll, type AuditEntry, type AuditFilters, type AuditPage } from './types.js';
import { useSummary } from './useSummary.js';

const PAGE_SIZE = 50;
/** The most entries an export reads (page after page of 200). */
const EXPORT_CAP = 10_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function FilterSelect({ label, any, value, options, onChange }: { label: string; any: string; value: string; options: readonly { id: string; name: string }[]; onChange(v: string): void }) {
  return (
    <Select className="field" selectedKey={value} onSelectionChange={(k) => onChange(String(k))}>
      <Label>{label}</Label>
      <AriaButton className="select-button"><SelectValue /><span aria-hidden="true">▾</span></AriaButton>
      <Popover className="popover">
        <ListBox className="listbox">
          <ListBoxItem id="" className="listbox-item">{any}</ListBoxItem>
          {options.map((o) => <ListBoxItem key={o.id} id={o.id} className="listbox-item">{o.name}</ListBoxItem>)}
        </ListBox>
      </Popover>
    </Select>
  );
}

const isoOf = (local: string): string | undefined => (local.trim() === '' ? undefined : new Date(local).toISOString());

export function AuditScreen() {
  const { t, when, language } = useI18n();
  const { call, can } = useSession();
  const [status, setStatus] = useState('');
  const [channel, setChannel] = useState('');
  const [filters, setFilters] = useState<AuditFilters>({});
  const firstPath = auditPath(filters, PAGE_SIZE);
  const firstPage = useApi<AuditPage>(firstPath);
  // Later pages of the same filters, fetched by cursor with "More entries".
  const [more, setMore] = useState<{ path: string; pages: AuditPage[] }>({ path: '', pages: [] });
  const [loadingMore, setLoadingMore] = useState(false);
  const [exporting, setExporting] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const chart = useSummary(filters);
  const pages = [...(firstPage.data ? [firstPage.data] : []), ...(more.path === firstPath ? more.pages : [])];
  const loading = firstPage.loading || loadingMore;

  const loadMore = async (cursor: string) => {
    setLoadingMore(true);
    setError(null);
    try {
      const page = await call<AuditPage>('GET', auditPath(filters, PAGE_SIZE, cursor));
      setMore((m) => ({ path: firstPath, pages: m.path === firstPath ? [...m.pages, page] : [page] }));
    } catch (err) {
      setError(err);
    } finally {
      setLoadingMore(false);
    }
  };

  /** The user field: a user id as it is, a username looked up (with users.read). */
  const resolveUser = async (text: string): Promise<string | undefined | null> => {
    if (text === '') return undefined;
    if (UUID.test(text)) return text;
    if (!can('users.read')) return null;
    // The search matches parts of names: page through it (ordered by username) until the exact one.
    let cursor: string | null = null;
    for (let pages = 0; pages < 40; pages++) {
      const q = new URLSearchParams({ search: text, limit: '100', ...(cursor ? { cursor } : {}) });
      const found: { users: { id: string; username: string }[]; next_cursor: string | null } = await call('GET', `/api/v1/admin/users?${q}`);
      const hit = found.users.find((u) => u.username.toLowerCase() === text.toLowerCase());
      if (hit) return hit.id;
      cursor = found.next_cursor;
      if (!cursor) break;
    }
    return null;
  };

  const onSearch = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget);
    const text = (name: string) => String(data.get(name) ?? '').trim();
    setNotice('');
    try {
      const userId = await resolveUser(text('user'));
      if (userId === null) {
        setNotice(t('audit.noSuchUser', { user: text('user') }));
        return;
      }
      setFilters({
        userId, eventType: text('event').toUpperCase().replace(/[\s-]+/g, '_') || undefined, status: status || undefined, channel: channel || undefined,
        country: text('country').toUpperCase() || undefined, from: isoOf(text('from')), to: isoOf(text('to')),
      });
      firstPage.reload();
    } catch (err) {
      setError(err);
    }
  };

  const onExport = async () => {
    setExporting(true);
    setError(null);
    try {
      const { entries, complete } = await fetchAll(call, filters, EXPORT_CAP);
      download(auditCsv(entries), `audit-${new Date().toISOString().slice(0, 19).replace(/:/g, '-')}.csv`);
      setNotice(complete ? t('audit.exported', { count: entries.length }) : t('audit.exportedPartial', { count: entries.length }));
    } catch (err) {
      setError(err);
    } finally {
      setExporting(false);
    }
  };

  const entries: AuditEntry[] = pages.flatMap((p) => p.entries);
  const next = pages.at(-1)?.next_cursor ?? null;
  const first = pages[0];
  return (
    <>
      <Heading level={1}>{t('audit.title')}</Heading>
      <Form className="filters" onSubmit={(e) => void onSearch(e)} role="search" aria-label={t('audit.filters')}>
        <Field name="user" label={t('audit.user')} description={t('audit.userHint')} />
        <Field name="event" label={t('audit.event')} description={t('audit.eventHint')} />
        <FilterSelect label={t('audit.status')} any={t('audit.anyStatus')} value={status} onChange={setStatus} options={AUDIT_STATUSES.map((s) => ({ id: s, name: t(`audit.status.${s}`) }))} />
        <FilterSelect label={t('audit.channel')} any={t('audit.anyChannel')} value={channel} onChange={setChannel} options={AUDIT_CHANNELS.map((c) => ({ id: c, name: c }))} />
        <Field name="country" label={t('audit.country')} description={t('audit.countryHint')} maxLength={2} />
        <Field name="from" type="datetime-local" label={t('audit.from')} />
        <Field name="to" type="datetime-local" label={t('audit.to')} />
        <Button type="submit" isPending={loading}>{t('audit.find')}</Button>
      </Form>
      {notice ? <Notice>{notice}</Notice> : null}
      <ErrorNotice error={error ?? firstPage.error ?? chart.error} />
      <h2>{t('audit.chartTitle')}</h2>
      {chart.data ? <TrendChart data={chart.data} kind={SIGN_IN_CHART} /> : chart.error ? null : <p>{t('common.loading')}</p>}
      <h2>{t('audit.locksTitle')}</h2>
      {chart.data ? <TrendChart data={chart.data} kind={LOCK_CHART} /> : chart.error ? null : <p>{t('common.loading')}</p>}
      <div className="screen-head">
        <h2>{t('audit.entries')}</h2>
        <Button variant="secondary" isPending={exporting} onPress={() => void onExport()}>{t('audit.export')}</Button>
      </div>
      {first ? <p className="description">{t(first.total_exact ? 'audit.count' : 'audit.countMore', { shown: entries.length, total: first.total })}</p> : null}
      <Table aria-label={t('audit.entries')} className="table">
        <TableHeader>
          <Column isRowHeader>{t('audit.time')}</Column>
          <Column>{t('audit.event')}</Column>
          <Column>{t('audit.user')}</Column>
          <Column>{t('audit.status')}</Column>
          <Column>{t('audit.channel')}</Column>
          <Column>{t('audit.country')}</Column>
          <Column>{t('audit.ip')}</Column>
        </TableHeader>
        <TableBody items={entries} dependencies={[language]} renderEmptyState={() => (loading ? t('common.loading') : t('audit.none'))}>
          {(e) => (
            <Row id={e.audit_id}>
              <Cell>{when(e.timestamp)}</Cell>
              <Cell><code>{e.event_type}</code></Cell>
              <Cell>{e.username ?? e.user_id ?? '—'}</Cell>
              <Cell><span className={`badge badge-audit-${e.status.toLowerCase()}`}>{t(AUDIT_STATUSES.includes(e.status as never) ? `audit.status.${e.status as (typeof AUDIT_STATUSES)[number]}` : 'audit.status.other')}</span></Cell>
              <Cell>{e.channel ?? '—'}</Cell>
              <Cell>{countryOf(e) === 'internal' ? t('audit.internal') : (countryOf(e) ?? '—')}</Cell>
              <Cell>{e.ip_address ?? '—'}</Cell>
            </Row>
          )}
        </TableBody>
      </Table>
      {next ? <Button variant="secondary" isPending={loading} onPress={() => void loadMore(next)}>{t('audit.more')}</Button> : null}
    </>
  );
}
