/**
 * Your email and phone (GET /api/v1/auth/profile). A new one does not change at once: it is asked
 * for with the current password (PUT /api/v1/auth/profile/update; a step-up when the account has
 * a second factor), a code goes to the NEW address and the old one is told; it takes effect when
 * the code is entered (POST /api/v1/auth/profile/verify-contact). Pending changes are shown masked.
 */
import { useState } from 'react';
import { Form, Heading } from 'react-aria-components';
import { useApi } from '../lib/data.js';
import { useI18n } from '../lib/i18n.js';
import { useSession } from '../lib/session.js';
import { Button, ErrorNotice, Field, Notice } from '../ui/forms.js';
import { useKept } from './kept.js';
import { useStepUp } from './security/StepUp.js';
import { fieldsOf, usePending } from './security/submit.js';

type Kind = 'email' | 'phone';
interface PendingChange { kind: Kind; destination: string; requested_at: string; expires_at: string }
interface Contacts { email: string | null; phone: string | null; managed_by: string | null; pending_contact_changes: PendingChange[] }
interface Sent { kind: Kind; destination: string; expires_in: number }

export function ContactsScreen() {
  const { t } = useI18n();
  const loaded = useApi<{ profile: Contacts }>('/api/v1/auth/profile');
  const profile = useKept(loaded.data)?.profile;
  const [done, setDone] = useState<string | null>(null);
  const changed = (message: string) => {
    setDone(message);
    loaded.reload();
  };
  return (
    <>
      <Heading level={1}>{t('account.navContacts')}</Heading>
      <p>{t('account.contactsIntro')}</p>
      <ErrorNotice error={loaded.error} />
      {done ? <Notice>{done}</Notice> : null}
      {profile ? (
        <>
          <dl className="facts">
            <dt>{t('users.email')}</dt><dd>{profile.email ?? '—'}</dd>
            <dt>{t('users.phone')}</dt><dd>{profile.phone ?? '—'}</dd>
          </dl>
          {profile.pending_contact_changes.map((c) => <VerifyContact key={`${c.kind} ${c.requested_at}`} pending={c} onVerified={changed} />)}
          {profile.managed_by ? <Notice>{t('account.contactsManaged', { by: profile.managed_by })}</Notice> : (
            <>
              <ChangeContact kind="email" onAsked={changed} />
              <ChangeContact kind="phone" onAsked={changed} />
            </>
          )}
        </>
      ) : loaded.error ? null : <p>{t('common.loading')}</p>}
    </>
  );
}

function ChangeContact({ kind, onAsked }: { kind: Kind; onAsked(message: string): void }) {
  const { t } = useI18n();
  const { call } = useSession();
  const pending = usePending();
  const stepUp = useStepUp();
  const [form, setForm] = useState(0);
  const heading = t(kind === 'email' ? 'account.changeEmail' : 'account.changePhone');
  const ask = (fields: Record<string, string>) => void pending.run(() => stepUp.guard(async () => {
    const answer = await call<{ codes_sent: Sent[] }>('PUT', '/api/v1/auth/profile/update', { [kind]: fields.value?.trim(), current_password: fields.current_password });
    const sent = answer.codes_sent.find((c) => c.kind === kind);
    setForm((n) => n + 1);
    onAsked(sent ? t('account.codeSent', { destination: sent.destination }) : t('account.codeNotSent'));
  }));
  return (
    <section className="card" aria-label={heading}>
      <Heading level={2}>{heading}</Heading>
      <ErrorNotice error={pending.error} />
      {stepUp.panel}
      <Form key={form} className="form" onSubmit={(e) => ask(fieldsOf(e))} aria-label={heading}>
        <Field name="value" label={t(kind === 'email' ? 'account.newEmail' : 'account.newPhone')} type={kind === 'email' ? 'email' : 'tel'}
          autoComplete={kind === 'email' ? 'email' : 'tel'} description={kind === 'phone' ? t('account.phoneHint') : undefined} isRequired />
        <Field name="current_password" label={t('security.currentPassword')} type="password" autoComplete="current-password" isRequired />
        <Button type="submit" isPending={pending.busy}>{t('account.sendCode')}</Button>
      </Form>
    </section>
  );
}

function VerifyContact({ pending: change, onVerified }: { pending: PendingChange; onVerified(message: string): void }) {
  const { t, when } = useI18n();
  const { call } = useSession();
  const pending = usePending();
  const heading = t(change.kind === 'email' ? 'account.verifyEmail' : 'account.verifyPhone');
  const verify = (code: string) => void pending.run(async () => {
    const answer = await call<{ profile: Contacts }>('POST', '/api/v1/auth/profile/verify-contact', { kind: change.kind, code: code.trim() });
    onVerified(t(change.kind === 'email' ? 'account.emailChanged' : 'account.phoneChanged', { value: answer.profile[change.kind] ?? '' }));
  });
  return (
    <section className="card pending-change" aria-label={heading}>
      <Heading level={2}>{heading}</Heading>
      <p>{t('account.pendingChange', { destination: change.destination, until: when(change.expires_at) })}</p>
      <ErrorNotice error={pending.error} />
      <Form className="form" onSubmit={(e) => verify(fieldsOf(e).code ?? '')} aria-label={heading}>
        <Field name="code" label={t('account.codeReceived')} autoComplete="one-time-code" inputMode="numeric" isRequired />
        <Button type="submit" isPending={pending.busy}>{t('account.confirmCode')}</Button>
      </Form>
    </section>
  );
}
