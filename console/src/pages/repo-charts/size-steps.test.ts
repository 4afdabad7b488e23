import { describe, expect, it } from "vitest";
import { digestsOf, recentRecords, sizeSteps } from "./size-steps";

const record = (time: string, digest: string, deleted = false) => ({
  updateTimestamp: time,
  digest,
  deleted,
});

describe("sizeSteps", () => {
  const history = [
    record("2026-11-01T10:00:00.000Z", "sha256:a"),
    record("2026-11-02T10:00:00.000Z", "sha256:a"),
    record("2026-11-03T10:00:00.000Z", "sha256:b"),
    record("2026-11-04T10:00:00.000Z", "", true),
    record("2026-11-05T10:00:00.000Z", "sha256:b"),
    record("2026-11-06T10:00:00.000Z", "sha256:c"),
  ];
  it("puts a point at each move with the new image's size, a re-push of the same digest being no move", () => {
    const sizes = new Map([
      ["sha256:a", 100],
      ["sha256:b", 300],
      ["sha256:c", 200],
    ]);
    expect(sizeSteps(history, sizes)).toEqual([
      { x: Date.parse("2026-11-01T10:00:00.000Z"), y: 100 },
      { x: Date.parse("2026-11-03T10:00:00.000Z"), y: 300 },
      { x: Date.parse("2026-11-05T10:00:00.000Z"), y: 300 },
      { x: Date.parse("2026-11-06T10:00:00.000Z"), y: 200 },
    ]);
  });
  it("skips digests of unknown size", () => {
    expect(sizeSteps(history, new Map([["sha256:c", 5]]))).toEqual([
      { x: Date.parse("2026-11-06T10:00:00.000Z"), y: 5 },
    ]);
    expect(sizeSteps([], new Map())).toEqual([]);
  });
  it("lists the distinct digests, deletions left out", () => {
    expect(digestsOf(history)).toEqual(["sha256:a", "sha256:b", "sha256:c"]);
  });
});

describe("recentRecords", () => {
  const r = (digest: string) => record("2026-11-01T10:00:00.000Z", digest);
  it("keeps the longest tail with at most N distinct images", () => {
    const history = [r("sha256:a"), r("sha256:b"), r("sha256:a"), r("sha256:c"), r("sha256:b")];
    const two = recentRecords(history, 2);
    expect(two.truncated).toBe(true);
    expect(two.records.map((x) => x.digest)).toEqual(["sha256:c", "sha256:b"]);
    expect(recentRecords(history, 3)).toEqual({ records: history, truncated: false });
  });
  it("does not count deletions as images", () => {
    const history = [r("sha256:a"), record("2026-11-02T10:00:00.000Z", "", true), r("sha256:b")];
    expect(recentRecords(history, 2).truncated).toBe(false);
  });
});
