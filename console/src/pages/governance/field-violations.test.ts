import { describe, expect, it } from "vitest";
import { Code, WharfApiError } from "wharf/sdk";
import { violationsAt, violationsUnder } from "./field-violations";

const refusal = new WharfApiError({
  code: Code.InvalidArgument,
  message: "invalid",
  fieldViolations: [
    { field: "tag_patterns[1]", description: "unclosed [" },
    { field: "rules", description: "at least one" },
    { field: "rules[0]", description: "keeps nothing" },
    { field: "rules[0].keepLatest", description: "must be 0 to 1000" },
    { field: "rules[10].tagPattern", description: "bad glob" },
    { field: "rulesets", description: "not a rule" },
  ],
});

describe("field violations of list fields", () => {
  it("takes a field's violations and those of its elements and their fields", () => {
    expect(violationsUnder(refusal, "tag_patterns").map((v) => v.field)).toEqual(["tag_patterns[1]"]);
    expect(violationsUnder(refusal, "rules[0]").map((v) => v.field)).toEqual([
      "rules[0]",
      "rules[0].keepLatest",
    ]);
    expect(violationsUnder(refusal, "rules").map((v) => v.field)).toEqual([
      "rules",
      "rules[0]",
      "rules[0].keepLatest",
      "rules[10].tagPattern",
    ]);
  });
  it("takes exactly one field's violations", () => {
    expect(violationsAt(refusal, "rules[0]").map((v) => v.description)).toEqual(["keeps nothing"]);
    expect(violationsAt(refusal, "rules[1]")).toEqual([]);
  });
  it("finds none in anything but an API error", () => {
    expect(violationsUnder(new Error("network"), "rules")).toEqual([]);
    expect(violationsAt(undefined, "rules")).toEqual([]);
  });
});
