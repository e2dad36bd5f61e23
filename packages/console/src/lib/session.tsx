/**
 * The signed-in person, for both entries. The SDK (packages/client) holds the tokens and the
 * session key in memory only: nothing is written to localStorage, sessionStorage or a cookie,
 * so a reload or a closed tab is a sign-out. Every body is encrypted (transport encryption: the
 * SDK seals each request and opens each answer), which a server enforcing it requires and any
 * other accepts. The access token is refreshed a minute before it expires; the page signs out
 * when the session ends: the real-time channel closes 4001 (signed out elsewhere, ended by an
 * administrator, idle), it announces this session's end, or a call answers 401 for the session.
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { StrongroomClient, StrongroomError, type RealtimeSubscription, type SignInResponse } from '../../../client/src/index.js';

export interface SignedIn {
  sessionId: string;
  profile: SignInResponse['user_profile'];
  permissions: readonly string[];
}

/** Why the page signed out by itself (shown on the sign-in form). */
export type EndedBy = 'signed_out' | 'session_ended' | 'refresh_failed';

/** Answers that mean this session is over: sign in again. */
const SESSION_OVER = new Set(['SESSION_INVALID', 'SESSION_EXPIRED', 'TOKEN_REVOKED', 'TOKEN_INVALID', 'REFRESH_TOKEN_REUSED', 'NOT_SIGNED_IN']);

export function isSessionOver(err: unknown): boolean {
  return err instanceof StrongroomError && (err.status === 401 || err.status === 0) && SESSION_OVER.has(err.errorCode);
}

interface SessionApi {
  client: StrongroomClient;
  signedIn: SignedIn | null;
  endedBy: EndedBy | null;
  /** Adopts a sign-in answer (password, second factor). */
  adopt(answer: SignInResponse): void;
  signOut(): Promise<void>;
  /** Any route through the SDK; a refusal that ends the session signs the page out. */
  call<T>(method: string, path: string, body?: unknown): Promise<T>;
  can(permission: string): boolean;
}

const SessionContext = createContext<SessionApi | null>(null);

const REFRESH_MARGIN_MS = 60_000;

export function SessionProvider({ children }: { children: ReactNode }) {
  const client = useMemo(() => new StrongroomClient({ baseUrl: window.location.origin, encrypt: true }), []);
  const [signedIn, setSignedIn] = useState<SignedIn | null>(null);
  const [endedBy, setEndedBy] = useState<EndedBy | null>(null);
  const realtime = useRef<RealtimeSubscription | null>(null);

  const forget = useCallback((why: EndedBy) => {
    realtime.current?.close();
    realtime.current = null;
    void client.setSession(null);
    setSignedIn(null);
    setEndedBy(why);
  }, [client]);

  const adopt = useCallback((answer: SignInResponse) => {
    setEndedBy(null);
    setSignedIn({ sessionId: answer.session_id, profile: answer.user_profile, permissions: answer.permissions });
  }, []);

  const signOut = useCallback(async () => {
    try {
      await client.logout();
    } catch {
      // Already over on the server: the page forgets it either way.
    }
    forget('signed_out');
  }, [client, forget]);

  const call = useCallback(async <T,>(method: string, path: string, body?: unknown): Promise<T> => {
    try {
      return await client.request<T>(method, path, body);
    } catch (err) {
      if (isSessionOver(err)) forget('session_ended');
      throw err;
    }
  }, [client, forget]);

  // Refresh a minute before the access token expires (the SDK also refreshes on TOKEN_EXPIRED).
  useEffect(() => {
    if (!signedIn) return undefined;
    const expiresAt = client.getSession()?.accessTokenExpiresAt ?? 0;
    const timer = window.setTimeout(() => {
      client.refresh().then(
        (answer) => setSignedIn((s) => (s ? { ...s, permissions: answer.permissions, profile: answer.user_profile } : s)),
        () => forget('refresh_failed'),
      );
    }, Math.max(5_000, expiresAt - Date.now() - REFRESH_MARGIN_MS));
    return () => window.clearTimeout(timer);
  }, [client, signedIn, forget]);

  // The real-time channel: told at once when this session ends elsewhere.
  useEffect(() => {
    if (!signedIn) return undefined;
    const subscription = client.realtime({
      on: { 'session.ended_elsewhere': (data) => { if (data.session_id === signedIn.sessionId) forget('session_ended'); } },
      onClose: (close) => { if (close.code === 4001) forget('session_ended'); },
    });
    realtime.current = subscription;
    return () => subscription.close();
  }, [client, signedIn?.sessionId]); // eslint-disable-line react-hooks/exhaustive-deps -- one subscription per session

  const can = useCallback((permission: string) => signedIn?.permissions.includes(permission) ?? false, [signedIn]);
  const value = useMemo<SessionApi>(() => ({ client, signedIn, endedBy, adopt, signOut, call, can }), [client, signedIn, endedBy, adopt, signOut, call, can]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionApi {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside SessionProvider');
  return s;
}
