/** The security screens' forms: the submitted fields by name, and a busy flag and refusal per form. */
import { useCallback, useState, type FormEvent } from 'react';

export function fieldsOf(e: FormEvent<HTMLFormElement>): Record<string, string> {
  e.preventDefault();
  return Object.fromEntries([...new FormData(e.currentTarget)].map(([k, v]) => [k, String(v)]));
}

export interface Pending {
  busy: boolean;
  error: unknown;
  /** Runs `work`, keeping its refusal in `error`; true when it succeeded. */
  run(work: () => Promise<void>): Promise<boolean>;
  clear(): void;
}

export function usePending(): Pending {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  const clear = useCallback(() => setError(null), []);
  return { busy, error, run, clear };
}
