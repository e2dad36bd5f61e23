/**
 * Changing a user (PATCH /api/v1/admin/users/{id}, permission users.update): name, contacts, the
 * language of their notifications, roles and branches. Only what changed is sent; a change of
 * roles ends the user's sessions (the API says how many).
 */
import { useState, type FormEvent } from 'react';
import { Form, Label, ListBox, ListBoxItem, Popover, Select, SelectValue, Button as AriaButton } from 'react-aria-components';
import { useI18n } from '../../lib/i18n.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Field, Notice } from '../../ui/forms.js';
import { Choices, type Choice } from '../roles/Choices.js';
import { changesOf } from './changes.js';
import { splitNames, useEntityChoices, useRoleChoices } from './options.js';
import type { AdminUser } from './types.js';

interface Props {
  user: AdminUser;
  onSaved(user: AdminUser, sessionsEnded: number): void;
  onCancel(): void;
}

export function UserEditForm({ user, onSaved, onCancel }: Props) {
  const { t } = useI18n();
  const { call } = useSession();
  const [roles, setRoles] = useState<string[]>(user.roles);
  const [entities, setEntities] = useState<string[]>(user.entities);
  const [language, setLanguage] = useState(user.language ?? '');
  const [error, setError] = useState<unknown>(null);
  const [unchanged, setUnchanged] = useState(false);
  const [busy, setBusy] = useState(false);
  const roleChoices = useRoleChoices();
  const entityChoices = useEntityChoices(user.entities);

  const onSubmit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = Object.fromEntries(new FormData(e.currentTarget)) as Record<string, string>;
    const body = changesOf(user, { full_name: data.full_name ?? '', email: data.email ?? '', phone: data.phone ?? '', language, roles, entities });
    setError(null);
    setUnchanged(Object.keys(body).length === 0);
    if (Object.keys(body).length === 0) return;
    setBusy(true);
    try {
      const r = await call<{ user: AdminUser; sessions_ended: number }>('PATCH', `/api/v1/admin/users/${encodeURIComponent(user.id)}`, body);
      onSaved(r.user, r.sessions_ended);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card" aria-labelledby="user-edit-heading">
      <h2 id="user-edit-heading">{t('users.edit.heading')}</h2>
      <ErrorNotice error={error} />
      {unchanged ? <Notice>{t('users.edit.unchanged')}</Notice> : null}
      <Form className="form" onSubmit={(e) => void onSubmit(e)} aria-labelledby="user-edit-heading">
        <Field name="full_name" label={t('users.fullName')} defaultValue={user.full_name ?? ''} autoComplete="off" />
        <Field name="email" label={t('users.email')} type="email" defaultValue={user.email ?? ''} autoComplete="off" />
        <Field name="phone" label={t('users.phone')} description={t('newUser.phoneHint')} defaultValue={user.phone ?? ''} autoComplete="off" />
        <LanguageSelect value={language} onChange={setLanguage} />
        <NamesInput label={t('users.roles')} hint={t('newUser.rolesHint')} choices={roleChoices} value={roles} onChange={setRoles} />
        <NamesInput label={t('user.branches')} hint={t('users.edit.branchesHint')} choices={entityChoices} value={entities} onChange={setEntities} />
        <p className="description">{t('users.edit.rolesEndSessions')}</p>
        <div className="actions">
          <Button type="submit" isPending={busy}>{t('users.edit.save')}</Button>
          <Button variant="secondary" onPress={onCancel} isDisabled={busy}>{t('users.edit.cancel')}</Button>
        </div>
      </Form>
    </section>
  );
}

function LanguageSelect({ value, onChange }: { value: string; onChange(value: string): void }) {
  const { t } = useI18n();
  return (
    <Select className="field" selectedKey={value} onSelectionChange={(k) => onChange(String(k))}>
      <Label>{t('users.edit.language')}</Label>
      <AriaButton className="select-button"><SelectValue /><span aria-hidden="true">▾</span></AriaButton>
      <Popover className="popover">
        <ListBox className="listbox">
          <ListBoxItem id="" className="listbox-item">{t('users.edit.languageDefault')}</ListBoxItem>
          <ListBoxItem id="en" className="listbox-item">English</ListBoxItem>
          <ListBoxItem id="pt" className="listbox-item">Português</ListBoxItem>
          <ListBoxItem id="fr" className="listbox-item">Français</ListBoxItem>
        </ListBox>
      </Popover>
    </Select>
  );
}

/** Checkboxes when the choices can be read; names typed, comma-separated, when they cannot. */
function NamesInput({ label, hint, choices, value, onChange }: { label: string; hint: string; choices: Choice[] | null | undefined; value: string[]; onChange(v: string[]): void }) {
  const { t } = useI18n();
  const [text, setText] = useState(value.join(', '));
  if (choices === undefined) return <p>{t('common.loading')}</p>;
  if (choices === null) return <Field label={label} description={hint} value={text} onChange={(v) => { setText(v); onChange(splitNames(v)); }} />;
  return <Choices label={label} choices={choices} value={value} onChange={onChange} />;
}
