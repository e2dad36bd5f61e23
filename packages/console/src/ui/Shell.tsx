/**
 * The frame of both entries once signed in: the header (who is signed in, the language, sign
 * out), the navigation (only the screens the person's permissions allow) and the screen.
 */
import { useEffect } from 'react';
import { Heading, Link, ListBox, ListBoxItem, Popover, Select, SelectValue, Button as AriaButton, Label } from 'react-aria-components';
import { LANGUAGE_NAMES, LANGUAGES, useI18n, type Language, type MessageKey } from '../lib/i18n.js';
import { matchScreen, useRouter, type Screen } from '../lib/router.js';
import { useSession } from '../lib/session.js';
import { Button } from './forms.js';

export function LanguageSwitcher() {
  const { t, language, setLanguage } = useI18n();
  return (
    <Select className="language" selectedKey={language} onSelectionChange={(key) => setLanguage(key as Language)}>
      <Label>{t('shell.language')}</Label>
      <AriaButton className="select-button"><SelectValue /><span aria-hidden="true">▾</span></AriaButton>
      <Popover className="popover">
        <ListBox className="listbox">
          {LANGUAGES.map((l) => <ListBoxItem key={l} id={l} className="listbox-item" lang={l}>{LANGUAGE_NAMES[l]}</ListBoxItem>)}
        </ListBox>
      </Popover>
    </Select>
  );
}

function setDocumentTitle(title: string): void {
  document.title = title;
}

/** The navigation entries the person may use, in runs of one group (a group whose entries are all hidden is not shown). */
function navGroups(allowed: readonly Screen[]): { group: MessageKey | undefined; entries: Screen[] }[] {
  const groups: { group: MessageKey | undefined; entries: Screen[] }[] = [];
  for (const screen of allowed.filter((s) => s.nav)) {
    const last = groups.at(-1);
    if (last && last.group === screen.group) last.entries.push(screen);
    else groups.push({ group: screen.group, entries: [screen] });
  }
  return groups;
}

export interface ShellProps {
  /** The entry's name in the header (catalogue key). */
  title: MessageKey;
  screens: readonly Screen[];
  /** Shown when no screen matches, or none is allowed. */
  fallback: MessageKey;
}

export function Shell({ title, screens, fallback }: ShellProps) {
  const { t } = useI18n();
  const { signedIn, signOut, can } = useSession();
  const { base, rest } = useRouter();
  const allowed = screens.filter((s) => s.permission === undefined || can(s.permission));
  // The entry's address alone opens its first screen the person may see.
  const first = allowed.find((s) => s.nav);
  const match = matchScreen(allowed, rest) ?? (rest === '' && first ? { screen: first, params: {} } : null);
  const current = match?.screen;
  useEffect(() => setDocumentTitle(`${current?.nav ? `${t(current.nav)} · ` : ''}${t(title)}`), [current, t, title]);
  return (
    <div className="shell">
      <a className="skip-link" href="#main">{t('shell.skip')}</a>
      <header className="topbar">
        <span className="brand">{t(title)}</span>
        <span className="who">{t('shell.signedInAs', { name: signedIn?.profile.username ?? '' })}</span>
        <LanguageSwitcher />
        <Button variant="secondary" onPress={() => void signOut()}>{t('shell.signOut')}</Button>
      </header>
      <div className="layout">
        <nav aria-label={t('shell.navigation')} className="sidenav">
          {navGroups(allowed).map(({ group, entries }) => (
            <div key={group ?? 'main'} className="nav-group">
              {group && <p className="nav-group-name" id={`nav-${group}`}>{t(group)}</p>}
              <ul aria-labelledby={group ? `nav-${group}` : undefined}>
                {entries.map((s) => {
                  const href = s.path === '' ? base : `${base}/${s.path}`;
                  // A screen without an entry of its own (a user's page) shows its parent as current.
                  const active = current === s || (!current?.nav && s.path !== '' && rest.startsWith(`${s.path}/`));
                  return <li key={s.path}><Link href={href} aria-current={active ? 'page' : undefined} className="nav-link">{t(s.nav!)}</Link></li>;
                })}
              </ul>
            </div>
          ))}
        </nav>
        <main id="main" className="content" tabIndex={-1}>
          {match ? match.screen.render(match.params) : <><Heading level={1}>{t(title)}</Heading><p>{t(fallback)}</p></>}
        </main>
      </div>
    </div>
  );
}
