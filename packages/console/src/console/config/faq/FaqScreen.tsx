/**
 * The FAQ (`/console/faq`, permission faq.manage): one category's articles in display order,
 * soft-deleted ones too, narrowed by a text; each edited, moved up or down (POST
 * /api/v1/admin/faqs/reorder with the category's new order: buttons, so the keyboard does it),
 * deleted (a soft delete, after a confirmation) or restored. Below, what customers get from the
 * public search for a query (SearchPreview).
 */
import { useState } from 'react';
import { Cell, Column, Heading, Link, Row, SearchField, Input, Label, Table, TableBody, TableHeader } from 'react-aria-components';
import { useApi } from '../../../lib/data.js';
import { useI18n } from '../../../lib/i18n.js';
import { useHref } from '../../../lib/router.js';
import { useSession } from '../../../lib/session.js';
import { Button, ErrorNotice, Notice } from '../../../ui/forms.js';
import { ConfirmDialog } from '../../approvals/ConfirmDialog.js';
import { CategorySelect } from './CategorySelect.js';
import { ImportExport } from './ImportExport.js';
import { SearchPreview } from './SearchPreview.js';
import { FAQS_PATH, matches, moved, type AdminFaq, type FaqCategory } from './types.js';

export function FaqScreen() {
  const { t, language } = useI18n();
  const { call } = useSession();
  const href = useHref();
  const [category, setCategory] = useState<FaqCategory>('general');
  const [text, setText] = useState('');
  const list = useApi<{ faqs: AdminFaq[]; total: number }>(`${FAQS_PATH}?${new URLSearchParams({ category, page_size: '200' })}`);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const [deleting, setDeleting] = useState<AdminFaq | null>(null);
  const all = list.data?.faqs ?? null;
  const shown = all ? all.filter((f) => matches(f, text)) : null;

  const act = async (work: () => Promise<unknown>, done: string) => {
    setError(null);
    setNotice('');
    try {
      await work();
      setNotice(done);
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  const move = (faq: AdminFaq, delta: -1 | 1) => {
    const ids = (all ?? []).map((f) => f.id);
    return act(() => call('POST', `${FAQS_PATH}/reorder`, { category, ids: moved(ids, ids.indexOf(faq.id), delta) }), t('content.faq.moved', { question: faq.question }));
  };
  const restore = (faq: AdminFaq) => act(() => call('POST', `${FAQS_PATH}/${encodeURIComponent(faq.id)}/restore`, {}), t('content.faq.restored', { question: faq.question }));

  return (
    <>
      <div className="screen-head">
        <Heading level={1}>{t('content.nav.faq')}</Heading>
        <Link className="button button-primary" href={href('faq', 'new')}>{t('content.faq.new')}</Link>
      </div>
      <div className="filters" role="search" aria-label={t('content.faq.filters')}>
        <CategorySelect label={t('content.faq.category')} value={category} onChange={(c) => { if (c) setCategory(c); }} />
        <SearchField className="field" value={text} onChange={setText}>
          <Label>{t('content.faq.filter')}</Label>
          <Input />
        </SearchField>
      </div>
      {notice ? <Notice>{notice}</Notice> : null}
      <ErrorNotice error={error ?? list.error} />
      <Table aria-label={t('content.faq.list', { category: t(`content.category.${category}`) })} className="table">
        <TableHeader>
          <Column isRowHeader>{t('content.faq.question')}</Column>
          <Column>{t('content.faq.order')}</Column>
          <Column>{t('content.faq.status')}</Column>
          <Column>{t('content.faq.votes')}</Column>
          <Column>{t('content.faq.actions')}</Column>
        </TableHeader>
        <TableBody items={shown ?? []} dependencies={[language, all]} renderEmptyState={() => (shown ? t('content.faq.none') : t('common.loading'))}>
          {(f) => {
            const at = (all ?? []).indexOf(f);
            return (
              <Row id={f.id}>
                <Cell><Link href={href('faq', f.id)}>{f.question}</Link></Cell>
                <Cell>{f.order}</Cell>
                <Cell><span className={`badge ${f.is_active ? 'badge-active' : 'badge-deleted'}`}>{t(f.is_active ? 'content.faq.published' : 'content.faq.deleted')}</span></Cell>
                <Cell>{t('content.faq.voteCounts', { helpful: f.helpful_count, unhelpful: f.unhelpful_count })}</Cell>
                <Cell><ArticleActions faq={f} first={at <= 0} last={at >= (all ?? []).length - 1} onMove={(d) => void move(f, d)} onDelete={() => setDeleting(f)} onRestore={() => void restore(f)} /></Cell>
              </Row>
            );
          }}
        </TableBody>
      </Table>
      {deleting ? (
        <ConfirmDialog title={t('content.faq.confirmDelete')} allows={t('content.faq.deleteAllows', { question: deleting.question })} confirmLabel={t('content.delete')} variant="danger"
          onClose={() => setDeleting(null)}
          onConfirm={async () => { await call('DELETE', `${FAQS_PATH}/${encodeURIComponent(deleting.id)}`); setNotice(t('content.faq.deletedOne', { question: deleting.question })); list.reload(); }} />
      ) : null}
      <SearchPreview />
      <ImportExport onImported={list.reload} />
    </>
  );
}

/** An article's buttons, each named after the article (a screen reader lists them out of the table too). */
function ArticleActions({ faq, first, last, onMove, onDelete, onRestore }: { faq: AdminFaq; first: boolean; last: boolean; onMove(delta: -1 | 1): void; onDelete(): void; onRestore(): void }) {
  const { t } = useI18n();
  return (
    <div className="row-actions faq-actions">
      <Button variant="secondary" isDisabled={first} onPress={() => onMove(-1)} aria-label={t('content.faq.moveUp', { question: faq.question })}>↑</Button>
      <Button variant="secondary" isDisabled={last} onPress={() => onMove(1)} aria-label={t('content.faq.moveDown', { question: faq.question })}>↓</Button>
      {faq.is_active
        ? <Button variant="danger" onPress={onDelete} aria-label={t('content.faq.deleteOne', { question: faq.question })}>{t('content.delete')}</Button>
        : <Button onPress={onRestore} aria-label={t('content.faq.restoreOne', { question: faq.question })}>{t('content.faq.restore')}</Button>}
    </div>
  );
}
