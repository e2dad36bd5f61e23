/** One entry (the console or the account pages): the providers, then sign-in or the shell. */
import { StrictMode, type ReactNode } from 'react';
import { createRoot } from 'react-dom/client';
import { LanguageProvider, useI18n } from '../lib/i18n.js';
import { PageRouter } from '../lib/router.js';
import { SessionProvider, useSession } from '../lib/session.js';
import { LanguageSwitcher, Shell, type ShellProps } from './Shell.js';
import { SignIn } from './SignIn.js';
import '../styles/app.css';

export interface EntryProps extends ShellProps {
  /** What the entry shows signed out, given the sign-in form (the account pages: a pending erasure instead). */
  signedOut?: (signIn: ReactNode) => ReactNode;
}

function Gate({ signedOut, ...props }: EntryProps) {
  const { signedIn } = useSession();
  const { t } = useI18n();
  if (signedIn) return <Shell {...props} />;
  const signIn = <SignIn title={t('signIn.heading')} />;
  return (
    <div className="signed-out">
      <header className="topbar"><span className="brand">{t(props.title)}</span><LanguageSwitcher /></header>
      {signedOut ? signedOut(signIn) : signIn}
    </div>
  );
}

/**
 * React Aria's pressable elements inject a <style> element (touch-action for double-tap zoom)
 * unless the document already has an element with its id: the CSP would refuse that inline
 * style, so the same rule is in app.css and this marker tells React Aria it is there.
 */
function markPressableStyle(): void {
  if (document.getElementById('react-aria-pressable-style')) return;
  const marker = document.createElement('meta');
  marker.id = 'react-aria-pressable-style';
  marker.name = 'react-aria-pressable-style';
  marker.content = 'in the stylesheet';
  document.head.append(marker);
}

export function mountEntry(base: string, props: EntryProps): void {
  markPressableStyle();
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <LanguageProvider>
        <SessionProvider>
          <PageRouter base={base}>
            <Gate {...props} />
          </PageRouter>
        </SessionProvider>
      </LanguageProvider>
    </StrictMode>,
  );
}
