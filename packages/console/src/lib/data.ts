/** Reading one route for a screen: its answer or its refusal, loaded again when the path changes or on `reload()`. */
import { useCallback, useEffect, useState } from 'react';
import { useSession } from './session.js';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload(): void;
}

export function useApi<T>(path: string): Loaded<T> {
  const { call } = useSession();
  const [version, setVersion] = useState(0);
  const [state, setState] = useState<{ key: string; data?: T; error?: unknown }>({ key: '' });
  const key = `${version} ${path}`;
  useEffect(() => {
    let live = true;
    call<T>('GET', path).then(
      (data) => { if (live) setState({ key, data }); },
      (error: unknown) => { if (live) setState({ key, error }); },
    );
    return () => {
      live = false;
    };
  }, [call, path, key]);
  const reload = useCallback(() => setVersion((v) => v + 1), []);
  // What an earlier path answered is not shown under a new one.
  const current = state.key === key;
  return { data: current ? state.data : undefined, error: current ? state.error : null, loading: !current, reload };
}
