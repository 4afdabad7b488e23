import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { addUtcMonths, eolStateAt } from "../../../../src/registry/eol/eol-status.js";
import type { EolCycleRow } from "../../../../src/storage/eol-store.js";

const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`);

function cycle(more: Partial<EolCycleRow>): EolCycleRow {
  return {
    product: "p",
    cycle: "1",
    codename: "",
    eolUndated: false,
    lts: false,
    latestVersion: "",
    ...more,
  };
}

describe("eolStateAt: the three windows and the grace statuses", () => {
  const eol = cycle({ eolDate: day("2025-04-30") });

  it("before the EOL date: active, eligible for grace, expiry = EOL + 6 months", () => {
    const state = eolStateAt(eol, day("2025-04-29") + 86_399_999, 6);
    assert.deepEqual(state, {
      tagStatus: "ACTIVE",
      graceStatus: "ELIGIBLE",
      gracePeriodExpiryDate: day("2025-10-30"),
      eolBroken: false,
      pastEol: false,
    });
  });

  it("from the EOL date until the expiry: in grace, grace active, past EOL", () => {
    for (const at of [day("2025-04-30"), day("2025-10-30") - 1]) {
      const state = eolStateAt(eol, at, 6);
      assert.equal(state.tagStatus, "IN_GRACE");
      assert.equal(state.graceStatus, "ACTIVE");
      assert.equal(state.pastEol, true);
    }
  });

  it("from the expiry on: inactive, grace expired", () => {
    const state = eolStateAt(eol, day("2025-10-30"), 6);
    assert.equal(state.tagStatus, "INACTIVE");
    assert.equal(state.graceStatus, "EXPIRED");
  });

  it("a grace period of 0 months goes straight from active (not eligible) to inactive", () => {
    assert.equal(eolStateAt(eol, day("2025-04-01"), 0).graceStatus, "NOT_ELIGIBLE");
    assert.equal(eolStateAt(eol, day("2025-04-30"), 0).tagStatus, "INACTIVE");
  });

  it("no cycle, or no EOL date: active and not eligible; EOL without a date: inactive and broken", () => {
    for (const c of [undefined, cycle({})]) {
      assert.deepEqual(eolStateAt(c, day("2030-01-01"), 6), {
        tagStatus: "ACTIVE",
        graceStatus: "NOT_ELIGIBLE",
        eolBroken: false,
        pastEol: false,
      });
    }
    const broken = eolStateAt(cycle({ eolUndated: true }), day("2020-01-01"), 6);
    assert.deepEqual(broken, {
      tagStatus: "INACTIVE",
      graceStatus: "BROKEN",
      eolBroken: true,
      pastEol: true,
    });
  });

  it("addUtcMonths clamps to the end of shorter months and crosses years", () => {
    assert.equal(addUtcMonths(day("2025-08-31"), 6), day("2026-02-28"));
    assert.equal(addUtcMonths(day("2023-08-31"), 6), day("2024-02-29"));
    assert.equal(addUtcMonths(day("2025-01-15"), 0), day("2025-01-15"));
    assert.equal(addUtcMonths(day("2025-12-01") + 5000, 1), day("2026-01-01") + 5000);
  });
});
