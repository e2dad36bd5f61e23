/**
 * The FAQ's import and export: *Export* downloads every article, deleted ones too, as JSON
 * (GET /api/v1/admin/faqs/export, the shape the import takes); *Import* sends a file of that
 * shape, or a CSV with a header (POST /api/v1/admin/faqs/import): all or nothing, an item with an
 * `id` updating that article. A picked file is read in the page first and sent only once the
 * operator confirms it (its name, how many articles it holds, and that the import creates and
 * overwrites articles). A refused file lists each bad row and field in the server's words.
 */
import { useState } from 'react';
import { FileTrigger } from 'react-aria-components';
import { StrongroomError } from '../../../../../client/src/index.js';
import { download } from '../../../lib/download.js';
import { useI18n } from '../../../lib/i18n.js';
import { useSession } from '../../../lib/session.js';
import { Button, ErrorNotice, Notice } from '../../../ui/forms.js';
import { ConfirmDialog } from '../../approvals/ConfirmDialog.js';
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

/** The records of a CSV after its header (RFC 4180: a line break inside quotes is not a new record; blank lines are not records). */
export function csvRecords(csv: string): number {
  let records = 0;
  let quoted = false;
  let filled = false;
  for (const c of csv) {
    if (c === '"') quoted = !quoted;
    if (!quoted && (c === '\n' || c === '\r')) {
      if (filled) records++;
      filled = false;
    } else {
      filled = true;
    }
  }
  if (filled) records++;
  return Math.max(records - 1, 0);
}

/** How many articles a body holds: `faqs`' length, or the CSV's records; null when it cannot be told. */
function articlesIn(body: unknown): number | null {
  if (typeof body !== 'object' || body === null) return null;
  const b = body as { faqs?: unknown; csv?: unknown };
  if (Array.isArray(b.faqs)) return b.faqs.length;
  return typeof b.csv === 'string' ? csvRecords(b.csv) : null;
}

interface Picked {
  name: string;
  body: unknown;
  count: number | null;
}

export function ImportExport({ onImported }: { onImported(): void }) {
  const { t } = useI18n();
  const { call } = useSession();
  const [busy, setBusy] = useState<'import' | 'export' | null>(null);
  const [notice, setNotice] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [picked, setPicked] = useState<Picked | null>(null);
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
  // Picking a file only reads it: nothing is sent until the operator confirms.
  const onPick = async (files: FileList | null) => {
    const file = files?.[0];
    if (!file) return;
    setError(null);
    setNotice('');
    try {
      const body = await importBody(file);
      setPicked({ name: file.name, body, count: articlesIn(body) });
    } catch (err) {
      setError(err);
    }
  };
  const onImport = ({ body }: Picked) => {
    void run('import', async () => {
      const r = await call<{ created: number; updated: number }>('POST', `${FAQS_PATH}/import`, body);
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
        <FileTrigger acceptedFileTypes={['application/json', '.json', 'text/csv', '.csv']} onSelect={(files) => void onPick(files)}>
          <Button variant="secondary" isPending={busy === 'import'}>{t('content.faq.import')}</Button>
        </FileTrigger>
      </div>
      {picked ? (
        <ConfirmDialog
          title={t('content.faq.confirmImport', { name: picked.name })}
          allows={`${picked.count === null ? '' : `${t('content.faq.importHolds', { count: picked.count })} `}${t('content.faq.importAllows')}`}
          confirmLabel={t('content.faq.importConfirm')}
          variant="danger"
          // The dialog closes at once: the import's answer (or the rows it refused) is shown in this section.
          onConfirm={() => { onImport(picked); return Promise.resolve(); }}
          onClose={() => setPicked(null)}
        />
      ) : null}
    </section>
  );
}
