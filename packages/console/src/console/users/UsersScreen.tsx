/** Users: find them by username, name, email or phone, role and status, in keyset pages. */
import { useState, type FormEvent } from 'react';
import { Cell, Column, Form, Heading, Label, Link, ListBox, ListBoxItem, Popover, Row, Select, SelectValue, Table, TableBody, TableHeader, Button as AriaButton } from 'react-aria-components';
import { useApi } from '../../lib/data.js';
import { useI18n } from '../../lib/i18n.js';
import { useHref } from '../../lib/router.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Field } from '../../ui/forms.js';
import { STATUSES, type AdminUser } from './types.js';

interface Page {
  users: AdminUser[];
  next_cursor: string | null;
}

interface Filters {
  search: string;
  role: string;
  entity: string;
  status: string;
}

function query(filters: Filters, cursor: string | null): string {
  const q = new URLSearchParams({ limit: '25' });
  if (filters.search.trim() !== '') q.set('search', filters.search.trim());
  if (filters.role.trim() !== '') q.set('role', filters.role.trim());
  if (filters.entity.trim() !== '') q.set('entity', filters.entity.trim());
  if (filters.status !== '') q.set('status', filters.status);
  if (cursor) q.set('cursor', cursor);
  return `/api/v1/admin/users?${q}`;
}

export function UsersScreen() {
  const { t, language } = useI18n();
  const { call, can } = useSession();
  const href = useHref();
  const [filters, setFilters] = useState<Filters>({ search: '', role: '', entity: '', status: '' });
  const [status, setStatus] = useState('');
  const first = useApi<Page>(query(filters, null));
  // Later pages of the same search, fetched with "More users".
  const [more, setMore] = useState<{ path: string; pages: Page[] }>({ path: '', pages: [] });
  const [error, setError] = useState<unknown>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const pages = [...(first.data ? [first.data] : []), ...(more.path === query(filters, null) ? more.pages : [])];

  const loadMore = async (cursor: string) => {
    setLoadingMore(true);
    setError(null);
    try {
      const page = await call<Page>('GET', query(filters, cursor));
      const key = query(filters, null);
      setMore((m) => ({ path: key, pages: m.path === key ? [...m.pages, page] : [page] }));
    } catch (err) {
      setError(err);
    } finally {
      setLoadingMore(false);
    }
  };

  const onSearch = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget);
    setFilters({ search: String(data.get('search') ?? ''), role: String(data.get('role') ?? ''), entity: String(data.get('entity') ?? ''), status });
    first.reload();
  };
  const users = pages.flatMap((p) => p.users);
  const next = pages.at(-1)?.next_cursor ?? null;
  const loading = first.loading || loadingMore;

  return (
    <>
      <div className="screen-head">
        <Heading level={1}>{t('users.title')}</Heading>
        {can('users.create') ? <Link className="button button-primary" href={href('users', 'new')}>{t('nav.newUser')}</Link> : null}
      </div>
      <Form className="filters" onSubmit={onSearch} role="search" aria-label={t('users.searchLabel')}>
        <Field name="search" label={t('users.search')} description={t('users.searchHint')} />
        <Field name="role" label={t('users.role')} />
        <Field name="entity" label={t('user.branch')} />
        <Select className="field" selectedKey={status} onSelectionChange={(k) => setStatus(String(k))}>
          <Label>{t('users.status')}</Label>
          <AriaButton className="select-button"><SelectValue /><span aria-hidden="true">▾</span></AriaButton>
          <Popover className="popover">
            <ListBox className="listbox">
              <ListBoxItem id="" className="listbox-item">{t('users.anyStatus')}</ListBoxItem>
              {STATUSES.map((s) => <ListBoxItem key={s} id={s} className="listbox-item">{t(`status.${s}`)}</ListBoxItem>)}
            </ListBox>
          </Popover>
        </Select>
        <Button type="submit" isPending={loading}>{t('users.find')}</Button>
      </Form>
      <ErrorNotice error={error ?? first.error} />
      <Table aria-label={t('users.title')} className="table">
        <TableHeader>
          <Column isRowHeader>{t('users.username')}</Column>
          <Column>{t('users.fullName')}</Column>
          <Column>{t('users.email')}</Column>
          <Column>{t('users.roles')}</Column>
          <Column>{t('users.status')}</Column>
        </TableHeader>
        <TableBody items={users} dependencies={[language]} renderEmptyState={() => (loading ? t('common.loading') : t('users.none'))}>
          {(u) => (
            <Row id={u.id} href={href('users', u.id)}>
              <Cell>{u.username}</Cell>
              <Cell>{u.full_name ?? '—'}</Cell>
              <Cell>{u.email ?? '—'}</Cell>
              <Cell>{u.roles.join(', ')}</Cell>
              <Cell><span className={`badge badge-${u.status}`}>{t(`status.${u.status}`)}</span></Cell>
            </Row>
          )}
        </TableBody>
      </Table>
      {next ? <Button variant="secondary" isPending={loading} onPress={() => void loadMore(next)}>{t('users.more')}</Button> : null}
    </>
  );
}
