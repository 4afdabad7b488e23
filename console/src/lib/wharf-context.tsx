import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from "react";
import {
  Code,
  createWharfClient,
  isWharfApiError,
  staticToken,
  type WharfClient,
  type WhoAmI,
} from "wharf/sdk";
import { clearSession, loadSession, type Session, saveSession } from "./session";

/** What the app knows about the signed-in user and how it reaches the API. */
export interface WharfSession {
  /** The SDK client, with the session's token on every call (anonymous when signed out). */
  client: WharfClient;
  session: Session | undefined;
  /** Who is signed in, once `/auth/v1/ok` answered. */
  me: WhoAmI | undefined;
  /** Checks `session`'s token with the server (who am I) and keeps it; rejects with the server's error. */
  signIn(session: Session): Promise<void>;
  /** Forgets the token. */
  signOut(): void;
}

const WharfContext = createContext<WharfSession | null>(null);

/** A client of the API at `apiUrl` calling with `token` (none: anonymous). */
export function clientFor(apiUrl: string, token: string | undefined): WharfClient {
  return createWharfClient({ apiUrl, ...(token ? { tokenSource: staticToken(token) } : {}) });
}

/**
 * Holds the session (sessionStorage) and the SDK client built on it. A stored token the server no
 * longer accepts (expired, revoked) signs the user out.
 */
export function WharfProvider({ apiUrl, children }: { apiUrl: string; children: ReactNode }) {
  const [session, setSession] = useState(() => loadSession());
  const [me, setMe] = useState<WhoAmI>();
  const client = useMemo(() => clientFor(apiUrl, session?.token), [apiUrl, session]);

  useEffect(() => {
    if (!session || me) return;
    let live = true;
    client.whoAmI().then(
      (who) => live && setMe(who),
      (err: unknown) => {
        if (live && isWharfApiError(err) && err.code === Code.Unauthenticated) {
          clearSession();
          setSession(undefined);
        }
      },
    );
    return () => {
      live = false;
    };
  }, [client, session, me]);

  const signIn = useCallback(
    async (next: Session) => {
      const who = await clientFor(apiUrl, next.token).whoAmI();
      saveSession(next);
      setMe(who);
      setSession(next);
    },
    [apiUrl],
  );
  const signOut = useCallback(() => {
    clearSession();
    setMe(undefined);
    setSession(undefined);
  }, []);

  const value = useMemo(
    () => ({ client, session, me, signIn, signOut }),
    [client, session, me, signIn, signOut],
  );
  return <WharfContext.Provider value={value}>{children}</WharfContext.Provider>;
}

/** The session and client of the nearest {@link WharfProvider}. */
export function useWharf(): WharfSession {
  const value = useContext(WharfContext);
  if (!value) throw new Error("useWharf outside WharfProvider");
  return value;
}

/** The SDK client of the session. */
export function useClient(): WharfClient {
  return useWharf().client;
}
