/**
 * Keys and their ages (permission config.manage, read-only): each key the service holds, its id or
 * fingerprint, algorithm, age and whether its rotation is due (GET /api/v1/admin/keys; never key
 * material), and how each is rotated: the CLI command, run where the service's database is.
 */
import { Cell, Column, Heading, Row, Table, TableBody, TableHeader } from 'react-aria-components';
import { useApi } from '../../lib/data.js';
import { useI18n } from '../../lib/i18n.js';
import { ErrorNotice } from '../../ui/forms.js';
import type { KeyInfo } from './types.js';

function Age({ k }: { k: KeyInfo }) {
  const { t, when } = useI18n();
  if (k.created_at === null) return <>{t('config.keys.ageUnknown')}</>;
  return <>{t('config.keys.age', { days: k.age_days ?? 0, when: when(k.created_at) })}</>;
}

function Rotation({ k }: { k: KeyInfo }) {
  const { t, when } = useI18n();
  const due = k.rotation_due === true ? <span className="badge badge-due">{t('config.keys.due')}</span> : null;
  return (
    <>
      {due}{due ? ' ' : null}
      {t(`config.keys.rotation.${k.rotation}`)}
      {k.rotate_command ? <><br /><code className="command">{k.rotate_command}</code></> : null}
      {k.rotation_due_at && !k.rotation_due ? <><br />{t('config.keys.dueAt', { when: when(k.rotation_due_at) })}</> : null}
      {k.expires_at ? <><br />{t('config.keys.expiresAt', { when: when(k.expires_at) })}</> : null}
    </>
  );
}

export function KeysScreen() {
  const { t, language } = useI18n();
  const read = useApi<{ keys: KeyInfo[] }>('/api/v1/admin/keys');
  const keys = read.data?.keys ?? null;
  return (
    <>
      <Heading level={1}>{t('config.nav.keys')}</Heading>
      <p>{t('config.keys.intro')}</p>
      <ErrorNotice error={read.error} />
      <Table aria-label={t('config.keys.table')} className="table">
        <TableHeader>
          <Column isRowHeader>{t('config.keys.kind')}</Column>
          <Column>{t('config.keys.id')}</Column>
          <Column>{t('config.keys.status')}</Column>
          <Column>{t('config.keys.created')}</Column>
          <Column>{t('config.keys.rotationColumn')}</Column>
        </TableHeader>
        <TableBody items={(keys ?? []).map((k) => ({ ...k, rowId: `${k.kind}:${k.id}:${k.status}` }))} dependencies={[language]} renderEmptyState={() => (keys ? t('config.none') : t('common.loading'))}>
          {(k) => (
            <Row id={k.rowId}>
              <Cell>{t(`config.keys.kind.${k.kind}`)}</Cell>
              <Cell><code>{k.id}</code><br /><span className="description">{k.algorithm}</span></Cell>
              <Cell>{t(`config.keys.status.${k.status}`)}</Cell>
              <Cell><Age k={k} /></Cell>
              <Cell><Rotation k={k} /></Cell>
            </Row>
          )}
        </TableBody>
      </Table>
      <Heading level={2}>{t('config.keys.howTo')}</Heading>
      <p>{t('config.keys.howToIntro')}</p>
      <ul>
        <li><code>strongroom rotate-keys</code>: {t('config.keys.howTo.jwt')}</li>
        <li><code>strongroom rotate-transport-key</code>: {t('config.keys.howTo.transport')}</li>
        <li><code>strongroom rotate-field-key</code>: {t('config.keys.howTo.field')}</li>
        <li><code>strongroom rotate-saml-sp-key</code>: {t('config.keys.howTo.saml')}</li>
      </ul>
    </>
  );
}
