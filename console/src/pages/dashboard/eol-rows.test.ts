import { describe, expect, it } from "vitest";
import { DAY_MS, type EolTagLike, eolRowsOf } from "./eol-rows";

const NOW = Date.parse("2026-11-29T12:00:00Z");
const ts = (ms: number) => ({ seconds: BigInt(Math.floor(ms / 1000)), nanos: 0 }) as never;
const tag = (
  name: string,
  version: Partial<NonNullable<EolTagLike["mainPackageVersion"]>> | undefined,
): EolTagLike => ({
  id: `org/0123456789abcdef/${name.padStart(16, "0")}`,
  name,
  mainPackageName: "python",
  mainPackageVersion: version && { exists: true, version: name, eolBroken: false, ...version },
});

describe("eolRowsOf", () => {
  it("keeps tags past end of life and within 90 days of it, past first, then soonest", () => {
    const rows = eolRowsOf(
      [
        tag("far", { eolDate: ts(NOW + 91 * DAY_MS) }),
        tag("near", { eolDate: ts(NOW + 30 * DAY_MS) }),
        tag("sooner", { eolDate: ts(NOW + 2 * DAY_MS) }),
        tag("past", { eolDate: ts(NOW - 10 * DAY_MS) }),
        tag("today", { eolDate: ts(NOW) }),
        tag("broken", { eolBroken: true }),
        tag("undated", {}),
        tag("nocycle", { exists: false, eolDate: ts(NOW - DAY_MS) }),
        tag("norule", undefined),
      ],
      NOW,
    );
    expect(rows.map((r) => [r.tag, r.past])).toEqual([
      ["broken", true],
      ["past", true],
      ["today", true],
      ["sooner", false],
      ["near", false],
    ]);
    expect(rows[0]?.repoUid).toBe("org/0123456789abcdef");
    expect(rows[0]?.eolTime).toBeUndefined();
  });
});
