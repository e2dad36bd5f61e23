/**
 * Your data, downloaded (GET /api/v1/auth/gdpr/export through the SDK's downloadExport): one JSON
 * document, or a ZIP of one CSV file per kind of record (under transport encryption the ZIP comes
 * inside the sealed answer, its SHA-256 checked). The API wants a sign-in or a step-up in the last
 * 10 minutes: a step-up is asked when it says so; without a second factor, signing in again.
 */
import { useState } from 'react';
import { Heading } from 'react-aria-components';
import { download } from '../../lib/download.js';
import { useI18n } from '../../lib/i18n.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Notice } from '../../ui/forms.js';
import { useStepUp } from '../security/StepUp.js';
import { usePending } from '../security/submit.js';

export function ExportData() {
  const { t } = useI18n();
  const { client } = useSession();
  const pending = usePending();
  const stepUp = useStepUp();
  const [done, setDone] = useState<string | null>(null);
  const get = (format: 'json' | 'csv') => () => {
    setDone(null);
    void pending.run(() => stepUp.guard(async () => {
      const name = `strongroom-export-${new Date().toISOString().slice(0, 10)}`;
      if (format === 'json') {
        const document = await client.downloadExport('json');
        download(JSON.stringify(document, null, 2), `${name}.json`, 'application/json');
        setDone(t('account.exported', { file: `${name}.json` }));
      } else {
        const bytes = await client.downloadExport('csv');
        download(new Uint8Array(bytes), `${name}.zip`, 'application/zip');
        setDone(t('account.exported', { file: `${name}.zip` }));
      }
    }));
  };
  return (
    <section className="card" aria-labelledby="export-heading">
      <Heading level={2} id="export-heading">{t('account.exportHeading')}</Heading>
      <p>{t('account.exportIntro')}</p>
      <ErrorNotice error={pending.error} />
      {stepUp.panel}
      {done ? <Notice>{done}</Notice> : null}
      <div className="actions">
        <Button onPress={get('json')} isPending={pending.busy}>{t('account.exportJson')}</Button>
        <Button variant="secondary" onPress={get('csv')} isPending={pending.busy}>{t('account.exportCsv')}</Button>
      </div>
    </section>
  );
}
