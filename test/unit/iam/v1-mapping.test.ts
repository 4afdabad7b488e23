import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { DomainError } from "../../../src/core/errors.js";
import { Capability } from "../../../src/gen/platform/capabilities/capabilities_pb.js";
import { groupV1Message } from "../../../src/iam/v1/groups-v1-mapping.js";
import { capabilitiesFromV1Names, roleV1Message } from "../../../src/iam/v1/roles-v1-mapping.js";

describe("v1 IAM shapes", () => {
  it("names a group by id and carries its fields", () => {
    const v1 = groupV1Message({
      uid: "ab12",
      name: "acme",
      description: "d",
      verified: true,
      resourceLimits: { repos: 3 },
    });
    assert.equal(v1.id, "ab12");
    assert.equal(v1.name, "acme");
    assert.equal(v1.description, "d");
    assert.equal(v1.verified, true);
    assert.deepEqual(v1.resourceLimits, { repos: 3 });
  });

  it("names a role's capabilities by friendly name and skips unknown numbers", () => {
    const v1 = roleV1Message({
      uid: "r1",
      name: "viewer",
      capabilities: [Capability.CAP_REPO_LIST, Capability.CAP_IAM_GROUPS_LIST, 999_999 as Capability],
    });
    assert.equal(v1.id, "r1");
    assert.deepEqual(v1.capabilities, ["repo.list", "groups.list"]);
  });

  it("reads friendly names back into capabilities and refuses an unknown one by field", () => {
    assert.deepEqual(capabilitiesFromV1Names("role.capabilities", ["repo.list", "groups.list"]), [
      Capability.CAP_IAM_GROUPS_LIST,
      Capability.CAP_REPO_LIST,
    ]);
    assert.throws(
      () => capabilitiesFromV1Names("role.capabilities", ["repo.list", "repo.fly"]),
      (err: unknown) =>
        err instanceof DomainError && err.code === Code.InvalidArgument && err.message.includes("repo.fly"),
    );
  });
});
