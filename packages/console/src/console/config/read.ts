/**
 * Reading a configuration route that reads with a POST and no body (the LDAP and SAML
 * configuration routes: a body writes): its answer or its refusal, as `useApi` does for a GET.
 */
import { useEffect, useState } from 'react';
import { useSession } from '../../lib/session.js';

export function usePostRead<T>(path: string): { data: T | undefined; error: unknown } {
  const { call } = useSession();
  const [state, setState] = useState<{ data?: T; error?: unknown }>({});
  useEffect(() => {
    let live = true;
    call<T>('POST', path, {}).then(
      (data) => { if (live) setState({ data }); },
      (error: unknown) => { if (live) setState({ error }); },
    );
    return () => {
      live = false;
    };
  }, [call, path]);
  return { data: state.data, error: state.error ?? null };
}
