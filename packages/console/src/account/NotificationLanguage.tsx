/** The language your notifications are written in (GET and PUT /api/v1/notifications/preferences): en, pt or fr. */
import { useState } from 'react';
import { Heading, Label, Radio, RadioGroup } from 'react-aria-components';
import { useApi } from '../lib/data.js';
import { LANGUAGE_NAMES, LANGUAGES, useI18n, type Language } from '../lib/i18n.js';
import { useSession } from '../lib/session.js';
import { ErrorNotice, Notice } from '../ui/forms.js';
import { usePending } from './security/submit.js';

export function NotificationLanguage() {
  const { t } = useI18n();
  const { call } = useSession();
  const loaded = useApi<{ language: Language }>('/api/v1/notifications/preferences');
  const [chosen, setChosen] = useState<Language | null>(null);
  const pending = usePending();
  const current = chosen ?? loaded.data?.language;
  const choose = (value: string) => void pending.run(async () => {
    const answer = await call<{ language: Language }>('PUT', '/api/v1/notifications/preferences', { language: value });
    setChosen(answer.language);
  });
  return (
    <section aria-labelledby="notification-language-heading">
      <Heading level={2} id="notification-language-heading">{t('account.notificationLanguage')}</Heading>
      <ErrorNotice error={pending.error ?? loaded.error} />
      {chosen ? <Notice>{t('account.notificationLanguageSaved', { language: LANGUAGE_NAMES[chosen] })}</Notice> : null}
      {current ? (
        <RadioGroup className="radio-group" value={current} onChange={choose} isDisabled={pending.busy}>
          <Label>{t('account.notificationLanguageHint')}</Label>
          {LANGUAGES.map((l) => <Radio key={l} value={l} className="radio" lang={l}>{LANGUAGE_NAMES[l]}</Radio>)}
        </RadioGroup>
      ) : loaded.error ? null : <p>{t('common.loading')}</p>}
    </section>
  );
}
