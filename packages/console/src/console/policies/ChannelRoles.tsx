/** Who may use one channel (PUT /api/v1/admin/channels/{channel}): a list of roles, or anyone. */
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { useI18n } from '../../lib/i18n.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Field, Notice } from '../../ui/forms.js';
import { fieldErrors, type ChannelAccess } from './types.js';

export function ChannelRoles({ access, onSaved }: { access: ChannelAccess; onSaved(): void }) {
  const { t } = useI18n();
  const { call } = useSession();
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const onSubmit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const roles = String(new FormData(e.currentTarget).get('roles') ?? '').split(',').map((r) => r.trim()).filter((r) => r !== '');
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      await call('PUT', `/api/v1/admin/channels/${access.channel}`, { allowed_roles: roles.length ? roles : null });
      setSaved(true);
      onSaved();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const invalid = fieldErrors(error).other;
  return (
    <Form className="inline-form" onSubmit={(e) => void onSubmit(e)} aria-label={t('policies.whoMayUse', { channel: access.channel })}>
      <Field
        name="roles" label={t('policies.whoMayUse', { channel: access.channel })} defaultValue={(access.allowed_roles ?? []).join(', ')}
        description={access.default ? t('policies.rolesHintDefault') : t('policies.rolesHint')} isInvalid={invalid !== undefined} errorMessage={invalid}
      />
      <Button type="submit" variant="secondary" isPending={busy}>{t('policies.saveRoles')}</Button>
      {saved ? <Notice>{t('policies.rolesSaved')}</Notice> : null}
      {invalid === undefined ? <ErrorNotice error={error} /> : null}
    </Form>
  );
}
