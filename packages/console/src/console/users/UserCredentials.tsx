/**
 * A user's credentials, reset by an operator (permission users.update): the password (a new
 * temporary one, shown once or mailed to them; their sessions end) and the USSD PIN (removed at
 * once; the reset token it gives lets the person type a new PIN here, within ten minutes; the
 * customer is told of it at once on their own contacts, and the dialog says so).
 */
import { useState } from 'react';
import { Heading } from 'react-aria-components';
import { useI18n } from '../../lib/i18n.js';
import { useSession } from '../../lib/session.js';
import { Button } from '../../ui/forms.js';
import { ConfirmDialog } from '../approvals/ConfirmDialog.js';
import { NewPinForm } from './NewPinForm.js';
import type { AdminUser } from './types.js';

interface PasswordReset {
  delivery: 'email' | 'response';
  temporary_password?: string;
}

type Confirming = 'password' | 'pin' | null;
/** The answer of POST .../reset-pin: the token sets the new PIN here; the customer was told on these contacts. */
interface PinReset { reset_token: string; customer_notified: Array<'email' | 'sms'> }

export function UserCredentials({ user, onReset }: { user: AdminUser; onReset(): void }) {
  const { t } = useI18n();
  const { call } = useSession();
  const path = `/api/v1/admin/users/${encodeURIComponent(user.id)}`;
  const [confirming, setConfirming] = useState<Confirming>(null);
  const [password, setPassword] = useState<PasswordReset | null>(null);
  const [pin, setPin] = useState<PinReset | null>(null);

  const resetPassword = async () => {
    setPassword(await call<PasswordReset>('POST', `${path}/reset-password`, {}));
    onReset();
  };
  const resetPin = async () => {
    setPin(await call<PinReset>('POST', `${path}/reset-pin`, {}));
  };

  return (
    <section aria-labelledby="credentials-heading">
      <Heading level={2} id="credentials-heading">{t('users.credentials.heading')}</Heading>
      {password ? (
        <div className="notice notice-success" role="status">
          {password.temporary_password ? (
            <>
              <p>{t('users.credentials.temporary', { username: user.username })}</p>
              <p><code className="secret" data-testid="temporary-password">{password.temporary_password}</code></p>
              <p>{t('newUser.shownOnce')}</p>
            </>
          ) : <p>{t('users.credentials.emailed', { username: user.username })}</p>}
        </div>
      ) : null}
      {pin ? <NewPinForm token={pin.reset_token} notified={pin.customer_notified} username={user.username} onDone={() => setPin(null)} /> : null}
      <div className="actions">
        <Button variant="secondary" onPress={() => setConfirming('password')}>{t('users.credentials.resetPassword')}</Button>
        <Button variant="secondary" onPress={() => setConfirming('pin')}>{t('users.credentials.resetPin')}</Button>
      </div>
      {confirming ? (
        <ConfirmDialog
          title={confirming === 'password' ? t('users.credentials.passwordTitle', { username: user.username }) : t('users.credentials.pinTitle', { username: user.username })}
          allows={confirming === 'password' ? t('users.credentials.passwordAllows', { username: user.username }) : `${t('users.credentials.pinAllows', { username: user.username })} ${t('users.pinNotice.before')}`}
          confirmLabel={confirming === 'password' ? t('users.credentials.resetPassword') : t('users.credentials.resetPin')}
          variant="danger"
          onConfirm={confirming === 'password' ? resetPassword : resetPin}
          onClose={() => setConfirming(null)}
        />
      ) : null}
    </section>
  );
}
