// Pull tokens made in the browser, the way `wharf auth pull-token create` makes them (see
// docs/cli.md): a static-keys identity whose key pair exists only during this call, bound to the
// built-in registry.pull role, and one JWT signed with it. Web Crypto does the signing, so the
// private key never leaves the page and is dropped when the call returns.
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, type iam, WharfApiError, type WharfClient } from "wharf/sdk";

/** The `iss` of pull-token identities: the CLI's, so both list and revoke each other's tokens. */
export const PULL_TOKEN_ISSUER = "https://pull-tokens.wharf.invalid";

/** The built-in role a pull token is bound to. */
export const PULL_ROLE_NAME = "registry.pull";

/** A created pull token: the registry's Basic credentials. */
export interface CreatedPullToken {
  /** The identity's uid. */
  username: string;
  /** The signed JWT. */
  password: string;
  registryUrl: string;
  /** RFC 3339. */
  expiry: string;
}

/** Whether `identity` is a pull token (a static-keys identity of {@link PULL_TOKEN_ISSUER}). */
export function isPullToken(identity: iam.Identity): boolean {
  return (
    identity.relationship.case === "staticKeys" && identity.relationship.value.issuer === PULL_TOKEN_ISSUER
  );
}

/**
 * Creates a pull token for `parent` valid `ttlSeconds`: generates an ES256 key pair, creates the
 * static-keys identity (random subject, the public JWKS, expiry, the registry as audience), binds
 * `registry.pull` at `parent` and signs the password. A failed binding deletes the identity again.
 * Rejects with the server's WharfApiError.
 */
export async function createPullToken(
  client: WharfClient,
  request: { parent: string; ttlSeconds: number; name?: string; now?: number },
): Promise<CreatedPullToken> {
  const now = request.now ?? Date.now();
  const registryUrl = await client.registryUrl();
  const role = (await client.iam.roles.listRoles({ name: PULL_ROLE_NAME, uidp: { inRoot: true } })).roles[0];
  if (!role) {
    throw new WharfApiError({
      code: Code.FailedPrecondition,
      message: `the built-in role ${PULL_ROLE_NAME} is missing`,
    });
  }
  const keys = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, [
    "sign",
    "verify",
  ])) as CryptoKeyPair;
  const kid = randomHex(8);
  const publicJwk = {
    ...(await crypto.subtle.exportKey("jwk", keys.publicKey)),
    kid,
    alg: "ES256",
    use: "sig",
  };
  delete publicJwk.key_ops;
  delete publicJwk.ext;
  const subject = randomHex(16);
  const exp = Math.floor(now / 1000) + request.ttlSeconds;
  const expiry = new Date(exp * 1000);
  const identity = await client.iam.identities.createIdentity({
    parent: request.parent,
    identity: {
      name: request.name?.trim() || `pull-token-${randomHex(4)}`,
      description: `Pull token (expires ${expiry.toISOString()})`,
      relationship: {
        case: "staticKeys",
        value: {
          issuer: PULL_TOKEN_ISSUER,
          subject,
          issuerKeys: JSON.stringify({ keys: [publicJwk] }),
          expirationTime: timestampFromDate(expiry),
          audiences: [registryUrl],
        },
      },
    },
  });
  try {
    await client.iam.roleBindings.createRoleBinding({
      parent: request.parent,
      roleBinding: { identityUid: identity.uid, roleUid: role.uid },
    });
  } catch (err) {
    await client.iam.identities.deleteIdentity({ uid: identity.uid }).catch(() => undefined);
    throw err;
  }
  const password = await signEs256Jwt(
    keys.privateKey,
    { alg: "ES256", kid, typ: "JWT" },
    { iss: PULL_TOKEN_ISSUER, sub: subject, aud: registryUrl, iat: Math.floor(now / 1000), exp },
  );
  return { username: identity.uid, password, registryUrl, expiry: expiry.toISOString() };
}

/**
 * Revokes a pull token the way the CLI does: deletes each of its role bindings (access ends with
 * the first), then the identity. Resolves to the number of bindings deleted.
 */
export async function revokePullToken(client: WharfClient, uid: string): Promise<number> {
  let deleted = 0;
  for (let round = 0; round < MAX_REVOKE_ROUNDS; round++) {
    const page = await client.iam.roleBindings.listRoleBindings({ identity: uid, pageSize: 200 });
    if (page.roleBindings.length === 0) {
      await client.iam.identities.deleteIdentity({ uid });
      return deleted;
    }
    for (const binding of page.roleBindings) {
      await client.iam.roleBindings.deleteRoleBinding({ uid: binding.uid });
      deleted++;
    }
  }
  throw new WharfApiError({
    code: Code.Aborted,
    message: `${uid} still has role bindings after deleting ${deleted}: try again`,
  });
}

/** Most rounds of listing and deleting bindings before giving up (200 bindings a round). */
const MAX_REVOKE_ROUNDS = 50;

/** A compact JWS (ES256) of `claims`: Web Crypto's ECDSA signature is already the raw r‖s JWS wants. */
export async function signEs256Jwt(
  key: CryptoKey,
  header: Record<string, unknown>,
  claims: Record<string, unknown>,
): Promise<string> {
  const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  const signature = await crypto.subtle.sign(
    { name: "ECDSA", hash: "SHA-256" },
    key,
    new TextEncoder().encode(input),
  );
  return `${input}.${base64url(new Uint8Array(signature))}`;
}

function base64url(data: string | Uint8Array): string {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function randomHex(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) =>
    b.toString(16).padStart(2, "0"),
  ).join("");
}
