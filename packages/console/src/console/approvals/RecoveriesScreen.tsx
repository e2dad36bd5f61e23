/**
 * Recoveries (permission recovery.approve): on arrival, the queue of every recovery waiting for a
 * branch's approval, oldest first, twenty a page (GET /api/v1/admin/recoveries: keyset pages, each
 * page's next_cursor kept so *Previous page* goes back). A person at the desk reads the reference
 * their app shows: the search narrows the screen to it (?reference=). Each shows what was lost, the
 * account, its masked contacts and the proofs given; the operator checks an identity document and
 * approves (POST .../{reference}/approve: one proof toward the recovery) or rejects (.../reject: it
 * ends). Four eyes are the API's: a recovery of your own account, or one you started at the desk,
 * is refused with 403 RECOVERY_FOUR_EYES, said in the dialog.
 */
import { useState, type FormEvent } from 'react';
import { Form, Heading, Link } from 'react-aria-components';
import { useApi } from '../../lib/data.js';
import { useI18n, type MessageKey } from '../../lib/i18n.js';
import { useHref } from '../../lib/router.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Field, Notice } from '../../ui/forms.js';
import { ConfirmDialog } from './ConfirmDialog.js';

interface Awaiting {
  reference: string;
  lost: 'password' | 'pin' | 'mfa' | 'device';
  state: string;
  user: { id: string; username: string; full_name: string | null };
  contacts: { email: string | null; phone: string | null };
  proofs: { given: string[]; with_approval: string[][] };
  initiated_by: { id: string; username: string } | null;
  created_at: string;
  expires_at: string;
}

type Decision = 'approve' | 'reject';

const PAGE_SIZE = 20;

export function RecoveriesScreen() {
  const { t } = useI18n();
  const [reference, setReference] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const onFind = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    setDone(null);
    setReference(String(new FormData(e.currentTarget).get('reference') ?? '').trim());
  };
  return (
    <>
      <Heading level={1}>{t('approvals.nav.recoveries')}</Heading>
      <p>{t('approvals.recoveries.intro')}</p>
      <Form className="filters" onSubmit={onFind} role="search" aria-label={t('approvals.recoveries.searchLabel')}>
        <Field name="reference" label={t('approvals.recoveries.reference')} description={t('approvals.recoveries.referenceHint')} isRequired autoComplete="off" maxLength={16} />
        <Button type="submit">{t('approvals.recoveries.find')}</Button>
        {reference !== '' ? <Button variant="secondary" onPress={() => { setDone(null); setReference(''); }}>{t('recoveries.showQueue')}</Button> : null}
      </Form>
      {done ? <Notice>{done}</Notice> : null}
      {reference !== '' ? <Found reference={reference} onDecided={setDone} /> : <Queue onDecided={setDone} />}
    </>
  );
}

/** The queue: keyset pages; the cursors of the pages seen are kept to go back. */
function Queue({ onDecided }: { onDecided(message: string): void }) {
  const { t } = useI18n();
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const query = new URLSearchParams({ limit: String(PAGE_SIZE), ...(cursor ? { cursor } : {}) });
  const page = useApi<{ recoveries: Awaiting[]; next_cursor: string | null }>(`/api/v1/admin/recoveries?${query}`);
  const next = page.data?.next_cursor ?? null;
  return (
    <>
      <p>{t('recoveries.queueNote')}</p>
      <ErrorNotice error={page.error} />
      {page.loading ? <p>{t('common.loading')}</p> : null}
      {page.data?.recoveries.length === 0 ? <p>{t('recoveries.queueNone')}</p> : null}
      {page.data?.recoveries.map((r) => <Recovery key={r.reference} recovery={r} onDecided={(m) => { onDecided(m); page.reload(); }} />)}
      {cursors.length > 0 || next !== null ? (
        <div className="actions">
          <Button variant="secondary" isDisabled={cursors.length === 0} onPress={() => setCursors(cursors.slice(0, -1))}>{t('approvals.previous')}</Button>
          <span>{t('recoveries.page', { page: cursors.length + 1 })}</span>
          <Button variant="secondary" isDisabled={next === null} onPress={() => { if (next) setCursors([...cursors, next]); }}>{t('approvals.next')}</Button>
        </div>
      ) : null}
    </>
  );
}

function Found({ reference, onDecided }: { reference: string; onDecided(message: string): void }) {
  const { t } = useI18n();
  const found = useApi<{ recoveries: Awaiting[] }>(`/api/v1/admin/recoveries?${new URLSearchParams({ reference })}`);
  if (found.error) return <ErrorNotice error={found.error} />;
  if (!found.data) return <p>{t('common.loading')}</p>;
  if (found.data.recoveries.length === 0) return <p>{t('approvals.recoveries.none')}</p>;
  return <>{found.data.recoveries.map((r) => <Recovery key={r.reference} recovery={r} onDecided={(m) => { onDecided(m); found.reload(); }} />)}</>;
}

function Recovery({ recovery: r, onDecided }: { recovery: Awaiting; onDecided(message: string): void }) {
  const { t, when } = useI18n();
  const { call } = useSession();
  const href = useHref();
  const [deciding, setDeciding] = useState<Decision | null>(null);
  const proof = (p: string) => t(`approvals.proof.${p}` as MessageKey);
  const name = r.user.full_name ? `${r.user.full_name} (${r.user.username})` : r.user.username;
  // What the person still gives after an approval: each alternative's other proofs.
  const rest = r.proofs.with_approval.map((alt) => alt.filter((p) => p !== 'branch_approval' && !r.proofs.given.includes(p)).map(proof).join(' + ')).filter((s) => s !== '');
  const vars = { reference: r.reference, name, lost: t(`approvals.lost.${r.lost}`), rest: rest.length > 0 ? rest.join(t('approvals.or')) : t('approvals.recoveries.nothingMore') };

  const decide = (decision: Decision) => async (values: Record<string, string>) => {
    const path = `/api/v1/admin/recoveries/${encodeURIComponent(r.reference)}/${decision}`;
    const body = decision === 'approve'
      ? { document_type: values.document_type, document_number_last4: values.document_number_last4, ...(values.note ? { note: values.note } : {}) }
      : { reason: values.reason };
    await call('POST', path, body);
    onDecided(t(decision === 'approve' ? 'approvals.recoveries.approved' : 'approvals.recoveries.rejected', vars));
  };

  return (
    <section className="card" aria-labelledby={`recovery-${r.reference}`}>
      <Heading level={2} id={`recovery-${r.reference}`}>{t('approvals.recoveries.heading', { reference: r.reference })}</Heading>
      <dl className="facts">
        <dt>{t('approvals.recoveries.account')}</dt><dd><Link href={href('users', r.user.id)}>{name}</Link></dd>
        <dt>{t('approvals.recoveries.lost')}</dt><dd>{t(`approvals.lost.${r.lost}`)}</dd>
        <dt>{t('approvals.recoveries.state')}</dt><dd>{t(`approvals.state.${r.state}` as MessageKey)}</dd>
        <dt>{t('approvals.recoveries.contacts')}</dt><dd>{[r.contacts.email, r.contacts.phone].filter(Boolean).join(', ') || '—'}</dd>
        <dt>{t('approvals.recoveries.given')}</dt><dd>{r.proofs.given.length > 0 ? r.proofs.given.map(proof).join(', ') : '—'}</dd>
        <dt>{t('approvals.recoveries.stillToGive')}</dt><dd>{vars.rest}</dd>
        <dt>{t('approvals.recoveries.startedBy')}</dt><dd>{r.initiated_by ? r.initiated_by.username : t('approvals.recoveries.startedByPerson')}</dd>
        <dt>{t('approvals.recoveries.created')}</dt><dd>{when(r.created_at)}</dd>
        <dt>{t('approvals.recoveries.expires')}</dt><dd>{when(r.expires_at)}</dd>
      </dl>
      <div className="actions">
        <Button onPress={() => setDeciding('approve')} aria-label={t('recoveries.approveOne', vars)}>{t('approvals.recoveries.approve')}</Button>
        <Button variant="danger" onPress={() => setDeciding('reject')} aria-label={t('recoveries.rejectOne', vars)}>{t('approvals.recoveries.reject')}</Button>
      </div>
      {deciding === 'approve' ? (
        <ConfirmDialog title={t('approvals.recoveries.confirmApprove', vars)} allows={t('approvals.recoveries.allowsApprove', vars)} confirmLabel={t('approvals.recoveries.approve')} onConfirm={decide('approve')} onClose={() => setDeciding(null)}>
          <Field name="document_type" label={t('approvals.recoveries.documentType')} description={t('approvals.recoveries.documentTypeHint')} defaultValue="national_id" isRequired minLength={2} maxLength={40} />
          <Field name="document_number_last4" label={t('approvals.recoveries.documentLast4')} isRequired minLength={4} maxLength={4} autoComplete="off" />
          <Field name="note" label={t('approvals.recoveries.note')} maxLength={500} autoComplete="off" />
        </ConfirmDialog>
      ) : null}
      {deciding === 'reject' ? (
        <ConfirmDialog title={t('approvals.recoveries.confirmReject', vars)} allows={t('approvals.recoveries.allowsReject', vars)} confirmLabel={t('approvals.recoveries.reject')} variant="danger" onConfirm={decide('reject')} onClose={() => setDeciding(null)}>
          <Field name="reason" label={t('approvals.recoveries.reason')} isRequired maxLength={500} autoComplete="off" />
        </ConfirmDialog>
      ) : null}
    </section>
  );
}
