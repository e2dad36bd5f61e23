/** A new branch (POST /api/v1/admin/entities): its code, which never changes, and its name. */
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { useI18n } from '../../lib/i18n.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Field } from '../../ui/forms.js';
import { ENTITY_CODE_PATTERN, type Entity } from './types.js';

export function NewEntityForm({ onCreated }: { onCreated(entity: Entity): void }) {
  const { t } = useI18n();
  const { call } = useSession();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const onSubmit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const data = Object.fromEntries(new FormData(form)) as Record<string, string>;
    setBusy(true);
    setError(null);
    try {
      onCreated(await call<Entity>('POST', '/api/v1/admin/entities', { code: (data.code ?? '').trim(), name: (data.name ?? '').trim() }));
      form.reset();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card" aria-labelledby="new-entity-heading">
      <h2 id="new-entity-heading">{t('entities.new')}</h2>
      <ErrorNotice error={error} />
      <Form className="filters" onSubmit={(e) => void onSubmit(e)} aria-labelledby="new-entity-heading">
        <Field name="code" label={t('entities.code')} description={t('entities.codeHint')} pattern={ENTITY_CODE_PATTERN} isRequired autoComplete="off" />
        <Field name="name" label={t('entities.name')} isRequired autoComplete="off" />
        <Button type="submit" isPending={busy}>{t('entities.create')}</Button>
      </Form>
    </section>
  );
}
