import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { DomainError } from "../../../../src/core/errors.js";
import { toOciError } from "../../../../src/oci/oci-errors.js";
import { ImmutableTagError } from "../../../../src/registry/content-errors.js";
import { validateTagPatterns } from "../../../../src/registry/immutability/immutability-mapping.js";
import { firstMatching, immutableRuleFor } from "../../../../src/registry/immutability/immutable-rule-for.js";
import {
  denyImmutableRegistryTag,
  isReferrerTag,
  refuseImmutableTag,
} from "../../../../src/registry/immutability/tag-guard.js";
import type {
  ImmutabilityRuleRow,
  ImmutabilityRuleStore,
} from "../../../../src/storage/immutability-store.js";

const ORG = "a".repeat(40);
const FOLDER = `${ORG}/1111111111111111`;
const REPO = `${FOLDER}/2222222222222222`;
const HEX = "0".repeat(64);

function rule(uid: string, parentUid: string, tagPatterns: string[]): ImmutabilityRuleRow {
  return { uid, parentUid, tagPatterns, description: "", createTime: 0, updateTime: 0 };
}

/** A store answering `rules` (in the order given) for the parents asked, recording the asks. */
function storeOf(rules: ImmutabilityRuleRow[]) {
  const asked: string[][] = [];
  const immutabilityRules = {
    async ofParents(parents: readonly string[]) {
      asked.push([...parents]);
      return rules.filter((r) => parents.includes(r.parentUid));
    },
  } as unknown as ImmutabilityRuleStore;
  return { store: { immutabilityRules }, asked };
}

describe("immutability rules", () => {
  it("validates patterns, naming the bad one by index", () => {
    validateTagPatterns(["v*", "!v*-rc*", "release-[0-9]", "?", "[!a]*"]);
    const field = (patterns: string[]) => {
      try {
        validateTagPatterns(patterns);
      } catch (err) {
        assert.ok(err instanceof DomainError);
        assert.equal(err.code, Code.InvalidArgument);
        return err.details.fieldViolations?.[0]?.field;
      }
      return undefined;
    };
    assert.equal(field([]), "tag_patterns");
    assert.equal(field(Array.from({ length: 51 }, (_, i) => `t${i}`)), "tag_patterns");
    assert.equal(field(["ok", "a/b"]), "tag_patterns[1]");
    assert.equal(field(["[abc"]), "tag_patterns[0]");
    assert.equal(field(["!!x"]), "tag_patterns[0]");
    assert.equal(field(["x y"]), "tag_patterns[0]");
    assert.equal(field([""]), "tag_patterns[0]");
  });

  it("matches inclusions minus exclusions, an exclusion-only rule matching everything else", () => {
    const rules = [rule("r1", REPO, ["v*", "!v*-rc*"]), rule("r2", REPO, ["!latest"])];
    assert.equal(firstMatching(rules, "v1.2")?.uid, "r1");
    assert.equal(firstMatching(rules, "v1.2-rc1")?.uid, "r2");
    assert.equal(firstMatching(rules, "latest"), undefined);
    assert.equal(firstMatching([rule("r3", REPO, ["v?.[0-9]"])], "v1.x"), undefined);
    assert.equal(firstMatching([rule("r3", REPO, ["v?.[0-9]"])], "v1.5")?.uid, "r3");
  });

  it("asks once for the repo and every ancestor, and answers the first match", async () => {
    const { store, asked } = storeOf([rule(`${FOLDER}/r`, FOLDER, ["*"]), rule(`${ORG}/r`, ORG, ["v*"])]);
    assert.deepEqual(await immutableRuleFor(store, REPO, "v1"), { uid: `${FOLDER}/r` });
    assert.deepEqual(asked, [[ORG, FOLDER, REPO]]);
  });

  it("never protects referrer fallback tags", async () => {
    assert.ok(isReferrerTag(`sha256-${HEX}`));
    assert.ok(isReferrerTag(`sha256-${HEX}.sig`));
    assert.ok(isReferrerTag(`sha256-${HEX}.att`));
    assert.ok(!isReferrerTag("sha256-abc"));
    assert.ok(!isReferrerTag(`v-sha256-${HEX}`));
    const { store, asked } = storeOf([rule(`${ORG}/r`, ORG, ["*"])]);
    await refuseImmutableTag(store, { uid: `${REPO}/t`, repoUid: REPO, name: `sha256-${HEX}.sig` });
    assert.deepEqual(asked, [], "no read for a fallback tag");
  });

  it("refuses with TAG_IMMUTABLE for the API and a 403 DENIED naming tag, repo and rule for the registry", async () => {
    const { store } = storeOf([rule(`${ORG}/r`, ORG, ["v*"])]);
    await assert.rejects(
      refuseImmutableTag(store, { uid: `${REPO}/t`, repoUid: REPO, name: "v1.2" }),
      (err) => {
        assert.ok(err instanceof DomainError);
        assert.equal(err.code, Code.FailedPrecondition);
        assert.deepEqual(err.details.preconditionViolations, [
          {
            type: "TAG_IMMUTABLE",
            subject: `${REPO}/t`,
            description: `tag v1.2 is immutable (rule ${ORG}/r)`,
          },
        ]);
        return true;
      },
    );
    await refuseImmutableTag(store, { uid: `${REPO}/t`, repoUid: REPO, name: "latest" });
    await assert.rejects(
      denyImmutableRegistryTag(store, { repoUid: REPO, name: "v1.2" }, "acme/app"),
      (err) => {
        assert.ok(err instanceof ImmutableTagError);
        const oci = toOciError(err);
        assert.equal(oci.status, 403);
        assert.equal(oci.code, "DENIED");
        assert.equal(oci.message, `tag v1.2 of acme/app is immutable (rule ${ORG}/r)`);
        return true;
      },
    );
  });
});
