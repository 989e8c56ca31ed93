/**
 * The signed-in session: read once at start (GET /session), replaced by sign-in and invitation
 * acceptance, dropped on sign-out or on any 401. It also hands the CSRF token to the API client.
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { api, request, setCsrfToken } from './api.ts';
import type { Role, SessionView } from './api-types.ts';

interface SessionState {
  /** undefined while the first probe runs; null when signed out. */
  session: SessionView | null | undefined;
  signedIn(session: SessionView): void;
  signedOut(): void;
  signOut(everywhere: boolean): Promise<void>;
}

const SessionContext = createContext<SessionState | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<SessionView | null | undefined>(undefined);

  useEffect(() => {
    let active = true;
    request<SessionView>('GET', '/session', { redirectOnUnauthenticated: false })
      .then((view) => {
        if (!active) return;
        setCsrfToken(view.csrf_token);
        setSession(view);
      })
      .catch(() => {
        // 401, or the server out of reach: the sign-in page follows, and shows its own errors.
        if (active) setSession(null);
      });
    return () => {
      active = false;
    };
  }, []);

  const signedIn = useCallback((view: SessionView) => {
    setCsrfToken(view.csrf_token);
    setSession(view);
  }, []);

  const signedOut = useCallback(() => {
    setCsrfToken(null);
    setSession(null);
  }, []);

  const signOut = useCallback(
    async (everywhere: boolean) => {
      try {
        if (everywhere) await api.post<void>('/session/sign-out-everywhere');
        else await api.delete('/session');
      } finally {
        signedOut();
      }
    },
    [signedOut],
  );

  const value = useMemo(() => ({ session, signedIn, signedOut, signOut }), [session, signedIn, signedOut, signOut]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession outside SessionProvider');
  return state;
}

/** What the role may do, as the contract's table says (the server enforces it anyway). */
export interface Permissions {
  role: Role;
  /** Send, cancel, CSV upload, keys, webhooks, test reports, redelivery. */
  canWrite: boolean;
  /** Team changes and the activity log. */
  isOwner: boolean;
}

export function permissionsOf(role: Role): Permissions {
  return { role, canWrite: role === 'owner' || role === 'developer', isOwner: role === 'owner' };
}

/** The signed-in session inside pages that only render when signed in. */
export function useSignedIn(): SessionView & { permissions: Permissions } {
  const { session } = useSession();
  if (!session) throw new Error('useSignedIn without a session');
  return { ...session, permissions: permissionsOf(session.user.role) };
}
