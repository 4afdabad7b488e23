import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from "react";
import {
  Code,
  createLazyWharfClient,
  isWharfApiError,
  staticToken,
  type WharfClient,
  type WhoAmI,
} from "wharf/sdk";
import { clearSession, loadSession, type Session, saveSession, sessionEndsAt } from "./session";

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

/**
 * A client of the API at `apiUrl` calling with `token` (none: anonymous). Lazy: each domain's
 * service descriptors are loaded (a chunk each) when a page first calls into that domain, so the
 * shell evaluates none of them at start-up.
 */
export function clientFor(apiUrl: string, token: string | undefined): WharfClient {
  return createLazyWharfClient({ apiUrl, ...(token ? { tokenSource: staticToken(token) } : {}) });
}

/**
 * Holds the session (sessionStorage) and the SDK client built on it. A stored token the server no
 * longer accepts (expired, revoked) signs the user out, and so does the token's expiry.
 */
export function WharfProvider({ apiUrl, children }: { apiUrl: string; children: ReactNode }) {
  const [session, setSession] = useState(() => loadSession());
  const [me, setMe] = useState<WhoAmI>();
  const client = useMemo(() => clientFor(apiUrl, session?.token), [apiUrl, session]);
  // The registry credential (an STS exchange) is ready before a page asks for a tag's history.
  useEffect(() => {
    if (session) client.prepareRegistry();
  }, [client, session]);
  const signOut = useCallback(() => {
    clearSession();
    setMe(undefined);
    setSession(undefined);
  }, []);

  useEffect(() => {
    if (!session || me) return;
    let live = true;
    client.whoAmI().then(
      (who) => live && setMe(who),
      (err: unknown) => {
        if (live && isWharfApiError(err) && err.code === Code.Unauthenticated) signOut();
      },
    );
    return () => {
      live = false;
    };
  }, [client, session, me, signOut]);

  // Sign the tab out when the token expires, rather than let every call fail.
  useEffect(() => {
    const endsAt = session ? sessionEndsAt(session) : undefined;
    // setTimeout holds at most about 24 days; a token living longer is checked by the server only.
    if (endsAt === undefined || endsAt - Date.now() > 2 ** 31 - 1) return;
    const timer = setTimeout(signOut, Math.max(0, endsAt - Date.now()));
    return () => clearTimeout(timer);
  }, [session, signOut]);

  const signIn = useCallback(
    async (next: Session) => {
      const who = await clientFor(apiUrl, next.token).whoAmI();
      saveSession(next);
      setMe(who);
      setSession(next);
    },
    [apiUrl],
  );

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
