/**
 * The directory connection test (POST /api/v1/admin/ldap/test): the settings in force tried step
 * by step, and with a username the user's entry, groups and the roles they map to. Each step's
 * outcome in words, with what the network or the directory said. The screen holds the test's
 * state (`useLdapTest`), so that saving the settings can run it at once.
 */
import { useState } from 'react';
import { Cell, Column, Form, Heading, Row, Table, TableBody, TableHeader } from 'react-aria-components';
import { useI18n } from '../../lib/i18n.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Field } from '../../ui/forms.js';
import type { LdapTestResult } from './types.js';

function Steps({ result }: { result: LdapTestResult }) {
  const { t, language } = useI18n();
  return (
    <Table aria-label={t('config.ldap.steps')} className="table">
      <TableHeader>
        <Column isRowHeader>{t('config.ldap.step')}</Column>
        <Column>{t('config.ldap.outcome')}</Column>
        <Column>{t('config.ldap.detail')}</Column>
      </TableHeader>
      <TableBody items={result.steps.map((s) => ({ id: s.step, ...s }))} dependencies={[language]}>
        {(s) => (
          <Row id={s.id}>
            <Cell>{t(`config.ldap.step.${s.step}`)}</Cell>
            <Cell><span className={`badge badge-${s.outcome}`}>{t(`config.ldap.outcome.${s.outcome}`)}</span></Cell>
            <Cell>{s.reason ? <p className="step-reason">{t(`config.ldap.reason.${s.reason}`)}</p> : null}{s.detail ? <code>{s.detail}</code> : null}</Cell>
          </Row>
        )}
      </TableBody>
    </Table>
  );
}

export interface LdapTestRun {
  username: string;
  setUsername(value: string): void;
  result: LdapTestResult | null;
  error: unknown;
  busy: boolean;
  run(): Promise<void>;
}

/** The test's state, held by the screen: saving the settings offers to run it at once. */
export function useLdapTest(): LdapTestRun {
  const { call } = useSession();
  const [username, setUsername] = useState('');
  const [result, setResult] = useState<LdapTestResult | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const run = async () => {
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      setResult(await call<LdapTestResult>('POST', '/api/v1/admin/ldap/test', username.trim() ? { username: username.trim() } : {}));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return { username, setUsername, result, error, busy, run };
}

export function LdapTest({ test }: { test: LdapTestRun }) {
  const { t } = useI18n();
  const { username, setUsername, result, error, busy, run } = test;
  return (
    <section className="card" aria-labelledby="ldap-test-heading">
      <Heading level={2} id="ldap-test-heading">{t('config.ldap.test')}</Heading>
      <p>{t('config.ldap.testIntro')}</p>
      <Form className="form" onSubmit={(e) => { e.preventDefault(); void run(); }}>
        <Field label={t('config.ldap.testUsername')} description={t('config.ldap.testUsernameHint')} value={username} onChange={setUsername} autoComplete="off" />
        <div className="actions"><Button type="submit" isPending={busy}>{t('config.ldap.testButton')}</Button></div>
      </Form>
      <ErrorNotice error={error} />
      {result ? (
        <div role="status">
          <p className={`notice ${result.ok ? 'notice-success' : 'notice-error'}`}>{t(result.ok ? 'config.ldap.testPassed' : 'config.ldap.testFailed', { uri: result.uri })}</p>
          <Steps result={result} />
          {result.user ? (
            <dl className="facts" aria-label={t('config.ldap.userFound')}>
              <dt>{t('config.ldap.userDn')}</dt><dd><code>{result.user.dn}</code></dd>
              <dt>{t('config.ldap.userName')}</dt><dd>{result.user.name ?? '—'}</dd>
              <dt>{t('config.ldap.userMail')}</dt><dd>{result.user.mail ?? '—'}</dd>
              <dt>{t('config.ldap.userGroups')}</dt><dd>{result.user.groups.length > 0 ? <ul className="plain-list">{result.user.groups.map((g) => <li key={g}><code>{g}</code></li>)}</ul> : t('config.none')}</dd>
              <dt>{t('config.ldap.userRoles')}</dt><dd>{result.user.roles.length > 0 ? result.user.roles.join(', ') : t('config.none')}</dd>
            </dl>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
