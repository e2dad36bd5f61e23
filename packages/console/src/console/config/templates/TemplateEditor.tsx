/**
 * One language of a template: its title and body, the placeholders it may use (each with a sample
 * value), the live preview of the draft with those samples, saving (PUT .../{id}) and deleting
 * (DELETE .../{id}, after a confirmation; the en of a named template is everyone's fallback and
 * has no delete).
 */
import { useMemo, useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { useI18n } from '../../../lib/i18n.js';
import { useSession } from '../../../lib/session.js';
import { Button, ErrorNotice, Field, Notice } from '../../../ui/forms.js';
import { ConfirmDialog } from '../../approvals/ConfirmDialog.js';
import { TextAreaField } from './TextAreaField.js';
import { fieldProblems, placeholdersOf, sampleOf, TEMPLATES_PATH, type Template } from './types.js';
import { usePreview } from './usePreview.js';

export function TemplateEditor({ template, onChanged }: { template: Template; onChanged(): void }) {
  const { t } = useI18n();
  const { call } = useSession();
  const [subject, setSubject] = useState(template.subject);
  const [message, setMessage] = useState(template.message);
  const [samples, setSamples] = useState<Record<string, string>>({});
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const [deleting, setDeleting] = useState(false);
  // A named template's callers send its declared variables only; one of the bank's own may use any.
  const variables = useMemo(() => (template.named ? template.allowed_placeholders : [...new Set([...template.allowed_placeholders, ...placeholdersOf(subject, message)])]), [template, subject, message]);
  const values = useMemo(() => Object.fromEntries(variables.map((v) => [v, samples[v] ?? sampleOf(v)])), [variables, samples]);
  const live = usePreview(template.id, subject, message, values);
  const problems = { ...fieldProblems(live.error), ...fieldProblems(saveError) };
  const language = t(`content.language.${template.language}`);

  const onSave = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    setSaving(true);
    setSaveError(null);
    setSaved(false);
    try {
      await call('PUT', `${TEMPLATES_PATH}/${encodeURIComponent(template.id)}`, { subject, message });
      setSaved(true);
    } catch (err) {
      setSaveError(err);
    } finally {
      setSaving(false);
    }
  };
  const edit = (set: (v: string) => void) => (v: string) => { set(v); setSaved(false); setSaveError(null); };

  return (
    <div className="template-editor">
      <Form className="form" onSubmit={(e) => void onSave(e)} aria-label={t('content.templates.editForm', { name: template.name, language })}>
        <Field label={t('content.templates.subject')} value={subject} onChange={edit(setSubject)} isRequired isInvalid={problems.subject !== undefined || subject.trim() === ''} errorMessage={problems.subject ?? t('content.required')} />
        <TextAreaField label={t('content.templates.message')} value={message} onChange={edit(setMessage)} isRequired isInvalid={problems.message !== undefined || message.trim() === ''} errorMessage={problems.message ?? t('content.required')} />
        {saved ? <Notice>{t('content.templates.saved', { language })}</Notice> : null}
        {fieldProblems(saveError).subject || fieldProblems(saveError).message ? null : <ErrorNotice error={saveError} />}
        <div className="actions">
          <Button type="submit" isPending={saving} isDisabled={subject.trim() === '' || message.trim() === ''}>{t('content.templates.save')}</Button>
          {template.named && template.language === 'en' ? null : <Button variant="danger" onPress={() => setDeleting(true)}>{t('content.templates.delete', { language })}</Button>}
        </div>
      </Form>
      <section className="template-side" aria-label={t('content.templates.variables')}>
        <h3>{t('content.templates.variables')}</h3>
        <p className="description">{t(template.named ? 'content.templates.variablesNamed' : 'content.templates.variablesOwn')}</p>
        <div className="template-samples">
          {variables.map((v) => <Field key={v} label={t('content.templates.sampleOf', { variable: `{${v}}` })} value={values[v] ?? ''} onChange={(x) => setSamples((s) => ({ ...s, [v]: x }))} />)}
        </div>
        <LivePreview state={live} />
      </section>
      {deleting ? (
        <ConfirmDialog title={t('content.templates.confirmDelete', { name: template.name, language })} allows={t('content.templates.deleteAllows', { language })}
          confirmLabel={t('content.delete')} variant="danger" onClose={() => setDeleting(false)}
          onConfirm={async () => { await call('DELETE', `${TEMPLATES_PATH}/${encodeURIComponent(template.id)}`); onChanged(); }} />
      ) : null}
    </div>
  );
}

function LivePreview({ state }: { state: ReturnType<typeof usePreview> }) {
  const { t } = useI18n();
  const shown = fieldProblems(state.error);
  return (
    <section className="push-preview" aria-label={t('content.templates.preview')} aria-busy={state.pending}>
      <h3>{t('content.templates.preview')}</h3>
      {state.preview && !state.error ? (
        <div className="push-card">
          <p className="push-title" data-testid="preview-title">{state.preview.title}</p>
          <p className="push-body" data-testid="preview-body">{state.preview.body}</p>
        </div>
      ) : null}
      {shown.subject || shown.message ? <p className="field-error">{t('content.templates.previewRefused')}</p> : <ErrorNotice error={state.error} />}
      {state.preview || state.error ? null : <p className="description">{state.pending ? t('common.loading') : t('content.templates.noPreview')}</p>}
    </section>
  );
}
