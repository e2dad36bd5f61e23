/**
 * Your consents (GET /api/v1/auth/consent?history=true, the texts in the page's language where the
 * bank wrote one): each purpose with its current text and version, your answer, and giving or
 * withdrawing it (POST /api/v1/auth/consent: giving names the version shown; withdrawing needs
 * none). A purpose the service needs (terms of service) is not withdrawn here. Then every answer
 * you gave, oldest first.
 */
import { useState } from 'react';
import { Cell, Column, Heading, Row, Table, TableBody, TableHeader } from 'react-aria-components';
import { useApi } from '../lib/data.js';
import { useI18n } from '../lib/i18n.js';
import { useSession } from '../lib/session.js';
import { Button, ErrorNotice, Notice } from '../ui/forms.js';
import { useKept } from './kept.js';
import { usePending } from './security/submit.js';

interface Consent {
  purpose: string;
  title: string;
  required: boolean;
  given: boolean;
  version: number | null;
  newer_version: boolean;
  changed_at: string | null;
  channel: string | null;
  text: { version: number; language: string; body: string };
}
interface Answer { purpose: string; given: boolean; version: number; at: string; channel: string | null }

export function ConsentScreen() {
  const { t, language, when } = useI18n();
  const { call } = useSession();
  const loaded = useApi<{ consents: Consent[]; history?: Answer[] }>(`/api/v1/auth/consent?history=true&language=${language}`);
  const data = useKept(loaded.data);
  const pending = usePending();
  const [done, setDone] = useState<string | null>(null);
  const answer = (c: Consent, given: boolean) => () => {
    setDone(null);
    void pending.run(async () => {
      await call('POST', '/api/v1/auth/consent', { consents: [given ? { purpose: c.purpose, given, version: c.text.version, language: c.text.language } : { purpose: c.purpose, given }] });
      setDone(t(given ? 'account.consentGiven' : 'account.consentWithdrawn', { title: c.title }));
      loaded.reload();
    });
  };
  return (
    <>
      <Heading level={1}>{t('account.navConsent')}</Heading>
      <p>{t('account.consentIntro')}</p>
      <ErrorNotice error={pending.error ?? loaded.error} />
      {done ? <Notice>{done}</Notice> : null}
      {!data ? (loaded.error ? null : <p>{t('common.loading')}</p>) : data.consents.length === 0 ? <p>{t('account.noPurpose')}</p> : data.consents.map((c) => (
        <section key={c.purpose} className="card" aria-labelledby={`consent-${c.purpose}`}>
          <Heading level={2} id={`consent-${c.purpose}`}>{c.title}</Heading>
          <p>
            <span className={`badge ${c.given ? 'badge-active' : 'badge-disabled'}`}>{t(c.given ? 'account.given' : 'account.notGiven')}</span>{' '}
            {c.required ? <span className="badge badge-disabled">{t('account.required')}</span> : null}
          </p>
          <blockquote className="consent-text" lang={c.text.language}>{c.text.body}</blockquote>
          <p className="description">{t('account.consentVersion', { version: c.text.version })}{c.changed_at ? ` · ${t('account.answeredOn', { version: c.version ?? '—', when: when(c.changed_at), channel: c.channel ?? '—' })}` : ''}</p>
          {c.newer_version ? <Notice>{t('account.newerVersion')}</Notice> : null}
          <div className="actions">
            {!c.given || c.newer_version ? <Button onPress={answer(c, true)} aria-label={t('account.giveOne', { title: c.title })}>{t('account.give')}</Button> : null}
            {c.given && !c.required ? <Button variant="secondary" onPress={answer(c, false)} aria-label={t('account.withdrawOne', { title: c.title })}>{t('account.withdraw')}</Button> : null}
          </div>
        </section>
      ))}
      {data?.history ? <History history={data.history} titles={new Map(data.consents.map((c) => [c.purpose, c.title]))} /> : null}
    </>
  );
}

function History({ history, titles }: { history: Answer[]; titles: Map<string, string> }) {
  const { t, language, when } = useI18n();
  return (
    <section aria-labelledby="consent-history-heading">
      <Heading level={2} id="consent-history-heading">{t('account.consentHistory')}</Heading>
      <Table aria-label={t('account.consentHistory')} className="table">
        <TableHeader>
          <Column isRowHeader>{t('account.purpose')}</Column>
          <Column>{t('account.answer')}</Column>
          <Column>{t('account.version')}</Column>
          <Column>{t('account.when')}</Column>
          <Column>{t('sessions.channel')}</Column>
        </TableHeader>
        <TableBody items={history.map((h, i) => ({ ...h, id: i }))} dependencies={[language]} renderEmptyState={() => t('account.noAnswer')}>
          {(h) => (
            <Row id={h.id}>
              <Cell>{titles.get(h.purpose) ?? h.purpose}</Cell>
              <Cell>{t(h.given ? 'account.given' : 'account.withdrawn')}</Cell>
              <Cell>{h.version}</Cell>
              <Cell>{when(h.at)}</Cell>
              <Cell>{h.channel ?? '—'}</Cell>
            </Row>
          )}
        </TableBody>
      </Table>
    </section>
  );
}
