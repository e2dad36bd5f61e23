/**
 * A role's form, to create one (POST /api/v1/admin/roles) or change one (PATCH .../roles/{name}),
 * permission roles.manage. The permissions are chosen from GET /api/v1/admin/permissions with what
 * each allows. The API grants only permissions the operator holds, so the others are shown, not
 * offered (one the role already has may still be taken away); a built-in role keeps its permissions.
 */
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { useI18n } from '../../lib/i18n.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Field } from '../../ui/forms.js';
import { Choices } from './Choices.js';
import { ROLE_NAME_PATTERN, type Permission, type Role } from './types.js';

interface Props {
  /** The role to change; absent: a new role. */
  role?: Role;
  permissions: readonly Permission[];
  onSaved(role: Role, usersSignedOut: number): void;
  onCancel(): void;
}

export function RoleForm({ role, permissions, onSaved, onCancel }: Props) {
  const { t } = useI18n();
  const { call, can } = useSession();
  const [chosen, setChosen] = useState<string[]>(role?.permissions ?? []);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const locked = role?.built_in ?? false;

  const onSubmit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = Object.fromEntries(new FormData(e.currentTarget)) as Record<string, string>;
    const description = (data.description ?? '').trim();
    setBusy(true);
    setError(null);
    try {
      if (role) {
        const body = { description, ...(locked ? {} : { permissions: chosen }) };
        const r = await call<{ role: Role; users_signed_out: number }>('PATCH', `/api/v1/admin/roles/${encodeURIComponent(role.name)}`, body);
        onSaved(r.role, r.users_signed_out);
      } else {
        onSaved(await call<Role>('POST', '/api/v1/admin/roles', { name: (data.name ?? '').trim(), description, permissions: chosen }), 0);
      }
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const choices = permissions.map((p) => {
    const held = can(p.name) || role?.permissions.includes(p.name) === true;
    return { id: p.name, label: p.name, description: p.description, ...(held ? {} : { note: t('roles.notHeld'), disabled: true }) };
  });
  const title = role ? t('roles.editTitle', { name: role.name }) : t('roles.new');
  return (
    <section className="card" aria-label={title}>
      <h2>{title}</h2>
      <ErrorNotice error={error} />
      <Form className="form form-wide" onSubmit={(e) => void onSubmit(e)} aria-label={title}>
        {role ? null : <Field name="name" label={t('roles.name')} description={t('roles.nameHint')} pattern={ROLE_NAME_PATTERN} isRequired autoComplete="off" />}
        <Field name="description" label={t('roles.description')} defaultValue={role?.description ?? ''} isRequired autoComplete="off" />
        <Choices
          label={t('roles.permissions')}
          description={locked ? t('roles.builtInPermissions') : t('roles.permissionsHint')}
          choices={choices}
          value={chosen}
          onChange={setChosen}
          isDisabled={locked}
        />
        <div className="actions">
          <Button type="submit" isPending={busy}>{role ? t('roles.save') : t('roles.create')}</Button>
          <Button variant="secondary" onPress={onCancel} isDisabled={busy}>{t('roles.cancel')}</Button>
        </div>
      </Form>
    </section>
  );
}
