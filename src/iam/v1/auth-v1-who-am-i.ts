import { create } from "@bufbuild/protobuf";
import { toTimestamp } from "../../core/api-convert.js";
import type { Principal } from "../../core/context.js";
import { type WhoAmI, WhoAmISchema } from "../../gen/platform/auth/v1/auth_pb.js";
import type { IdentityRow } from "../../storage/iam-store.js";
import { groupMessage } from "../group-mapping.js";
import { roleMessage } from "../role-mapping.js";
import type { CallerGrant } from "../who-am-i.js";
import { groupV1Message } from "./groups-v1-mapping.js";
import { roleV1Message } from "./roles-v1-mapping.js";

/**
 * The v1 WhoAmI of a caller: the token's claims (`iss`, `sub`, `aud`, `exp`, `iat`), each grant
 * as `{group: Group, role: Role, capabilities}` in the hosted service's shape, the identity's
 * email and name (as `profile.name`), and the same facts in Wharf's earlier shape (`identity`,
 * `admin`, `groups`) that the CLI reads.
 */
export function whoAmIV1Message(
  principal: Principal,
  identity: IdentityRow | undefined,
  grants: readonly CallerGrant[],
): WhoAmI {
  const { claims } = principal;
  const email = identity?.email ?? "";
  const name = identity?.name ?? "";
  return create(WhoAmISchema, {
    issuer: stringClaim(claims.iss),
    subject: principal.identityUid,
    audience:
      typeof claims.aud === "string" ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud.map(String) : [],
    expiry: secondsClaim(claims.exp),
    issuedAt: secondsClaim(claims.iat),
    capabilities: grants.map((g) => ({
      group: groupV1Message(groupMessage(g.group)),
      role: roleV1Message(roleMessage(g.role)),
      capabilities: g.capabilities,
    })),
    email,
    profile: { name },
    identity: { uid: principal.identityUid, name, email },
    admin: principal.isAdmin,
    groups: grants.map((g) => ({
      uid: g.group.uid,
      name: g.group.name,
      role: { uid: g.role.uid, name: g.role.name },
      capabilities: g.capabilities,
    })),
  });
}

function stringClaim(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** A NumericDate claim (seconds since the epoch) as a Timestamp; absent when the claim is. */
function secondsClaim(value: unknown) {
  return typeof value === "number" ? toTimestamp(value * 1000) : undefined;
}
