/**
 * The FAQ's import and export: *Export* downloads every article, deleted ones too, as JSON
 * (GET /api/v1/admin/faqs/export, the shape the import takes); *Import* sends a file of that
 * shape, or a CSV with a header (POST /api/v1/admin/faqs/import): all or nothing, an item with an
 * `id` updating that article. A refused file lists each bad row and field in the server's words.
 */
import { useState } from 'react';
import { FileTrigger } from 'react-aria-components';
import { StrongroomError } from '../../../../../client/src/index.js';
import { useI18n } from '../../../lib/i18n.js';
import { useSession } from '../../../lib/session.js';
import { Button, ErrorNotice, Notice } from '../../../ui/forms.js';
import { download } from '../../audit/csv.js';
import { FAQS_PATH } from './types.js';

interface Problem {
  row: number;
  field: string;
  message: string;
}

const problemsOf = (err: unknown): Problem[] => (err instanceof StrongroomError && err.errorCode === 'FAQ_IMPORT_INVALID' && Array.isArray(err.details.problems) ? err.details.problems as Problem[] : []);

/** The import's body for a file: `{csv}` for a .csv, the JSON otherwise. */
async function importBody(file: File): Promise<unknown> {
  const text = await file.text();
  return /\.csv$/i.test(file.name) || file.type === 'text/csv' ? { csv: text } : JSON.parse(text) as unknown;
}

export function ImportExport({ onImported }: { onImported(): void }) {
  const { t } = useI18n();
  const { call } = useSession();
  const [busy, setBusy] = useState<'import' | 'export' | null>(null);
  const [notice, setNotice] = useState('');
  const [error, setError] = useState<unknown>(null);
  const run = async (which: 'import' | 'export', work: () => Promise<string>) => {
    setBusy(which);
    setError(null);
    setNotice('');
    try {
      setNotice(await work());
    } catch (err) {
      setError(err);
    } finally {
      setBusy(null);
    }
  };
  const onExport = () => run('export', async () => {
    const { faqs } = await call<{ faqs: unknown[] }>('GET', `${FAQS_PATH}/export?format=json&include_inactive=true`);
    download(`${JSON.stringify({ faqs }, null, 2)}\n`, 'faqs.json', 'application/json;charset=utf-8');
    return t('content.faq.exported', { count: faqs.length });
  });
  const onImport = (files: FileList | null) => {
    const file = files?.[0];
    if (!file) return;
    void run('import', async () => {
      const r = await call<{ created: number; updated: number }>('POST', `${FAQS_PATH}/import`, await importBody(file));
      onImported();
      return t('content.faq.imported', { created: r.created, updated: r.updated });
    });
  };
  const problems = problemsOf(error);
  return (
    <section className="card" aria-labelledby="faq-files">
      <h2 id="faq-files">{t('content.faq.files')}</h2>
      <p className="description">{t('content.faq.filesIntro')}</p>
      {notice ? <Notice>{notice}</Notice> : null}
      {error instanceof SyntaxError ? <p className="notice notice-error" role="alert">{t('content.faq.unreadable')}</p> : <ErrorNotice error={error} />}
      {problems.length > 0 ? <ul className="import-problems" aria-label={t('content.faq.problems')}>{problems.map((p, i) => <li key={i}>{t('content.faq.problem', { row: p.row, field: p.field, message: p.message })}</li>)}</ul> : null}
      <div className="actions">
        <Button variant="secondary" isPending={busy === 'export'} onPress={() => void onExport()}>{t('content.faq.export')}</Button>
        <FileTrigger acceptedFileTypes={['application/json', '.json', 'text/csv', '.csv']} onSelect={onImport}>
          <Button variant="secondary" isPending={busy === 'import'}>{t('content.faq.import')}</Button>
        </FileTrigger>
      </div>
    </section>
  );
}
