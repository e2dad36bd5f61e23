/**
 * What customers get from the FAQ's public search (GET /api/v1/faq/search) for a query: the
 * articles in the order the search ranks them, each with its snippet (the matched words marked),
 * how many matched in all, and whether the search had to correct the words (fuzzy, "did you mean").
 */
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { useI18n } from '../../../lib/i18n.js';
import { useSession } from '../../../lib/session.js';
import { Button, ErrorNotice, Field } from '../../../ui/forms.js';
import { CategorySelect } from './CategorySelect.js';
import { snippetParts, type FaqCategory, type SearchAnswer } from './types.js';

export function SearchPreview() {
  const { t } = useI18n();
  const { call } = useSession();
  const [category, setCategory] = useState<FaqCategory | ''>('');
  const [answer, setAnswer] = useState<SearchAnswer | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const onSubmit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const q = String(new FormData(e.currentTarget).get('q') ?? '').trim();
    if (q === '') return;
    setBusy(true);
    setError(null);
    try {
      setAnswer(await call<SearchAnswer>('GET', `/api/v1/faq/search?${new URLSearchParams({ q, limit: '10', ...(category ? { category } : {}) })}`));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="card search-preview" aria-labelledby="search-preview">
      <h2 id="search-preview">{t('content.search.title')}</h2>
      <p className="description">{t('content.search.intro')}</p>
      <Form className="filters" onSubmit={(e) => void onSubmit(e)} role="search" aria-labelledby="search-preview">
        <Field name="q" label={t('content.search.query')} isRequired maxLength={200} />
        <CategorySelect label={t('content.faq.category')} value={category} onChange={setCategory} any={t('content.search.anyCategory')} />
        <Button type="submit" isPending={busy}>{t('content.search.run')}</Button>
      </Form>
      <ErrorNotice error={error} />
      {answer ? (
        <div aria-live="polite">
          <p>{t(answer.total_matches === 0 ? 'content.search.noMatch' : 'content.search.count', { shown: answer.results.length, total: answer.total_matches })}
            {answer.match === 'fuzzy' ? ` ${t('content.search.fuzzy')}` : ''}
            {answer.did_you_mean ? ` ${t('content.search.didYouMean', { query: answer.did_you_mean })}` : ''}</p>
          <ol className="search-results" aria-label={t('content.search.results')}>
            {answer.results.map((hit, i) => (
              <li key={hit.id}>
                <p className="search-question"><span className="search-rank">{t('content.search.rank', { rank: i + 1 })}</span> {hit.question}</p>
                <p className="search-snippet">{snippetParts(hit.snippet).map((p, j) => (p.marked ? <mark key={j}>{p.text}</mark> : <span key={j}>{p.text}</span>))}</p>
                <p className="description">{t(`content.category.${hit.category}`)}</p>
              </li>
            ))}
          </ol>
        </div>
      ) : null}
    </section>
  );
}
