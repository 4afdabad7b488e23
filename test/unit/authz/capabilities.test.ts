import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import {
  ALL_CAPABILITIES,
  capabilityFromEnumName,
  capabilityFromName,
  capabilityFromShortName,
  enumNameOf,
  isInternalOnly,
  isKnownCapability,
  knownCapabilities,
  parseCapabilityNames,
  shortNameOf,
  validateCapabilities,
} from "../../../src/authz/capabilities.js";
import { DomainError } from "../../../src/core/errors.js";
import { Capability } from "../../../src/gen/platform/capabilities/capabilities_pb.js";

// The proto source, parsed independently of protobuf-es, is the oracle for the option values.
const protoText = readFileSync(
  new URL("../../../proto/platform/capabilities/capabilities.proto", import.meta.url),
  "utf8",
);
const protoValues = [...protoText.matchAll(/^\s*(CAP_\w+) = (\d+) \[([^\]]*)\];/gm)].map((m) => ({
  name: m[1] ?? "",
  number: Number(m[2]),
  shortName: /\(short_name\) = "([^"]+)"/.exec(m[3] ?? "")?.[1] ?? "",
  internalOnly: /\(internal_only\) = true/.test(m[3] ?? ""),
}));

function assertInvalidArgument(fn: () => unknown, field: string, pattern: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof DomainError);
    assert.equal(err.code, Code.InvalidArgument);
    assert.equal(err.details.fieldViolations?.[0]?.field, field);
    assert.match(err.message, new RegExp(`^Invalid argument: ${field.replace(/[[\]]/g, "\\$&")}: `));
    assert.match(err.message, pattern);
    return true;
  });
}

describe("capabilities", () => {
  it("lists every enum value but UNKNOWN, ascending", () => {
    assert.ok(protoValues.length > 50, "the proto parse found the values");
    assert.deepEqual(
      ALL_CAPABILITIES,
      protoValues.map((v) => v.number).sort((a, b) => a - b),
    );
    assert.ok(!ALL_CAPABILITIES.includes(Capability.UNKNOWN));
  });

  it("reads short names and internal_only from the proto options", () => {
    for (const v of protoValues) {
      assert.equal(shortNameOf(v.number), v.shortName, v.name);
      assert.equal(isInternalOnly(v.number), v.internalOnly, v.name);
      assert.equal(enumNameOf(v.number), v.name);
      assert.equal(capabilityFromShortName(v.shortName), v.number);
      assert.equal(capabilityFromEnumName(v.name), v.number);
    }
    assert.equal(shortNameOf(Capability.CAP_REPO_LIST), "repo.list");
    assert.equal(capabilityFromShortName("repo.list"), Capability.CAP_REPO_LIST);
    assert.equal(isInternalOnly(Capability.CAP_REPO_INTERNAL_ADMIN), true);
    assert.equal(isInternalOnly(Capability.CAP_REPO_LIST), false);
  });

  it("knows nothing about UNKNOWN or foreign numbers", () => {
    assert.equal(shortNameOf(Capability.UNKNOWN), "");
    assert.equal(isKnownCapability(0), false);
    assert.equal(isKnownCapability(99999), false);
    assert.equal(isKnownCapability(Capability.CAP_TAG_LIST), true);
    assert.equal(capabilityFromName("UNKNOWN"), undefined);
    assert.equal(capabilityFromName("repo.nope"), undefined);
    assert.equal(capabilityFromName("CAP_TAG_LIST"), Capability.CAP_TAG_LIST);
  });

  it("parses name lists: short or enum names, sorted, deduplicated", () => {
    assert.deepEqual(parseCapabilityNames("cap", ["tag.list", "CAP_REPO_LIST", "repo.list", "groups.list"]), [
      Capability.CAP_IAM_GROUPS_LIST,
      Capability.CAP_REPO_LIST,
      Capability.CAP_TAG_LIST,
    ]);
    assertInvalidArgument(
      () => parseCapabilityNames("cap", ["repo.list", "repo.frobnicate"]),
      "cap",
      /repo\.frobnicate/,
    );
  });

  it("validates request numbers, rejecting unknown and internal-only ones", () => {
    assert.deepEqual(validateCapabilities("role.capabilities", [1613, 1605, 1613]), [1605, 1613]);
    assertInvalidArgument(
      () => validateCapabilities("role.capabilities", [0]),
      "role.capabilities",
      /unknown/,
    );
    assertInvalidArgument(
      () => validateCapabilities("role.capabilities", [1605, 4242]),
      "role.capabilities",
      /4242/,
    );
    assertInvalidArgument(
      () =>
        validateCapabilities("role.capabilities", [
          Capability.CAP_REPO_INTERNAL_ADMIN,
          Capability.CAP_INTERNAL,
        ]),
      "role.capabilities",
      /internal-only/,
    );
    assertInvalidArgument(
      () =>
        validateCapabilities("role.capabilities", [Capability.CAP_REPO_INTERNAL_ADMIN], {
          allowInternal: true,
        }),
      "role.capabilities",
      /requires CAP_INTERNAL/,
    );
    assert.deepEqual(
      validateCapabilities(
        "role.capabilities",
        [Capability.CAP_REPO_INTERNAL_ADMIN, Capability.CAP_INTERNAL],
        {
          allowInternal: true,
        },
      ),
      [Capability.CAP_INTERNAL, Capability.CAP_REPO_INTERNAL_ADMIN],
    );
  });

  it("drops unknown stored numbers instead of failing", () => {
    assert.deepEqual(knownCapabilities([1613, 99999, 0, 1605, 1613]), [1605, 1613]);
  });
});
