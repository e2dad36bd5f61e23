/**
 * A deletion asked for on this page: requesting it ends every session of the account (this one
 * included), so the page signs out and shows, instead of the sign-in form, when the account will
 * be erased and how to cancel. Kept in memory only, for this page.
 */
import { useSyncExternalStore } from 'react';

export interface ErasureRequested {
  erasure_id: string;
  requested_at: string;
  erase_after: string;
  sessions_ended: number;
}

let current: ErasureRequested | null = null;
const listeners = new Set<() => void>();

export function setErasure(next: ErasureRequested | null): void {
  current = next;
  for (const l of listeners) l();
}

export function useErasure(): ErasureRequested | null {
  return useSyncExternalStore((l) => {
    listeners.add(l);
    return () => listeners.delete(l);
  }, () => current);
}
