/**
 * Branches ("entities", permission entities.manage): every branch by code, fifty a page; a new
 * one; renaming one, deactivating it (it links no new user; those in it stay) or reactivating it.
 */
import { useState } from 'react';
import { Cell, Column, Heading, Row, Table, TableBody, TableHeader } from 'react-aria-components';
import { useApi } from '../../lib/data.js';
import { useI18n } from '../../lib/i18n.js';
import { Button, ErrorNotice, Field, Notice } from '../../ui/forms.js';
import { ConfirmDialog } from '../approvals/ConfirmDialog.js';
import { useSession } from '../../lib/session.js';
import { NewEntityForm } from './NewEntityForm.js';
import type { Entity, EntityPage } from './types.js';

const PAGE_SIZE = 50;

/** A rename or a change of state, confirmed in a dialog. */
type Change = { entity: Entity; what: 'rename' | 'state' };

export function EntitiesScreen() {
  const { t, language } = useI18n();
  const { call } = useSession();
  const [page, setPage] = useState(1);
  const list = useApi<EntityPage>(`/api/v1/admin/entities?page=${page}&page_size=${PAGE_SIZE}`);
  const [change, setChange] = useState<Change | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const entities = list.data?.entities ?? null;
  const pages = Math.max(1, Math.ceil((list.data?.total ?? 0) / PAGE_SIZE));

  const apply = async ({ entity, what }: Change, values: Record<string, string>) => {
    const body = what === 'rename' ? { name: values.name ?? '' } : { is_active: !entity.is_active };
    const after = await call<Entity>('PATCH', `/api/v1/admin/entities/${encodeURIComponent(entity.id)}`, body);
    setDone(what === 'rename' ? t('entities.renamed', { code: after.code }) : after.is_active ? t('entities.reactivated', { code: after.code }) : t('entities.deactivated', { code: after.code }));
    list.reload();
  };

  return (
    <>
      <Heading level={1}>{t('entities.title')}</Heading>
      {done ? <Notice>{done}</Notice> : null}
      <NewEntityForm onCreated={(e) => { setDone(t('entities.created', { code: e.code })); list.reload(); }} />
      <ErrorNotice error={list.error} />
      <Table aria-label={t('entities.title')} className="table">
        <TableHeader>
          <Column isRowHeader>{t('entities.code')}</Column>
          <Column>{t('entities.name')}</Column>
          <Column>{t('entities.state')}</Column>
          <Column>{t('entities.actions')}</Column>
        </TableHeader>
        <TableBody items={entities ?? []} dependencies={[language]} renderEmptyState={() => (entities ? t('entities.none') : t('common.loading'))}>
          {(e) => (
            <Row id={e.id}>
              <Cell>{e.code}</Cell>
              <Cell>{e.name}</Cell>
              <Cell><span className={`badge badge-${e.is_active ? 'active' : 'disabled'}`}>{e.is_active ? t('entities.active') : t('entities.inactive')}</span></Cell>
              <Cell>
                <div className="row-actions">
                  <Button variant="secondary" onPress={() => setChange({ entity: e, what: 'rename' })} aria-label={t('entities.renameOne', { code: e.code })}>{t('entities.rename')}</Button>
                  <Button variant={e.is_active ? 'danger' : 'primary'} onPress={() => setChange({ entity: e, what: 'state' })} aria-label={t(e.is_active ? 'entities.deactivateOne' : 'entities.reactivateOne', { code: e.code })}>
                    {e.is_active ? t('entities.deactivate') : t('entities.reactivate')}
                  </Button>
                </div>
              </Cell>
            </Row>
          )}
        </TableBody>
      </Table>
      {pages > 1 ? (
        <div className="actions">
          <Button variant="secondary" isDisabled={page <= 1} onPress={() => setPage(page - 1)}>{t('entities.previous')}</Button>
          <span>{t('entities.page', { page, pages })}</span>
          <Button variant="secondary" isDisabled={page >= pages} onPress={() => setPage(page + 1)}>{t('entities.next')}</Button>
        </div>
      ) : null}
      {change ? <ChangeDialog change={change} onConfirm={(values) => apply(change, values)} onClose={() => setChange(null)} /> : null}
    </>
  );
}

function ChangeDialog({ change: { entity, what }, onConfirm, onClose }: { change: Change; onConfirm(values: Record<string, string>): Promise<void>; onClose(): void }) {
  const { t } = useI18n();
  if (what === 'rename') {
    return (
      <ConfirmDialog title={t('entities.renameTitle', { code: entity.code })} allows={t('entities.renameAllows', { code: entity.code })} confirmLabel={t('entities.rename')} onConfirm={onConfirm} onClose={onClose}>
        <Field name="name" label={t('entities.name')} defaultValue={entity.name} isRequired autoComplete="off" />
      </ConfirmDialog>
    );
  }
  return entity.is_active
    ? <ConfirmDialog title={t('entities.deactivateTitle', { code: entity.code })} allows={t('entities.deactivateAllows', { code: entity.code })} confirmLabel={t('entities.deactivate')} variant="danger" onConfirm={onConfirm} onClose={onClose} />
    : <ConfirmDialog title={t('entities.reactivateTitle', { code: entity.code })} allows={t('entities.reactivateAllows', { code: entity.code })} confirmLabel={t('entities.reactivate')} onConfirm={onConfirm} onClose={onClose} />;
}
