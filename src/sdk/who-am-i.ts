import type { FetchFunction } from "./http.js";
import { bearer, sendForJson } from "./http.js";
import type { TokenSource } from "./token-sources.js";

/** One group where the caller holds a role binding, with that role's capabilities. */
export interface WhoAmIGroup {
  uid: string;
  name: string;
  role: { uid: string; name: string };
  /** Capability names, e.g. `repo.list`. */
  capabilities: string[];
}

/** Who the caller is (`GET /auth/v1/ok`): their identity, whether administrator, and their groups. */
export interface WhoAmI {
  identity: { uid: string; name: string; email: string };
  /** True for the server's administrator identity. */
  admin: boolean;
  /** Per group with a role binding (narrowed by the token's scope and capabilities). */
  groups: WhoAmIGroup[];
}

/**
 * Asks `<apiUrl>/auth/v1/ok` who the token of `tokenSource` belongs to. Rejects with
 * `WharfApiError` (UNAUTHENTICATED for a missing, expired or revoked token).
 */
export async function fetchWhoAmI(
  apiUrl: string,
  tokenSource: TokenSource | undefined,
  fetchFn: FetchFunction = globalThis.fetch,
): Promise<WhoAmI> {
  const token = tokenSource ? await tokenSource.token() : "";
  const body = await sendForJson<Partial<WhoAmI> & Pick<WhoAmI, "identity">>(
    fetchFn,
    new URL("/auth/v1/ok", apiUrl),
    { method: "GET", headers: bearer(token) },
  );
  return { identity: body.identity, admin: body.admin === true, groups: body.groups ?? [] };
}
