import type { IncomingHttpHeaders } from "node:http";
import { OciError, ociError } from "./oci-errors.js";
import { readBody } from "./read-body.js";
import { type AccessEntry, ANONYMOUS_SUBJECT, type RegistryAction } from "./registry-auth.js";
import { type Exchange, type RegistryDeps, sendJson } from "./registry-request.js";
import { REPOSITORY_NAME } from "./routes.js";

/** Lifetime of registry tokens. Uploads outlive it: a session is authorized when it starts. */
export const REGISTRY_TOKEN_TTL_SECONDS = 300;

const ACTIONS: readonly RegistryAction[] = ["pull", "push", "delete"];

/** Parses `repository:<name>:<actions>` scopes (space-separated and/or repeated); others are ignored. */
export function parseScopes(values: readonly string[]): { name: string; actions: RegistryAction[] }[] {
  const wanted = new Map<string, Set<RegistryAction>>();
  for (const scope of values.flatMap((v) => v.split(" ")).filter(Boolean)) {
    const first = scope.indexOf(":");
    const last = scope.lastIndexOf(":");
    if (first < 0 || last === first || scope.slice(0, first) !== "repository") continue;
    const name = scope.slice(first + 1, last);
    if (!REPOSITORY_NAME.test(name) || name.length > 255) continue;
    const set = wanted.get(name) ?? new Set<RegistryAction>();
    for (const action of scope.slice(last + 1).split(",")) {
      if (action === "*") for (const a of ACTIONS) set.add(a);
      else if ((ACTIONS as readonly string[]).includes(action)) set.add(action as RegistryAction);
    }
    wanted.set(name, set);
  }
  return [...wanted].map(([name, actions]) => ({ name, actions: ACTIONS.filter((a) => actions.has(a)) }));
}

/**
 * GET `/token?service=&scope=…` (or the OAuth2 password-grant form POST): the Docker token flow. Credentials: Basic `_token:<platform token
 * for the registry audience>`, a Bearer of such a token, or none (anonymous: pull in the public
 * namespace only). Each requested action is granted only when the caller's current bindings allow
 * it; the others are left out (a token is still issued, as distribution does). The token inherits
 * the caller's `scope`/`cap` restrictions and never outlives the credential it was exchanged for.
 * 401 for credentials that do not verify; 403 for a token of another audience. With the
 * transparent mirror on, each scope's name is mapped as a request without `ns` is (a Docker Hub
 * name to the `docker.io` upstream's cache), and the grant names the mapped repository.
 */
export async function issueRegistryToken(deps: RegistryDeps, ex: Exchange): Promise<void> {
  const request =
    ex.req.method === "POST"
      ? await oauthForm(ex)
      : { headers: ex.req.headers, scopes: ex.url.searchParams.getAll("scope") };
  const caller = await deps.auth.authenticate(request.headers).catch((err) => {
    // A bad credential at the token endpoint is a plain 401, not a challenge to come back here.
    if (err?.code === "UNAUTHORIZED") throw ociError("UNAUTHORIZED", err.message);
    throw err;
  });
  const principal = caller.principal;
  const now = Math.floor(deps.clock.now() / 1000);
  const credentialExp =
    typeof principal?.claims.exp === "number" ? principal.claims.exp : Number.POSITIVE_INFINITY;
  // The verifier tolerates clock skew; a token from here must still never outlive its credential.
  if (credentialExp <= now) throw ociError("UNAUTHORIZED", "the credential has expired");
  const ttl = Math.min(REGISTRY_TOKEN_TTL_SECONDS, credentialExp - now);
  const access: AccessEntry[] = [];
  for (const scope of parseScopes(request.scopes)) {
    // A mirror client asks for the name it pulls (`library/alpine`); the requests are served from
    // the mapped name, which is what the token must grant (ADR 0053).
    const name = deps.mirror ? await deps.mirror.map(scope.name, undefined) : scope.name;
    const actions = scope.actions;
    const resolved = await deps.resolver.resolve(name);
    const granted = await deps.gate.grantable(caller, resolved, actions);
    if (granted.length > 0) access.push({ type: "repository", name, actions: granted });
  }
  const restrictions = Object.fromEntries(
    ["scope", "cap"].filter((k) => principal?.claims[k] !== undefined).map((k) => [k, principal?.claims[k]]),
  );
  const token = await deps.issuer.mint({
    subject: caller.anonymous ? ANONYMOUS_SUBJECT : (principal?.identityUid as string),
    audience: deps.registryUrl,
    ttlSeconds: ttl,
    extraClaims: { access, ...(caller.anonymous ? {} : restrictions) },
  });
  const response = {
    token,
    access_token: token,
    expires_in: ttl,
    issued_at: new Date(now * 1000).toISOString(),
  };
  sendJson(ex, response, { "cache-control": "no-store" });
}

/** Largest OAuth form body read (a token and a few scopes). */
const MAX_FORM_BYTES = 64 * 1024;

/**
 * The OAuth2 form POST containerd sends first (`grant_type=password`, `username`, `password`,
 * `scope`), as the credential header and scopes of a GET. Other grants (Wharf issues no refresh
 * tokens) are 405, which makes such clients fall back to GET.
 */
async function oauthForm(ex: Exchange): Promise<{ headers: IncomingHttpHeaders; scopes: string[] }> {
  const type = (ex.req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  const unsupported = (why: string) => new OciError("UNSUPPORTED", why, undefined, {}, 405);
  if (type !== "application/x-www-form-urlencoded") {
    ex.req.resume();
    throw unsupported("POST /token takes an OAuth2 form (application/x-www-form-urlencoded); or use GET");
  }
  const body = await readBody(ex.req, MAX_FORM_BYTES, () => {
    throw new OciError("SIZE_INVALID", "the token request form is too large", undefined, {}, 413);
  });
  const form = new URLSearchParams(body.toString("utf8"));
  if (form.get("grant_type") !== "password") throw unsupported("only the password grant is supported");
  const credentials = Buffer.from(`${form.get("username") ?? ""}:${form.get("password") ?? ""}`).toString(
    "base64",
  );
  return { headers: { authorization: `Basic ${credentials}` }, scopes: form.getAll("scope") };
}
