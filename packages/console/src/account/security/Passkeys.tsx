/**
 * Passkeys (GET /api/v1/passkeys): rename one (PATCH), delete one (DELETE: the API asks for a
 * recent second factor, 403 STEP_UP_REQUIRED, which the page asks for and then retries), and add
 * one in this browser (the SDK's passkeys.add: navigator.credentials.create).
 */
import { useState } from 'react';
import { Cell, Column, Form, Heading, Row, Table, TableBody, TableHeader } from 'react-aria-components';
import type { Passkey } from '../../../../client/src/index.js';
import { useApi } from '../../lib/data.js';
import { useI18n } from '../../lib/i18n.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Field, Notice } from '../../ui/forms.js';
import { useStepUp } from './StepUp.js';
import { fieldsOf, usePending } from './submit.js';

export function Passkeys({ enrolled, onChange }: { enrolled: string[]; onChange(): void }) {
  const { t, language, when } = useI18n();
  const { call } = useSession();
  const list = useApi<{ passkeys: Passkey[] }>('/api/v1/passkeys');
  const passkeys = list.data?.passkeys ?? null;
  const pending = usePending();
  const stepUp = useStepUp();
  const [renaming, setRenaming] = useState<Passkey | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const changed = (message: string) => {
    setNotice(message);
    list.reload();
    onChange();
  };
  const remove = (p: Passkey) => () => void pending.run(() => stepUp.guard(async () => {
    await call('DELETE', `/api/v1/passkeys/${encodeURIComponent(p.id)}`);
    changed(t('security.passkeyDeleted', { name: p.name }));
  }));

  return (
    <section aria-labelledby="passkeys-heading">
      <Heading level={2} id="passkeys-heading">{t('security.factor.passkey')}</Heading>
      <p>{t('security.passkeysIntro')}</p>
      <ErrorNotice error={pending.error ?? list.error} />
      {notice ? <Notice>{notice}</Notice> : null}
      {stepUp.panel}
      <Table aria-label={t('security.factor.passkey')} className="table">
        <TableHeader>
          <Column isRowHeader>{t('security.passkeyName')}</Column>
          <Column>{t('security.passkeyCreated')}</Column>
          <Column>{t('security.passkeyLastUsed')}</Column>
          <Column>{t('sessions.action')}</Column>
        </TableHeader>
        <TableBody items={passkeys ?? []} dependencies={[language]} renderEmptyState={() => (passkeys ? t('security.noPasskey') : t('common.loading'))}>
          {(p) => (
            <Row id={p.id}>
              <Cell>{p.name}</Cell>
              <Cell>{when(p.created_at)}</Cell>
              <Cell>{p.last_used_at ? when(p.last_used_at) : '—'}</Cell>
              <Cell>
                <div className="row-actions">
                  <Button variant="secondary" onPress={() => setRenaming(p)} aria-label={t('security.renameOne', { name: p.name })}>{t('security.rename')}</Button>
                  <Button variant="danger" onPress={remove(p)} aria-label={t('security.deleteOne', { name: p.name })}>{t('security.delete')}</Button>
                </div>
              </Cell>
            </Row>
          )}
        </TableBody>
      </Table>
      {renaming ? <Rename passkey={renaming} onDone={(name) => { setRenaming(null); if (name) changed(t('security.passkeyRenamed', { name })); }} /> : null}
      <AddPasskey needsPassword={enrolled.length === 0} onAdded={(name) => changed(t('security.passkeyAdded', { name }))} />
    </section>
  );
}

function Rename({ passkey, onDone }: { passkey: Passkey; onDone(name: string | null): void }) {
  const { t } = useI18n();
  const { call } = useSession();
  const pending = usePending();
  const save = (name: string) => void pending.run(async () => {
    await call('PATCH', `/api/v1/passkeys/${encodeURIComponent(passkey.id)}`, { name });
    onDone(name);
  });
  return (
    <Form className="form" onSubmit={(e) => save(fieldsOf(e).name ?? '')} aria-label={t('security.renameOne', { name: passkey.name })}>
      <ErrorNotice error={pending.error} />
      <Field name="name" label={t('security.newName')} defaultValue={passkey.name} maxLength={64} isRequired autoFocus />
      <div className="actions">
        <Button type="submit" isPending={pending.busy}>{t('security.save')}</Button>
        <Button variant="secondary" onPress={() => onDone(null)}>{t('security.cancel')}</Button>
      </div>
    </Form>
  );
}

function AddPasskey({ needsPassword, onAdded }: { needsPassword: boolean; onAdded(name: string): void }) {
  const { t } = useI18n();
  const { client } = useSession();
  const pending = usePending();
  const stepUp = useStepUp();
  const [form, setForm] = useState(0);
  if (typeof window.PublicKeyCredential !== 'function') return <p>{t('security.passkeyUnsupported')}</p>;
  const add = (fields: Record<string, string>) => void pending.run(() => stepUp.guard(async () => {
    const name = fields.name ?? '';
    await client.passkeys.add({ name, ...(needsPassword ? { currentPassword: fields.current_password ?? '' } : {}) });
    setForm((n) => n + 1);
    onAdded(name);
  }));
  return (
    <>
      <Heading level={3}>{t('security.addPasskey')}</Heading>
      <ErrorNotice error={pending.error} />
      {stepUp.panel}
      <Form key={form} className="form" onSubmit={(e) => add(fieldsOf(e))} aria-label={t('security.addPasskey')}>
        <Field name="name" label={t('security.passkeyName')} description={t('security.passkeyNameHint')} maxLength={64} isRequired />
        {needsPassword ? <Field name="current_password" label={t('security.currentPassword')} type="password" autoComplete="current-password" isRequired /> : null}
        <Button type="submit" isPending={pending.busy}>{t('security.addPasskey')}</Button>
      </Form>
    </>
  );
}
