/**
 * A small router for the two entries: each has a base (`/console`, `/account`) and a list of
 * screens (src/console/screens.ts, src/account/screens.ts). A screen is one file plus one entry
 * in its list: its path pattern (`users/:id`), its navigation label, and the permission it needs.
 * Links go through React Aria's RouterProvider, so its Link, Button and table rows navigate in
 * the page (history.pushState) instead of reloading it.
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { RouterProvider } from 'react-aria-components';
import type { MessageKey } from './i18n.js';

export interface Screen {
  /** Under the entry's base, without slashes at either end; `:name` matches one segment. `''` is the entry's home. */
  path: string;
  /** Its entry in the navigation; absent for screens reached from another (a user's page). */
  nav?: MessageKey;
  /** The heading its navigation entry is listed under (entries of one group are listed together, in order). */
  group?: MessageKey;
  /** The permission it needs; absent: anyone signed in. The API refuses the rest anyway. */
  permission?: string;
  render(params: Record<string, string>): ReactNode;
}

export interface Match {
  screen: Screen;
  params: Record<string, string>;
}

/** The first screen whose pattern matches `rest` (the path under the base). */
export function matchScreen(screens: readonly Screen[], rest: string): Match | null {
  const parts = rest.split('/').filter((p) => p !== '');
  for (const screen of screens) {
    const pattern = screen.path.split('/').filter((p) => p !== '');
    if (pattern.length !== parts.length) continue;
    const params: Record<string, string> = {};
    if (pattern.every((p, i) => (p.startsWith(':') ? ((params[p.slice(1)] = decodeURIComponent(parts[i]!)), true) : p === parts[i]))) return { screen, params };
  }
  return null;
}

interface Router {
  base: string;
  /** The path under the base, without a leading slash. */
  rest: string;
  navigate(href: string): void;
}

const RouterContext = createContext<Router | null>(null);

function restOf(base: string): string {
  const path = window.location.pathname;
  return path.startsWith(base) ? path.slice(base.length).replace(/^\/+|\/+$/g, '') : '';
}

export function PageRouter({ base, children }: { base: string; children: ReactNode }) {
  const [rest, setRest] = useState(() => restOf(base));
  useEffect(() => {
    const onPop = () => setRest(restOf(base));
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, [base]);
  const navigate = useCallback((href: string) => {
    window.history.pushState(null, '', href);
    setRest(restOf(base));
    window.scrollTo(0, 0);
  }, [base]);
  const value = useMemo(() => ({ base, rest, navigate }), [base, rest, navigate]);
  return (
    <RouterContext.Provider value={value}>
      <RouterProvider navigate={navigate}>{children}</RouterProvider>
    </RouterContext.Provider>
  );
}

export function useRouter(): Router {
  const r = useContext(RouterContext);
  if (!r) throw new Error('useRouter outside PageRouter');
  return r;
}

/** `href('users', id)`: a path under the entry's base. */
export function useHref(): (...parts: string[]) => string {
  const { base } = useRouter();
  return useCallback((...parts: string[]) => [base, ...parts.map(encodeURIComponent)].join('/'), [base]);
}
