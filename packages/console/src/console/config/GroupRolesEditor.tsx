/**
 * The directory's group-role map as rows: a group (its full DN, or a short name under the groups'
 * base) and the roles it gives, comma-separated; rows are added and removed, and the server's
 * error for the map is said under them.
 */
import { useI18n } from '../../lib/i18n.js';
import { Button, Field } from '../../ui/forms.js';
import type { GroupRow } from './ldap-draft.js';

export function GroupRolesEditor({ rows, onChange, error }: { rows: GroupRow[]; onChange(rows: GroupRow[]): void; error?: string }) {
  const { t } = useI18n();
  const edit = (id: number, change: Partial<GroupRow>) => onChange(rows.map((r) => (r.id === id ? { ...r, ...change } : r)));
  const add = () => onChange([...rows, { id: Math.max(-1, ...rows.map((r) => r.id)) + 1, group: '', roles: '' }]);
  return (
    <fieldset aria-describedby={error ? 'group-roles-error' : undefined}>
      <legend>{t('config.ldap.groupRoles')}</legend>
      <p className="description">{t('config.edit.ldap.groupRolesHint')}</p>
      {rows.length === 0 ? <p>{t('config.none')}</p> : null}
      {rows.map((r, i) => (
        <div key={r.id} className="group-row">
          <Field label={t('config.edit.ldap.group', { n: i + 1 })} value={r.group} onChange={(group) => edit(r.id, { group })} autoComplete="off" isInvalid={error !== undefined} />
          <Field label={t('config.edit.ldap.roles', { n: i + 1 })} value={r.roles} onChange={(roles) => edit(r.id, { roles })} autoComplete="off" isInvalid={error !== undefined} />
          <Button variant="secondary" onPress={() => onChange(rows.filter((x) => x.id !== r.id))} aria-label={t('config.edit.ldap.removeGroup', { n: i + 1 })}>{t('config.edit.remove')}</Button>
        </div>
      ))}
      {error ? <p id="group-roles-error" className="field-error">{error}</p> : null}
      <Button variant="secondary" onPress={add}>{t('config.edit.ldap.addGroup')}</Button>
    </fieldset>
  );
}
