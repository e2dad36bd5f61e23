/**
 * The pages' languages: English, Portuguese and French, one small catalogue each (src/i18n).
 * The browser's preferred language picks one; the switcher changes it for this page. English is
 * the reference: the other catalogues are typed against its keys, so a missing message does not
 * compile. React Aria's own strings (its components' labels) follow through its I18nProvider.
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { I18nProvider } from 'react-aria-components';
import { en, type MessageKey } from '../i18n/en.js';
import { fr } from '../i18n/fr.js';
import { pt } from '../i18n/pt.js';

export type Language = 'en' | 'pt' | 'fr';
export const LANGUAGES: readonly Language[] = ['en', 'pt', 'fr'];
const CATALOGUES: Record<Language, Record<MessageKey, string>> = { en, pt, fr };
/** Each language's name in itself, for the switcher. */
/** The locale React Aria formats and speaks in for each language (the build keeps only these: vite.config.ts). */
export const ARIA_LOCALES: Record<Language, string> = { en: 'en-US', pt: 'pt-PT', fr: 'fr-FR' };
export const LANGUAGE_NAMES: Record<Language, string> = { en: 'English', pt: 'Português', fr: 'Français' };

export type { MessageKey };
export type Translate = (key: MessageKey, vars?: Record<string, string | number>) => string;

/** The first of the browser's languages that the pages speak; English otherwise. */
export function preferredLanguage(languages: readonly string[]): Language {
  for (const tag of languages) {
    const primary = tag.toLowerCase().split('-')[0] as Language;
    if (LANGUAGES.includes(primary)) return primary;
  }
  return 'en';
}

/** `{name}` placeholders filled from `vars`. */
export function format(template: string, vars: Record<string, string | number> = {}): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}

interface I18n {
  language: Language;
  setLanguage(language: Language): void;
  t: Translate;
  /** A moment (ISO 8601) as the reader's language writes a date and time; '—' for none. */
  when(iso: string | null): string;
}

const I18nContext = createContext<I18n | null>(null);

export function LanguageProvider({ children }: { children: ReactNode }) {
  const [language, setLanguage] = useState<Language>(() => preferredLanguage(navigator.languages ?? [navigator.language]));
  const t = useCallback<Translate>((key, vars) => format(CATALOGUES[language][key], vars), [language]);
  useEffect(() => {
    document.documentElement.lang = language;
  }, [language]);
  const when = useCallback((iso: string | null) => {
    if (!iso) return '—';
    return new Intl.DateTimeFormat(ARIA_LOCALES[language], { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso));
  }, [language]);
  const value = useMemo(() => ({ language, setLanguage, t, when }), [language, t, when]);
  return (
    <I18nContext.Provider value={value}>
      <I18nProvider locale={ARIA_LOCALES[language]}>{children}</I18nProvider>
    </I18nContext.Provider>
  );
}

export function useI18n(): I18n {
  const i18n = useContext(I18nContext);
  if (!i18n) throw new Error('useI18n outside LanguageProvider');
  return i18n;
}
