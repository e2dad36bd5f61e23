/**
 * One template (`/console/templates/{name}`): its languages side by side as tabs, en, pt and fr.
 * A language that exists is edited with a live preview (TemplateEditor); a missing one is created
 * from the English text (POST /api/v1/admin/notification-templates), which the operator rewords.
 */
import { useState, type FormEvent } from 'react';
import { Form, Heading, Link, Tab, TabList, TabPanel, Tabs } from 'react-aria-components';
import { useApi } from '../../../lib/data.js';
import { useI18n } from '../../../lib/i18n.js';
import { useHref } from '../../../lib/router.js';
import { useSession } from '../../../lib/session.js';
import { Button, ErrorNotice, Field } from '../../../ui/forms.js';
import { TemplateEditor } from './TemplateEditor.js';
import { TextAreaField } from './TextAreaField.js';
import { fieldProblems, TEMPLATE_LANGUAGES, TEMPLATES_PATH, type Template, type TemplateLanguage } from './types.js';

export function TemplateScreen({ name }: { name: string }) {
  const { t } = useI18n();
  const href = useHref();
  const family = useApi<{ templates: Template[] }>(`${TEMPLATES_PATH}?${new URLSearchParams({ name })}`);
  const rows = family.data?.templates ?? [];
  const en = rows.find((r) => r.language === 'en');
  // Chosen here, so that the tab stays when the family is read again after a change.
  const [tab, setTab] = useState<TemplateLanguage>('en');
  return (
    <>
      <p><Link href={href('templates')}>{t('content.templates.back')}</Link></p>
      <Heading level={1}>{name}</Heading>
      <p>{t(en?.named ? 'content.templates.namedIntro' : 'content.templates.ownIntro')}</p>
      <ErrorNotice error={family.error} />
      {family.data ? (
        <Tabs className="tabs" selectedKey={tab} onSelectionChange={(k) => setTab(k as TemplateLanguage)}>
          <TabList aria-label={t('content.templates.languages')} className="tab-list">
            {TEMPLATE_LANGUAGES.map((l) => (
              <Tab key={l} id={l} className="tab">
                {t(`content.language.${l}`)}{rows.some((r) => r.language === l) ? '' : ` (${t('content.templates.missing')})`}
              </Tab>
            ))}
          </TabList>
          {TEMPLATE_LANGUAGES.map((l) => {
            const row = rows.find((r) => r.language === l);
            return (
              <TabPanel key={l} id={l} className="tab-panel">
                {row ? <TemplateEditor key={row.id} template={row} onChanged={family.reload} /> : <CreateLanguage name={name} language={l} from={en} onCreated={family.reload} />}
              </TabPanel>
            );
          })}
        </Tabs>
      ) : <p>{t('common.loading')}</p>}
    </>
  );
}

/** A language the template lacks, created from the English text (the fallback until then). */
function CreateLanguage({ name, language, from, onCreated }: { name: string; language: TemplateLanguage; from?: Template; onCreated(): void }) {
  const { t } = useI18n();
  const { call } = useSession();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const languageName = t(`content.language.${language}`);
  const onSubmit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget);
    setBusy(true);
    setError(null);
    try {
      await call('POST', TEMPLATES_PATH, { name, language, subject: String(data.get('subject') ?? ''), message: String(data.get('message') ?? '') });
      onCreated();
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  const problems = fieldProblems(error);
  return (
    <Form className="form" onSubmit={(e) => void onSubmit(e)} aria-label={t('content.templates.create', { language: languageName })}>
      <p>{t(from ? 'content.templates.missingIntro' : 'content.templates.missingNoEn', { language: languageName })}</p>
      <ErrorNotice error={problems.subject || problems.message ? null : error} />
      <Field name="subject" label={t('content.templates.subject')} defaultValue={from?.subject ?? ''} isRequired isInvalid={problems.subject !== undefined} errorMessage={problems.subject} />
      <TextAreaField name="message" label={t('content.templates.message')} defaultValue={from?.message ?? ''} isRequired isInvalid={problems.message !== undefined} errorMessage={problems.message} />
      <Button type="submit" isPending={busy}>{t('content.templates.create', { language: languageName })}</Button>
    </Form>
  );
}
