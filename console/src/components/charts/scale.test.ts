import { describe, expect, it } from "vitest";
import { byteTicks, DAY_MS, dayTicks, evenlySpaced, linearScale, niceTicks, startOfUtcDay } from "./scale";

describe("linearScale", () => {
  it("maps the domain's ends to the range's ends, inverted ranges included", () => {
    const y = linearScale([0, 10], [200, 0]);
    expect(y(0)).toBe(200);
    expect(y(10)).toBe(0);
    expect(y(5)).toBe(100);
  });
  it("maps a zero-width domain (one point) to the middle of the range", () => {
    const x = linearScale([7, 7], [50, 150]);
    expect(x(7)).toBe(100);
  });
});

describe("niceTicks", () => {
  it("covers the range with round steps", () => {
    expect(niceTicks(0, 9, 4)).toEqual([0, 5, 10]);
    expect(niceTicks(0, 100, 4)).toEqual([0, 50, 100]);
    expect(niceTicks(0, 0.3, 3)).toEqual([0, 0.1, 0.2, 0.3]);
  });
  it("keeps counts whole", () => {
    expect(niceTicks(0, 2, 4, true)).toEqual([0, 1, 2]);
    expect(niceTicks(0, 3, 10, true)).toEqual([0, 1, 2, 3]);
  });
  it("widens an empty range (all zero, one value) to two ticks", () => {
    expect(niceTicks(0, 0, 4, true)).toEqual([0, 1]);
    expect(niceTicks(5, 5, 1, true)).toEqual([5, 6]);
  });
  it("answers a default axis for non-finite input (Math.max of nothing)", () => {
    expect(niceTicks(0, Math.max(), 4)).toEqual([0, 1]);
  });
});

describe("evenlySpaced and dayTicks", () => {
  it("keeps the first and last and spaces the rest", () => {
    expect(evenlySpaced([0, 1, 2, 3, 4, 5, 6, 7, 8], 3)).toEqual([0, 4, 8]);
    expect(evenlySpaced([1, 2], 5)).toEqual([1, 2]);
    expect(evenlySpaced([1, 2, 3], 1)).toEqual([1]);
  });
  it("labels at most `count` midnights inside the range", () => {
    const start = Date.UTC(2026, 0, 1);
    const ticks = dayTicks(start, start + 29 * DAY_MS, 4);
    expect(ticks).toHaveLength(4);
    expect(ticks[0]).toBe(start);
    expect(ticks[3]).toBe(start + 29 * DAY_MS);
    for (const t of ticks) expect(startOfUtcDay(t)).toBe(t);
  });
  it("puts one tick at the start of a range shorter than a day, none outside the range", () => {
    const noon = Date.UTC(2026, 0, 1, 12);
    expect(dayTicks(noon, noon + 3_600_000)).toEqual([noon]);
    expect(dayTicks(noon, noon + DAY_MS)).toEqual([Date.UTC(2026, 0, 2)]);
  });
});

describe("byteTicks", () => {
  it("steps in the unit of the largest value", () => {
    expect(byteTicks(0, 10_000, 4)).toEqual([0, 5120, 10240]);
    expect(byteTicks(0, 7000, 4)).toEqual([0, 2048, 4096, 6144, 8192]);
    expect(byteTicks(0, 3 * 1024 ** 2, 3)).toEqual([0, 1024 ** 2, 2 * 1024 ** 2, 3 * 1024 ** 2]);
  });
  it("keeps whole bytes below a KiB", () => {
    expect(byteTicks(0, 3, 4)).toEqual([0, 1, 2, 3]);
  });
});
