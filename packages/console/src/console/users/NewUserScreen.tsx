/** Create a user: the temporary password is shown once (or, with email delivery set up, mailed to them). */
import { useState, type FormEvent } from 'react';
import { Form, Heading, Link } from 'react-aria-components';
import { useI18n } from '../../lib/i18n.js';
import { useHref } from '../../lib/router.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Field } from '../../ui/forms.js';
import type { AdminUser } from './types.js';

interface Created {
  user: AdminUser;
  delivery: 'email' | 'response';
  temporary_password?: string;
}

export function NewUserScreen() {
  const { t } = useI18n();
  const { call } = useSession();
  const href = useHref();
  const [created, setCreated] = useState<Created | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const onSubmit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = Object.fromEntries(new FormData(e.currentTarget)) as Record<string, string>;
    const body: Record<string, unknown> = {
      username: data.username?.trim(),
      roles: (data.roles ?? '').split(',').map((r) => r.trim()).filter((r) => r !== ''),
    };
    for (const field of ['full_name', 'email', 'phone'] as const) if (data[field]?.trim()) body[field] = data[field].trim();
    setBusy(true);
    setError(null);
    try {
      setCreated(await call<Created>('POST', '/api/v1/admin/users', body));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  if (created) {
    return (
      <>
        <Heading level={1}>{t('newUser.created', { username: created.user.username })}</Heading>
        {created.temporary_password ? (
          <div className="notice notice-success" role="status">
            <p>{t('newUser.temporaryPassword')}</p>
            <p><code className="secret" data-testid="temporary-password">{created.temporary_password}</code></p>
            <p>{t('newUser.shownOnce')}</p>
          </div>
        ) : <div className="notice notice-success" role="status"><p>{t('newUser.emailed')}</p></div>}
        <p className="actions">
          <Link className="button button-primary" href={href('users', created.user.id)}>{t('newUser.open')}</Link>
          <Button variant="secondary" onPress={() => setCreated(null)}>{t('newUser.another')}</Button>
        </p>
      </>
    );
  }
  return (
    <>
      <Heading level={1}>{t('nav.newUser')}</Heading>
      <ErrorNotice error={error} />
      <Form className="form" onSubmit={(e) => void onSubmit(e)} aria-label={t('nav.newUser')}>
        <Field name="username" label={t('users.username')} isRequired autoComplete="off" />
        <Field name="full_name" label={t('users.fullName')} autoComplete="off" />
        <Field name="email" label={t('users.email')} type="email" autoComplete="off" />
        <Field name="phone" label={t('users.phone')} description={t('newUser.phoneHint')} autoComplete="off" />
        <Field name="roles" label={t('users.roles')} description={t('newUser.rolesHint')} defaultValue="customer" isRequired />
        <Button type="submit" isPending={busy}>{t('newUser.create')}</Button>
      </Form>
    </>
  );
}
