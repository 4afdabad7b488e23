import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toJson } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { v1Resource } from "../../../src/core/v1-face-convert.js";
import { VulnerabilityMetadataSchema } from "../../../src/gen/platform/advisory/v1/security_advisory_pb.js";
import { VulnerabilityMetadataSchema as V2MetadataSchema } from "../../../src/gen/platform/advisory/v2/security_advisory_pb.js";
import { IdentitySchema as IdentityV1Schema } from "../../../src/gen/platform/iam/v1/identities_pb.js";
import { RoleBindingSchema as RoleBindingV1Schema } from "../../../src/gen/platform/iam/v1/role_bindings_pb.js";
import { IdentitySchema } from "../../../src/gen/platform/iam/v2/identities_pb.js";
import { RoleBindingSchema } from "../../../src/gen/platform/iam/v2/role_bindings_pb.js";

const T = timestampFromMs(1_767_225_600_000);

describe("v1 resources by table", () => {
  const identity = v1Resource({
    v1: IdentityV1Schema,
    v2: IdentitySchema,
    updatable: ["name", "static_keys"],
  });

  it("renames by V1_RENAMES, converts a message of the other version one level down, copies a oneof", () => {
    const v1 = identity.toV1({
      uid: "u",
      name: "n",
      email: "not in v1",
      createTime: T,
      relationship: { case: "staticKeys", value: { issuer: "i", expirationTime: T } },
    });
    assert.deepEqual(toJson(IdentityV1Schema, v1), {
      id: "u",
      name: "n",
      createdAt: "2026-01-01T00:00:00Z",
      static: { issuer: "i", expiration: "2026-01-01T00:00:00Z" },
    });
  });

  it("writes back only uid and the updatable fields, as an init shape", () => {
    const v2 = identity.toV2({ id: "u", name: "n", description: "not updatable", createdAt: T });
    assert.deepEqual(v2, { uid: "u", name: "n" });
    assert.deepEqual(identity.mask, { paths: ["name", "static_keys"] });
  });

  it("applies a resource's own renames; a field of another kind is left to v1Extras", () => {
    const binding = v1Resource({
      v1: RoleBindingV1Schema,
      v2: RoleBindingSchema,
      updatable: [],
      renames: { identity_uid: "identity" },
      v1Extras: () => ({ group: "from extras" }),
    });
    const v1 = binding.toV1({ uid: "b", identityUid: "i", roleUid: "r", group: { uid: "g" } });
    assert.deepEqual(toJson(RoleBindingV1Schema, v1), { id: "b", identity: "i", group: "from extras" });
  });

  it("a renamed field the other message does not have is read by its own name", () => {
    const metadata = v1Resource({
      v1: VulnerabilityMetadataSchema,
      v2: V2MetadataSchema,
      updatable: [],
      renames: { severities: "severity" },
    });
    const v1 = metadata.toV1({ id: "CVE-1", summary: "s", severities: [{ score: "9" }] });
    assert.equal(v1.id, "CVE-1");
    assert.equal(v1.severity.length, 1);
  });
});
