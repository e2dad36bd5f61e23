/**
 * An FAQ article, new (`/console/faq/new`: POST /api/v1/admin/faqs) or edited (`/console/faq/{id}`:
 * PATCH .../{id}): the question, the answer (plain text, line breaks kept), the category, the
 * search keywords and the display order. A soft-deleted article says so and can be restored.
 */
import { useState, type FormEvent } from 'react';
import { Form, Heading, Link } from 'react-aria-components';
import { useApi } from '../../../lib/data.js';
import { useI18n } from '../../../lib/i18n.js';
import { useHref, useRouter } from '../../../lib/router.js';
import { useSession } from '../../../lib/session.js';
import { Button, ErrorNotice, Field, Notice } from '../../../ui/forms.js';
import { TextAreaField } from '../templates/TextAreaField.js';
import { CategorySelect } from './CategorySelect.js';
import { FAQS_PATH, type AdminFaq, type FaqCategory } from './types.js';

export function NewFaqScreen() {
  const { t } = useI18n();
  const href = useHref();
  return (
    <>
      <p><Link href={href('faq')}>{t('content.faq.back')}</Link></p>
      <Heading level={1}>{t('content.faq.new')}</Heading>
      <ArticleForm />
    </>
  );
}

export function FaqArticleScreen({ id }: { id: string }) {
  const { t } = useI18n();
  const href = useHref();
  const article = useApi<AdminFaq>(`${FAQS_PATH}/${encodeURIComponent(id)}`);
  return (
    <>
      <p><Link href={href('faq')}>{t('content.faq.back')}</Link></p>
      <Heading level={1}>{t('content.faq.edit')}</Heading>
      <ErrorNotice error={article.error} />
      {article.data ? <ArticleForm faq={article.data} /> : article.error ? null : <p>{t('common.loading')}</p>}
    </>
  );
}

function ArticleForm({ faq }: { faq?: AdminFaq }) {
  const { t } = useI18n();
  const { call } = useSession();
  const { navigate } = useRouter();
  const href = useHref();
  const [category, setCategory] = useState<FaqCategory>(faq?.category ?? 'general');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  const onSubmit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = Object.fromEntries([...new FormData(e.currentTarget)].map(([k, v]) => [k, String(v)]));
    const body = { question: data.question?.trim(), answer: data.answer?.trim(), category, keywords: data.keywords?.trim() ?? '', ...(data.order?.trim() ? { order: Number(data.order) } : {}) };
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      if (faq) {
        await call('PATCH', `${FAQS_PATH}/${encodeURIComponent(faq.id)}`, body);
        setSaved(true);
      } else {
        await call<AdminFaq>('POST', FAQS_PATH, body);
        navigate(href('faq'));
      }
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Form className="form form-wide" onSubmit={(e) => void onSubmit(e)} aria-label={t(faq ? 'content.faq.edit' : 'content.faq.new')}>
      {faq && !faq.is_active ? <p className="notice notice-error">{t('content.faq.isDeleted')}</p> : null}
      {saved ? <Notice>{t('content.faq.saved')}</Notice> : null}
      <ErrorNotice error={error} />
      <Field name="question" label={t('content.faq.question')} defaultValue={faq?.question ?? ''} isRequired minLength={5} maxLength={300} />
      <TextAreaField name="answer" label={t('content.faq.answer')} description={t('content.faq.answerHint')} defaultValue={faq?.answer ?? ''} isRequired rows={8} maxLength={10_000} />
      <CategorySelect label={t('content.faq.category')} value={category} onChange={(c) => { if (c) setCategory(c); }} />
      <Field name="keywords" label={t('content.faq.keywords')} description={t('content.faq.keywordsHint')} defaultValue={faq?.keywords ?? ''} maxLength={500} />
      <Field name="order" type="number" label={t('content.faq.order')} description={t('content.faq.orderHint')} defaultValue={faq ? String(faq.order) : ''} inputMode="numeric" />
      <Button type="submit" isPending={busy}>{t(faq ? 'content.faq.save' : 'content.faq.create')}</Button>
    </Form>
  );
}
