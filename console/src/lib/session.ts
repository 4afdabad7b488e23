// The signed-in session lives in sessionStorage: one tab's, gone when the tab closes, never sent
// anywhere but as the bearer token of API calls.

/** A signed-in session. */
export interface Session {
  /** The platform API token (a JWT). */
  token: string;
  /** How the user signed in. */
  method: "token" | "browser";
  /** The token's expiry (RFC 3339), when known. */
  expiry?: string;
}

const KEY = "wharf.console.session";

/** The stored session, or undefined (none, or unreadable). */
export function loadSession(storage: Storage = window.sessionStorage): Session | undefined {
  try {
    const parsed = JSON.parse(storage.getItem(KEY) ?? "null") as Session | null;
    return parsed && typeof parsed.token === "string" && parsed.token !== "" ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Stores `session` for this tab. */
export function saveSession(session: Session, storage: Storage = window.sessionStorage): void {
  storage.setItem(KEY, JSON.stringify(session));
}

/** Forgets the session (sign out). */
export function clearSession(storage: Storage = window.sessionStorage): void {
  storage.removeItem(KEY);
}

/**
 * The token as pasted: surrounding space and a leading `Bearer ` removed. Undefined when what is
 * left is not shaped like a JWT (three dot-separated base64url parts).
 */
export function normalizeToken(input: string): string | undefined {
  const token = input.trim().replace(/^bearer\s+/i, "");
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token) ? token : undefined;
}

/**
 * When the session ends (ms since the epoch): its recorded expiry, else the token's `exp` claim
 * (read without verifying: the server verifies; this only signs the tab out in time). Undefined
 * when neither is known.
 */
export function sessionEndsAt(session: Session): number | undefined {
  if (session.expiry) {
    const at = Date.parse(session.expiry);
    if (!Number.isNaN(at)) return at;
  }
  try {
    const payload = session.token.split(".")[1] ?? "";
    const json = atob(payload.replace(/-/g, "+").replace(/_/g, "/"));
    const exp = (JSON.parse(json) as { exp?: unknown }).exp;
    return typeof exp === "number" ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}
