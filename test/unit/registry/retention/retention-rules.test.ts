import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DomainError } from "../../../../src/core/errors.js";
import {
  type JudgedTag,
  scheduleMs,
  tagsToRemove,
  validateRules,
} from "../../../../src/registry/retention/retention-rules.js";
import type { RetentionRuleData } from "../../../../src/storage/retention-store.js";

const H = 3_600_000;
const NOW = 1_800_000_000_000;

const rule = (r: Partial<RetentionRuleData>): RetentionRuleData => ({
  repoPattern: "",
  tagPattern: "",
  keepLatest: 0,
  keepPushedWithin: "",
  keepPulledWithin: "",
  ...r,
});

/** A tag of repo `repoPath` pushed `ageH` hours ago (and pulled `pulledH` hours ago). */
function tag(repoPath: string, name: string, ageH: number, pulledH?: number): JudgedTag {
  return {
    uid: `${repoPath}:${name}`,
    repoUid: repoPath,
    repoPath,
    name,
    digest: `sha256:${name}`,
    pushTime: NOW - ageH * H,
    ...(pulledH === undefined ? {} : { pullTime: NOW - pulledH * H }),
  };
}

const removed = (rules: RetentionRuleData[], tags: JudgedTag[], protect?: (t: JudgedTag) => boolean) =>
  tagsToRemove(rules, tags, NOW, protect).map((r) => r.tag.uid);

function fieldOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof DomainError);
    return err.details?.fieldViolations?.[0]?.field;
  }
  return undefined;
}

describe("retention rules", () => {
  it("keeps the N most recently pushed per repo, ties by name", () => {
    const tags = [tag("a", "x", 3), tag("a", "y", 1), tag("a", "z", 2), tag("b", "x", 9), tag("b", "w", 9)];
    assert.deepEqual(removed([rule({ keepLatest: 1 })], tags), ["a:x", "a:z", "b:x"]);
    assert.deepEqual(removed([rule({ keepLatest: 2 })], tags), ["a:x"]);
  });

  it("keeps by push and pull age, inclusive at the boundary; a tag never pulled is not kept by pulls", () => {
    const tags = [
      tag("a", "old", 100),
      tag("a", "edge", 48),
      tag("a", "new", 1),
      tag("a", "pulled", 100, 24),
    ];
    assert.deepEqual(removed([rule({ keepPushedWithin: "48h" })], tags), ["a:old", "a:pulled"]);
    assert.deepEqual(removed([rule({ keepPulledWithin: "1d" })], tags), ["a:edge", "a:new", "a:old"]);
  });

  it("a tag is kept if ANY rule keeps it; tags no rule's patterns match are removed", () => {
    const tags = [
      tag("app", "v1", 500),
      tag("app", "dev", 500),
      tag("team/tool", "v1", 500),
      tag("team/tool", "v0", 600),
      tag("lib", "x", 1),
    ];
    const rules = [
      rule({ repoPattern: "app", tagPattern: "v*", keepLatest: 5 }),
      rule({ repoPattern: "team/**", keepLatest: 1 }),
    ];
    assert.deepEqual(removed(rules, tags), ["app:dev", "lib:x", "team/tool:v0"]);
    const reasons = tagsToRemove(rules, tags, NOW).map((r) => r.reason);
    assert.match(reasons[0] ?? "", /^no rule matches its repo and tag name \(pushed .*, no pull recorded\)$/);
    assert.match(reasons[2] ?? "", /^the 1 rule matching it keeps it neither by count nor by age/);
  });

  it("keepLatest counts only the tags its patterns match", () => {
    const tags = [tag("a", "v2", 1), tag("a", "dev", 0), tag("a", "v1", 2)];
    assert.deepEqual(removed([rule({ tagPattern: "v*", keepLatest: 1 })], tags), ["a:dev", "a:v1"]);
  });

  it("never removes a protected (immutable) tag", () => {
    const tags = [tag("a", "v1", 100), tag("a", "v2", 100)];
    assert.deepEqual(
      removed([rule({ keepPushedWithin: "1h" })], tags, (t) => t.name === "v1"),
      ["a:v2"],
    );
  });

  it("validates rules, naming the field", () => {
    assert.equal(
      fieldOf(() => validateRules([], false)),
      "rules",
    );
    assert.equal(
      fieldOf(() => validateRules(Array(21).fill(rule({ keepLatest: 1 })), false)),
      "rules",
    );
    assert.equal(
      fieldOf(() => validateRules([rule({ keepPushedWithin: "720" })], false)),
      "rules[0].keepPushedWithin",
    );
    assert.equal(
      fieldOf(() => validateRules([rule({ keepPulledWithin: "0h" })], false)),
      "rules[0].keepPulledWithin",
    );
    assert.equal(
      fieldOf(() => validateRules([rule({ keepLatest: 10_001 })], false)),
      "rules[0].keepLatest",
    );
    assert.equal(
      fieldOf(() => validateRules([rule({ keepLatest: 1.5 })], false)),
      "rules[0].keepLatest",
    );
    assert.equal(
      fieldOf(() => validateRules([rule({ tagPattern: "!v1", keepLatest: 1 })], false)),
      "rules[0].tagPattern",
    );
    assert.equal(
      fieldOf(() => validateRules([rule({ repoPattern: "app", keepLatest: 1 })], true)),
      "rules[0].repoPattern",
    );
    assert.equal(
      fieldOf(() => validateRules([rule({ tagPattern: "v*" })], false)),
      "rules[0]",
    );
    assert.deepEqual(
      validateRules([rule({ repoPattern: "a/**", tagPattern: "v[0-9]*", keepLatest: 3 })], false),
      [rule({ repoPattern: "a/**", tagPattern: "v[0-9]*", keepLatest: 3 })],
    );
  });

  it("schedules: empty is manual; an interval from 1m to 366d", () => {
    assert.equal(scheduleMs(""), 0);
    assert.equal(scheduleMs("24h"), 24 * H);
    assert.equal(scheduleMs("1m"), 60_000);
    for (const bad of ["59s", "367d", "24", "1h30m", " 24h", "daily"]) {
      assert.equal(
        fieldOf(() => scheduleMs(bad)),
        "schedule",
        bad,
      );
    }
  });
});
