import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, toJson } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { DomainError } from "../../../src/core/errors.js";
import { GroupSchema as GroupV1Schema, OrgStatus } from "../../../src/gen/platform/iam/v1/groups_pb.js";
import {
  Identity_ServicePrincipal,
  IdentitySchema as IdentityV1Schema,
} from "../../../src/gen/platform/iam/v1/identities_pb.js";
import {
  RoleBindingList_BindingSchema,
  RoleBindingSchema,
} from "../../../src/gen/platform/iam/v1/role_bindings_pb.js";
import { RoleSchema as RoleV1Schema } from "../../../src/gen/platform/iam/v1/roles_pb.js";
import { groupV1Message, groupV2Input } from "../../../src/iam/v1/groups-v1-mapping.js";
import { identityV1Message, identityV2Input } from "../../../src/iam/v1/identities-v1-mapping.js";
import {
  roleBindingV1ListItem,
  roleBindingV1Message,
  roleBindingV2Input,
} from "../../../src/iam/v1/role-bindings-v1-mapping.js";

const ORG = "a".repeat(40);
const T1 = timestampFromMs(1_767_225_600_123);
const T2 = timestampFromMs(1_767_312_000_456);

function refusedOn(field: string) {
  return (err: unknown) =>
    err instanceof DomainError && err.code === Code.InvalidArgument && err.message.includes(field);
}

describe("v1 IAM core shapes", () => {
  it("groups: every group is READY with no kind; a body writes only id, name and description", () => {
    const v1 = groupV1Message({ uid: ORG, name: "acme" });
    assert.equal(v1.status, OrgStatus.READY);
    assert.deepEqual(toJson(GroupV1Schema, v1), {
      id: ORG,
      name: "acme",
      status: "ORG_STATUS_READY",
    });
    assert.deepEqual(
      groupV2Input({ ...v1, description: "d", verified: true, resourceLimits: { repos: 9 } }),
      {
        uid: ORG,
        name: "acme",
        description: "d",
      },
    );
  });

  it("identities: timestamps and static keys renamed both ways, claimMatch carried as it is", () => {
    const v1 = identityV1Message({
      uid: `${ORG}/0123456789abcdef`,
      name: "signer",
      createTime: T1,
      updateTime: T2,
      lastSeenTime: T2,
      relationship: {
        case: "staticKeys",
        value: {
          issuer: "https://k.example.com",
          subject: "s",
          issuerKeys: "{}",
          expirationTime: T2,
          audiences: ["a"],
        },
      },
    });
    assert.deepEqual(toJson(IdentityV1Schema, v1), {
      id: `${ORG}/0123456789abcdef`,
      name: "signer",
      createdAt: "2026-01-01T00:00:00.123Z",
      updatedAt: "2026-01-02T00:00:00.456Z",
      lastSeen: "2026-01-02T00:00:00.456Z",
      static: {
        issuer: "https://k.example.com",
        subject: "s",
        issuerKeys: "{}",
        expiration: "2026-01-02T00:00:00.456Z",
        audiences: ["a"],
      },
    });
    const back = identityV2Input(v1);
    assert.equal(back.relationship?.case, "staticKeys");
    assert.deepEqual(back.relationship?.value?.expirationTime, T2);

    const claim = identityV1Message({
      uid: ORG,
      relationship: { case: "claimMatch", value: { issuer: "https://i", subject: "x" } },
    });
    assert.deepEqual(toJson(IdentityV1Schema, claim), {
      id: ORG,
      claimMatch: { issuer: "https://i", subject: "x" },
    });
    assert.equal(identityV2Input(claim).relationship?.case, "claimMatch");
  });

  it("identities: service principals and AWS identities are refused on their field; no relationship passes on", () => {
    const principal = create(IdentityV1Schema, {
      name: "svc",
      relationship: { case: "servicePrincipal", value: Identity_ServicePrincipal.COSIGNED },
    });
    assert.throws(() => identityV2Input(principal), refusedOn("service_principal"));
    const aws = create(IdentityV1Schema, {
      name: "aws",
      relationship: { case: "awsIdentity", value: { awsAccount: "123456789012" } },
    });
    assert.throws(() => identityV2Input(aws), refusedOn("aws_identity"));
    assert.deepEqual(identityV2Input(create(IdentityV1Schema, { id: ORG, name: "n" })), {
      uid: ORG,
      name: "n",
      description: "",
    });
  });

  it("role bindings: written by ids with the group from the id; listed with group and role whole", () => {
    const uid = `${ORG}/0123456789abcdef`;
    const written = roleBindingV1Message({ uid, identityUid: "i", roleUid: "r" });
    assert.deepEqual(toJson(RoleBindingSchema, written), { id: uid, identity: "i", role: "r", group: ORG });
    assert.deepEqual(
      roleBindingV2Input(create(RoleBindingSchema, { id: uid, identity: "i", role: "r", group: "x" })),
      {
        uid,
        identityUid: "i",
        roleUid: "r",
      },
    );

    const v2 = {
      uid,
      identityUid: "i",
      roleUid: "r",
      identity: { uid: "i", email: "e@example.com", issuer: "https://i", subject: "s" },
      group: { uid: ORG, name: "acme" },
      role: { uid: "r", name: "reader" },
      createTime: T1,
    };
    const full = create(RoleV1Schema, { id: "r", name: "reader", capabilities: ["repo.list"] });
    assert.deepEqual(
      toJson(RoleBindingList_BindingSchema, roleBindingV1ListItem(v2, new Map([["r", full]]))),
      {
        id: uid,
        group: { id: ORG, name: "acme", status: "ORG_STATUS_READY" },
        identity: "i",
        role: { id: "r", name: "reader", capabilities: ["repo.list"] },
        email: "e@example.com",
        claimMatchIssuer: "https://i",
        claimMatchSubject: "s",
        createdAt: "2026-01-01T00:00:00.123Z",
      },
    );
    const unlisted = roleBindingV1ListItem(v2, new Map());
    assert.deepEqual(
      unlisted.role?.capabilities,
      [],
      "a role the caller may not list comes without capabilities",
    );
    assert.equal(unlisted.role?.name, "reader");
  });
});
