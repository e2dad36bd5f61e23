/**
 * Reading one route for a screen: its answer or its refusal, loaded again when the request changes
 * (method, path or body) or on `reload()`. Most reads are a GET; a few routes read with a POST
 * (a list whose filters are a body, a configuration route that writes when given a body).
 */
import { useCallback, useEffect, useState } from 'react';
import { useSession } from './session.js';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload(): void;
}

export interface ReadOptions {
  /** GET unless given. */
  method?: string;
  /** Sent as JSON; its JSON is part of what makes the request the same or another. */
  body?: unknown;
}

export function useApi<T>(path: string, { method = 'GET', body }: ReadOptions = {}): Loaded<T> {
  const { call } = useSession();
  const [version, setVersion] = useState(0);
  const [state, setState] = useState<{ key: string; data?: T; error?: unknown }>({ key: '' });
  // A body written inline is a new object at each render: the request is compared by its JSON.
  const json = body === undefined ? undefined : JSON.stringify(body);
  const key = `${version} ${method} ${path} ${json ?? ''}`;
  useEffect(() => {
    let live = true;
    call<T>(method, path, json === undefined ? undefined : JSON.parse(json)).then(
      (data) => { if (live) setState({ key, data }); },
      (error: unknown) => { if (live) setState({ key, error }); },
    );
    return () => {
      live = false;
    };
  }, [call, method, path, json, key]);
  const reload = useCallback(() => setVersion((v) => v + 1), []);
  // What an earlier request answered is not shown under a new one.
  const current = state.key === key;
  return { data: current ? state.data : undefined, error: current ? state.error : null, loading: !current, reload };
}
