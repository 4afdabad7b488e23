import { describe, expect, it } from "vitest";
import { parseByteSize, parseCount } from "./byte-size-input";

describe("quota inputs", () => {
  it("reads sizes in bytes, decimal and binary units", () => {
    expect(parseByteSize("1048576")).toBe(1048576n);
    expect(parseByteSize("10 GB")).toBe(10_000_000_000n);
    expect(parseByteSize("1.5MiB")).toBe(1_572_864n);
    expect(parseByteSize(" 2 kib ")).toBe(2048n);
  });
  it("takes empty, 0 and unlimited as no limit", () => {
    expect(parseByteSize("")).toBe(0n);
    expect(parseByteSize("unlimited")).toBe(0n);
    expect(parseByteSize("0")).toBe(0n);
    expect(parseCount("")).toBe(0n);
  });
  it("refuses what is no size or count", () => {
    expect(parseByteSize("ten gigs")).toBeUndefined();
    expect(parseByteSize("5 parsecs")).toBeUndefined();
    expect(parseByteSize("-1")).toBeUndefined();
    expect(parseCount("2.5")).toBeUndefined();
    expect(parseCount("12")).toBe(12n);
  });
});
