import { describe, expect, it } from "vitest";
import {
  filtersFromSearch,
  inputFromInstant,
  instantFromInput,
  recordsRequest,
  searchFromFilters,
} from "./audit-filters";

describe("audit filters in the query string", () => {
  it("round-trips the filters that are set, in a fixed order", () => {
    const filters = filtersFromSearch(
      new URLSearchParams("result=DENIED&org=abc&start=2026-11-29T20:00:00Z"),
    );
    expect(filters).toEqual({
      org: "abc",
      actor: "",
      action: "",
      resource: "",
      result: "DENIED",
      start: "2026-11-29T20:00:00Z",
      end: "",
    });
    expect(searchFromFilters(filters)).toBe("?org=abc&result=DENIED&start=2026-11-29T20%3A00%3A00Z");
    expect(searchFromFilters(filtersFromSearch(new URLSearchParams()))).toBe("");
  });
  it("asks for an organization's records only when one is chosen", () => {
    const none = filtersFromSearch(new URLSearchParams("action=registry.push"));
    expect(recordsRequest(none, "", 50)).not.toHaveProperty("uidp");
    expect(recordsRequest({ ...none, org: "o1" }, "t", 50)).toMatchObject({
      uidp: { descendantsOf: "o1" },
      action: "registry.push",
      pageToken: "t",
      pageSize: 50,
    });
  });
  it("reads datetime-local values as UTC", () => {
    expect(instantFromInput("2026-11-29T20:05")).toBe("2026-11-29T20:05:00Z");
    expect(instantFromInput("yesterday")).toBe("yesterday");
    expect(inputFromInstant("2026-11-29T20:05:00Z")).toBe("2026-11-29T20:05");
    expect(inputFromInstant("2026-11-29T20:05:00+01:00")).toBe("");
  });
});
