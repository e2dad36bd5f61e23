/**
 * What the LDAP and SAML forms share: the refusal's field errors by field (`400 LDAP_CONFIG_INVALID`
 * or `SAML_CONFIG_INVALID`, `details.fields`), the notice that sends the reader to them, a
 * checkbox with its error, and text helpers.
 */
import { useState, type ReactNode } from 'react';
import { Checkbox } from 'react-aria-components';
import { StrongroomError } from '../../../../client/src/index.js';
import { useI18n } from '../../lib/i18n.js';
import { useSession } from '../../lib/session.js';
import { ErrorNotice } from '../../ui/forms.js';

/** The field errors of a refusal, by the body's top-level field (`group_roles.tellers.0` is `group_roles`), in the server's words. */
export function fieldErrorsOf(err: unknown): Record<string, string> {
  if (!(err instanceof StrongroomError) || !Array.isArray(err.details.fields)) return {};
  const out: Record<string, string> = {};
  for (const f of err.details.fields as { field?: unknown; message?: unknown }[]) {
    const path = String(f.field ?? 'body');
    const top = path.split('.')[0] ?? path;
    const said = path === top ? String(f.message ?? '') : `${path}: ${String(f.message ?? '')}`;
    out[top] = out[top] ? `${out[top]}; ${said}` : said;
  }
  return out;
}

/** Whether a refusal names fields (shown by them) rather than being about the request as a whole. */
export function namesFields(err: unknown): boolean {
  return Object.keys(fieldErrorsOf(err)).length > 0;
}

/**
 * Saving a settings form: `save()` posts `body()` to `path`. A refusal that names fields is kept
 * (`error`, and `errors` by field) for the form to show by its fields, and the confirmation closes;
 * any other refusal is thrown, for the confirmation dialog to show.
 */
export function useSettingsSave(path: string, body: () => unknown, onSaved: () => void): { error: unknown; errors: Record<string, string>; save(): Promise<void> } {
  const { call } = useSession();
  const [error, setError] = useState<unknown>(null);
  const save = async () => {
    try {
      await call('POST', path, body());
    } catch (err) {
      if (!namesFields(err)) throw err;
      setError(err);
      return;
    }
    setError(null);
    onSaved();
  };
  return { error, errors: fieldErrorsOf(error), save };
}

/**
 * A refusal of the form: when it names fields, a notice pointing to them, with those the form has
 * no field for listed (`fields` are the ones it has); any other refusal as `ErrorNotice` says it.
 */
export function RefusalNotice({ error, fields }: { error: unknown; fields: readonly string[] }) {
  const { t } = useI18n();
  const errors = fieldErrorsOf(error);
  if (Object.keys(errors).length === 0) return <ErrorNotice error={error} />;
  const others = Object.entries(errors).filter(([field]) => !fields.includes(field));
  return (
    <div className="notice notice-error" role="alert">
      <p>{t('config.edit.refused')}</p>
      {others.length > 0 ? <ul>{others.map(([field, message]) => <li key={field}><code>{field}</code> {message}</li>)}</ul> : null}
    </div>
  );
}

/** A checkbox with a description and the server's error for it under it. */
export function CheckField({ id, label, description, isSelected, onChange, error }: { id: string; label: string; description?: ReactNode; isSelected: boolean; onChange(v: boolean): void; error?: string }) {
  const described = [description ? `${id}-description` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <Checkbox className="checkbox" isSelected={isSelected} onChange={onChange} aria-describedby={described} isInvalid={error !== undefined}>
        <span className="box" aria-hidden="true" />{label}
      </Checkbox>
      {description ? <p id={`${id}-description`} className="description">{description}</p> : null}
      {error ? <p id={`${id}-error`} className="field-error">{error}</p> : null}
    </div>
  );
}

/** The trimmed text, or null when there is none (an optional setting left empty). */
export function orNull(text: string): string | null {
  const trimmed = text.trim();
  return trimmed === '' ? null : trimmed;
}

/** The lines of a text area, trimmed, empty ones left out. */
export function linesOf(text: string): string[] {
  return text.split('\n').map((l) => l.trim()).filter((l) => l !== '');
}

/** The body's fields whose value differs between two bodies (a password given is a change). */
export function changedFields(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  return keys.filter((k) => JSON.stringify(before[k] ?? null) !== JSON.stringify(after[k] ?? null));
}
