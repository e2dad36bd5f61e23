/**
 * The notification templates (`/console/templates`, permission notifications.templates): each
 * template (the event it is sent for) with the languages it has, en, pt and fr; opening one edits
 * its languages. A template of the bank's own is added here in English, its fallback language.
 */
import { useState, type FormEvent } from 'react';
import { Cell, Column, Form, Heading, Link, Row, Table, TableBody, TableHeader } from 'react-aria-components';
import { useApi } from '../../../lib/data.js';
import { useI18n } from '../../../lib/i18n.js';
import { useHref, useRouter } from '../../../lib/router.js';
import { useSession } from '../../../lib/session.js';
import { Button, ErrorNotice, Field } from '../../../ui/forms.js';
import { TextAreaField } from './TextAreaField.js';
import { fieldProblems, TEMPLATE_LANGUAGES, TEMPLATES_PATH, type Template } from './types.js';

interface Family {
  name: string;
  named: boolean;
  rows: Template[];
}

function families(rows: readonly Template[]): Family[] {
  const byName = new Map<string, Family>();
  for (const r of rows) {
    const f = byName.get(r.name) ?? { name: r.name, named: r.named, rows: [] };
    f.rows.push(r);
    byName.set(r.name, f);
  }
  return [...byName.values()];
}

export function TemplatesScreen() {
  const { t, language } = useI18n();
  const href = useHref();
  const list = useApi<{ templates: Template[] }>(`${TEMPLATES_PATH}?channel=push`);
  const all = list.data ? families(list.data.templates) : null;
  return (
    <>
      <Heading level={1}>{t('content.nav.templates')}</Heading>
      <p>{t('content.templates.intro')}</p>
      <ErrorNotice error={list.error} />
      <Table aria-label={t('content.templates.list')} className="table">
        <TableHeader>
          <Column isRowHeader>{t('content.templates.name')}</Column>
          <Column>{t('content.templates.kind')}</Column>
          {TEMPLATE_LANGUAGES.map((l) => <Column key={l}>{t(`content.language.${l}`)}</Column>)}
        </TableHeader>
        <TableBody items={all ?? []} dependencies={[language]} renderEmptyState={() => (all ? t('content.templates.none') : t('common.loading'))}>
          {(f) => (
            <Row id={f.name}>
              <Cell><Link href={href('templates', f.name)}>{f.name}</Link></Cell>
              <Cell>{t(f.named ? 'content.templates.named' : 'content.templates.own')}</Cell>
              {TEMPLATE_LANGUAGES.map((l) => {
                const row = f.rows.find((r) => r.language === l);
                return <Cell key={l}>{row ? row.subject : <span className="badge badge-disabled">{t('content.templates.missing')}</span>}</Cell>;
              })}
            </Row>
          )}
        </TableBody>
      </Table>
      <NewTemplate />
    </>
  );
}

/** A template of the bank's own, in English first (every other language falls back to it). */
function NewTemplate() {
  const { t } = useI18n();
  const { call } = useSession();
  const { navigate } = useRouter();
  const href = useHref();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const onSubmit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = Object.fromEntries([...new FormData(e.currentTarget)].map(([k, v]) => [k, String(v)]));
    setBusy(true);
    setError(null);
    try {
      const created = await call<Template>('POST', TEMPLATES_PATH, { name: data.name?.trim(), language: 'en', subject: data.subject, message: data.message });
      navigate(href('templates', created.name));
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  const problems = fieldProblems(error);
  return (
    <section className="card" aria-labelledby="new-template">
      <h2 id="new-template">{t('content.templates.new')}</h2>
      <p className="description">{t('content.templates.newIntro')}</p>
      <ErrorNotice error={problems.subject || problems.message ? null : error} />
      <Form className="form" onSubmit={(e) => void onSubmit(e)} aria-labelledby="new-template">
        <Field name="name" label={t('content.templates.name')} description={t('content.templates.nameHint')} isRequired pattern="[A-Za-z][A-Za-z0-9_]{0,63}" autoComplete="off" />
        <Field name="subject" label={t('content.templates.subject')} isRequired isInvalid={problems.subject !== undefined} errorMessage={problems.subject} />
        <TextAreaField name="message" label={t('content.templates.message')} description={t('content.templates.messageHint', { example: '{amount}' })} isRequired isInvalid={problems.message !== undefined} errorMessage={problems.message} />
        <Button type="submit" isPending={busy}>{t('content.templates.add')}</Button>
      </Form>
    </section>
  );
}
