/**
 * Second factors: what is enrolled (GET /api/v1/2fa/factors), the authenticator app (enrol it with
 * its QR code, or replace the backup codes), the passkeys (list, rename, delete, add), codes by
 * email or text message, and the security questions. A change
 * the API guards with a recent second factor (403 STEP_UP_REQUIRED) asks for one, then goes on.
 */
import { useState } from 'react';
import { Heading } from 'react-aria-components';
import { useApi } from '../../lib/data.js';
import { useI18n, type MessageKey } from '../../lib/i18n.js';
import { ErrorNotice } from '../../ui/forms.js';
import { Authenticator } from './Authenticator.js';
import { CodeFactors } from './CodeFactors.js';
import { Passkeys } from './Passkeys.js';
import { SecurityQuestions } from './SecurityQuestions.js';

export interface Factors {
  enrolled: string[];
  backup_codes_left: number;
}

const NAMES: Record<string, MessageKey> = {
  totp: 'security.factor.totp',
  email: 'security.factor.email',
  sms: 'security.factor.sms',
  push: 'security.factor.push',
  passkey: 'security.factor.passkey',
  push_approval: 'security.factor.push_approval',
};

export function FactorsScreen() {
  const { t } = useI18n();
  const factors = useApi<Factors>('/api/v1/2fa/factors');
  // The last answer stays on screen while it is read again, so the sections below keep their state (backup codes shown once).
  const [shown, setShown] = useState<Factors | null>(null);
  if (factors.data && factors.data !== shown) setShown(factors.data);
  const enrolled = shown?.enrolled;
  return (
    <>
      <Heading level={1}>{t('security.navFactors')}</Heading>
      <ErrorNotice error={factors.error} />
      <section aria-labelledby="enrolled-heading">
        <Heading level={2} id="enrolled-heading">{t('security.enrolledHeading')}</Heading>
        {enrolled === undefined ? (factors.error ? null : <p>{t('common.loading')}</p>) : enrolled.length === 0 ? <p>{t('security.noFactor')}</p> : (
          <ul className="factor-list" aria-label={t('security.enrolledHeading')}>
            {enrolled.map((m) => <li key={m}>{NAMES[m] ? t(NAMES[m]) : m}{m === 'totp' ? ` (${t('security.backupLeft', { count: String(shown?.backup_codes_left ?? 0) })})` : ''}</li>)}
          </ul>
        )}
      </section>
      {shown ? <Authenticator enrolled={shown.enrolled} onChange={factors.reload} /> : null}
      {shown ? <Passkeys enrolled={shown.enrolled} onChange={factors.reload} /> : null}
      {shown ? <CodeFactors enrolled={shown.enrolled} onChange={factors.reload} /> : null}
      {shown ? <SecurityQuestions /> : null}
    </>
  );
}
