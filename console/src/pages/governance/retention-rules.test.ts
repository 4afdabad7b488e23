import { describe, expect, it } from "vitest";
import { describeRule, EMPTY_RULE, ruleDraft, ruleFromDraft } from "./retention-rules";

const rule = (fields: Partial<Parameters<typeof describeRule>[0]>) =>
  ({
    repoPattern: "",
    tagPattern: "",
    keepLatest: 0,
    keepPushedWithin: "",
    keepPulledWithin: "",
    ...fields,
  }) as Parameters<typeof describeRule>[0];

describe("retention rule drafts", () => {
  it("sends trimmed text and a whole keepLatest", () => {
    expect(
      ruleFromDraft({ ...EMPTY_RULE, tagPattern: " v* ", keepLatest: "5", keepPushedWithin: "720h " }),
    ).toEqual({
      repoPattern: "",
      tagPattern: "v*",
      keepLatest: 5,
      keepPushedWithin: "720h",
      keepPulledWithin: "",
    });
  });
  it("sends a keepLatest that is no whole number as -1, for the server to refuse", () => {
    expect(ruleFromDraft({ ...EMPTY_RULE, keepLatest: "2.5" }).keepLatest).toBe(-1);
    expect(ruleFromDraft({ ...EMPTY_RULE, keepLatest: "" }).keepLatest).toBe(0);
  });
  it("round-trips a rule through a draft", () => {
    const r = rule({ repoPattern: "app/*", keepLatest: 3, keepPulledWithin: "24h" });
    expect(ruleFromDraft(ruleDraft(r))).toEqual({
      repoPattern: "app/*",
      tagPattern: "",
      keepLatest: 3,
      keepPushedWithin: "",
      keepPulledWithin: "24h",
    });
  });
  it("describes a rule in a line", () => {
    expect(describeRule(rule({ tagPattern: "v*", keepLatest: 5, keepPushedWithin: "720h" }))).toBe(
      "tags v*: keep latest 5, pushed within 720h",
    );
    expect(describeRule(rule({ keepPulledWithin: "24h" }))).toBe("all tags: keep pulled within 24h");
  });
});
