/**
 * A user's credentials, reset by an operator (permission users.update): the password (a new
 * temporary one, shown once or mailed to them; their sessions end) and the USSD PIN (removed at
 * once; the reset token it gives lets the person type a new PIN here, within ten minutes).
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

export function UserCredentials({ user, onReset }: { user: AdminUser; onReset(): void }) {
  const { t } = useI18n();
  const { call } = useSession();
  const path = `/api/v1/admin/users/${encodeURIComponent(user.id)}`;
  const [confirming, setConfirming] = useState<Confirming>(null);
  const [password, setPassword] = useState<PasswordReset | null>(null);
  const [pinToken, setPinToken] = useState<string | null>(null);

  const resetPassword = async () => {
    setPassword(await call<PasswordReset>('POST', `${path}/reset-password`, {}));
    onReset();
  };
  const resetPin = async () => {
    setPinToken((await call<{ reset_token: string }>('POST', `${path}/reset-pin`, {})).reset_token);
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
      {pinToken ? <NewPinForm token={pinToken} username={user.username} onDone={() => setPinToken(null)} /> : null}
      <div className="actions">
        <Button variant="secondary" onPress={() => setConfirming('password')}>{t('users.credentials.resetPassword')}</Button>
        <Button variant="secondary" onPress={() => setConfirming('pin')}>{t('users.credentials.resetPin')}</Button>
      </div>
      {confirming ? (
        <ConfirmDialog
          title={confirming === 'password' ? t('users.credentials.passwordTitle', { username: user.username }) : t('users.credentials.pinTitle', { username: user.username })}
          allows={confirming === 'password' ? t('users.credentials.passwordAllows', { username: user.username }) : t('users.credentials.pinAllows', { username: user.username })}
          confirmLabel={confirming === 'password' ? t('users.credentials.resetPassword') : t('users.credentials.resetPin')}
          variant="danger"
          onConfirm={confirming === 'password' ? resetPassword : resetPin}
          onClose={() => setConfirming(null)}
        />
      ) : null}
    </section>
  );
}
