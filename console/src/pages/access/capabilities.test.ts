import { describe, expect, it } from "vitest";
import { iam } from "wharf/sdk";
import { CAPABILITY_CHOICES, CAPABILITY_GROUPS, capabilityName, groupCapabilities } from "./capabilities";

describe("capability names", () => {
  it("uses the enum's short names and leaves internal-only capabilities out of the choices", () => {
    expect(capabilityName(iam.Capability.CAP_REPO_LIST)).toBe("repo.list");
    expect(capabilityName(iam.Capability.CAP_IAM_ROLE_BINDINGS_CREATE)).toBe("role_bindings.create");
    const names = CAPABILITY_CHOICES.map((c) => c.shortName);
    expect(names).not.toContain("internal");
    expect(names).not.toContain("repo.internal.admin");
    expect(CAPABILITY_CHOICES.some((c) => c.capability === iam.Capability.UNKNOWN)).toBe(false);
    expect(capabilityName(99999 as iam.Capability)).toBe("capability 99999");
  });
});

describe("groupCapabilities", () => {
  it("groups by resource in order of first appearance, verbs in the given order", () => {
    const groups = groupCapabilities([
      iam.Capability.CAP_REPO_LIST,
      iam.Capability.CAP_REPO_BLOBS_GET,
      iam.Capability.CAP_IAM_ROLE_BINDINGS_DELETE,
      iam.Capability.CAP_REPO_CREATE,
      iam.Capability.CAP_IAM_ROLE_BINDINGS_LIST,
    ]);
    expect(groups.map((g) => [g.resource, g.label, g.capabilities.map((c) => c.verb)])).toEqual([
      ["repo", "Repo", ["list", "create"]],
      ["repo.blobs", "Repo blobs", ["get"]],
      ["role_bindings", "Role bindings", ["delete", "list"]],
    ]);
  });

  it("puts numbers it does not know under Other instead of dropping them", () => {
    const groups = groupCapabilities([iam.Capability.CAP_TAG_LIST, 4242 as iam.Capability]);
    expect(groups.map((g) => g.label)).toEqual(["Tag", "Other"]);
    expect(groups[1]?.capabilities[0]?.shortName).toBe("capability 4242");
  });

  it("offers every choice exactly once in the picker's groups", () => {
    const picked = CAPABILITY_GROUPS.flatMap((g) => g.capabilities.map((c) => c.capability));
    expect(picked).toHaveLength(CAPABILITY_CHOICES.length);
    expect(new Set(picked).size).toBe(picked.length);
    expect(
      CAPABILITY_GROUPS.find((g) => g.resource === "identity_providers")?.capabilities.map((c) => c.verb),
    ).toEqual(["create", "update", "list", "delete"]);
  });
});
