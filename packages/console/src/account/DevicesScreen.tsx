/**
 * Your devices (GET /api/v1/notifications/devices: the phones and browsers registered for push
 * notifications, tokens masked): turn notifications to one off or back on (PUT …/{id}/deactivate,
 * …/activate), or delete it (DELETE …/{id}). The phone that approves your sign-ins needs a recent
 * second factor for either (403 STEP_UP_REQUIRED: asked, then the change goes on). Below: the
 * language of your notifications.
 */
import { useState } from 'react';
import { Cell, Column, Heading, Row, Table, TableBody, TableHeader } from 'react-aria-components';
import { useApi } from '../lib/data.js';
import { useI18n } from '../lib/i18n.js';
import { useSession } from '../lib/session.js';
import { Button, ErrorNotice, Notice } from '../ui/forms.js';
import { useKept } from './kept.js';
import { NotificationLanguage } from './NotificationLanguage.js';
import { useStepUp } from './security/StepUp.js';
import { usePending } from './security/submit.js';

interface Device {
  id: string;
  push_token: string;
  platform: 'mobile' | 'web';
  device_name: string | null;
  is_active: boolean;
  receives_codes: boolean;
  last_used_at: string | null;
  created_on: string;
}

const BASE = '/api/v1/notifications/devices';

export function DevicesScreen() {
  const { t, language, when } = useI18n();
  const { call } = useSession();
  const loaded = useApi<{ devices: Device[] }>(BASE);
  const devices = useKept(loaded.data)?.devices ?? null;
  const pending = usePending();
  const stepUp = useStepUp();
  const [done, setDone] = useState<string | null>(null);
  const nameOf = (d: Device) => d.device_name ?? `${t(d.platform === 'web' ? 'account.platformWeb' : 'account.platformMobile')} ${d.push_token}`;

  const change = (d: Device, method: 'PUT' | 'DELETE', path: string, message: 'account.deviceOff' | 'account.deviceOn' | 'account.deviceDeleted') => () => {
    setDone(null);
    void pending.run(() => stepUp.guard(async () => {
      await call(method, `${BASE}/${encodeURIComponent(d.id)}${path}`);
      setDone(t(message, { name: nameOf(d) }));
      loaded.reload();
    }));
  };

  return (
    <>
      <Heading level={1}>{t('account.navDevices')}</Heading>
      <p>{t('account.devicesIntro')}</p>
      <ErrorNotice error={pending.error ?? loaded.error} />
      {stepUp.panel}
      {done ? <Notice>{done}</Notice> : null}
      <Table aria-label={t('account.navDevices')} className="table">
        <TableHeader>
          <Column isRowHeader>{t('account.device')}</Column>
          <Column>{t('account.notifications')}</Column>
          <Column>{t('account.registered')}</Column>
          <Column>{t('account.lastNotified')}</Column>
          <Column>{t('sessions.action')}</Column>
        </TableHeader>
        <TableBody items={devices ?? []} dependencies={[language, pending.busy]} renderEmptyState={() => (devices ? t('account.noDevice') : t('common.loading'))}>
          {(d) => (
            <Row id={d.id}>
              <Cell>{nameOf(d)}{d.receives_codes ? <> <span className="badge badge-active">{t('account.receivesCodes')}</span></> : null}</Cell>
              <Cell><span className={`badge ${d.is_active ? 'badge-active' : 'badge-disabled'}`}>{t(d.is_active ? 'account.on' : 'account.off')}</span></Cell>
              <Cell>{when(d.created_on)}</Cell>
              <Cell>{when(d.last_used_at)}</Cell>
              <Cell>
                <div className="row-actions">
                  {d.is_active
                    ? <Button variant="secondary" onPress={change(d, 'PUT', '/deactivate', 'account.deviceOff')} aria-label={t('account.turnOffOne', { name: nameOf(d) })}>{t('account.turnOff')}</Button>
                    : <Button variant="secondary" onPress={change(d, 'PUT', '/activate', 'account.deviceOn')} aria-label={t('account.turnOnOne', { name: nameOf(d) })}>{t('account.turnOn')}</Button>}
                  <Button variant="danger" onPress={change(d, 'DELETE', '', 'account.deviceDeleted')} aria-label={t('account.deleteDeviceOne', { name: nameOf(d) })}>{t('security.delete')}</Button>
                </div>
              </Cell>
            </Row>
          )}
        </TableBody>
      </Table>
      <NotificationLanguage />
    </>
  );
}
