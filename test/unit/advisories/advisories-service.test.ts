import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { advisoryFilterOf, MAX_FILTER_VALUES } from "../../../src/advisories/advisories-service.js";
import type { DomainError } from "../../../src/core/errors.js";
import {
  EventTypeFilter,
  ListAdvisoriesRequestSchema,
  ReviewState,
} from "../../../src/gen/platform/vulnerabilities/v2/advisories_pb.js";

const request = (init: Parameters<typeof create<typeof ListAdvisoriesRequestSchema>>[1]) =>
  create(ListAdvisoriesRequestSchema, init);

function fieldOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return (err as DomainError).details.fieldViolations?.[0]?.field;
  }
  return undefined;
}

describe("advisoryFilterOf", () => {
  it("maps enums to stored names, drops UNSPECIFIED and empty values, trims the query", () => {
    const filter = advisoryFilterOf(
      request({
        eventTypes: [EventTypeFilter.UNSPECIFIED, EventTypeFilter.FIX_NOT_PLANNED, EventTypeFilter.PATCHED],
        eventReviewStates: [ReviewState.REQUEST_CHANGES, ReviewState.UNSPECIFIED],
        latestEventType: EventTypeFilter.FALSE_POSITIVE_DETERMINATION,
        aliases: ["CVE-1", "", "CVE-1"],
        query: "  Net  ",
        origin: "glibc",
      }),
    );
    assert.deepEqual(filter.eventTypes, ["fix-not-planned", "patched"]);
    assert.deepEqual(filter.eventReviewStates, ["request-changes"]);
    assert.equal(filter.latestEventType, "false-positive-determination");
    assert.deepEqual(filter.aliases, ["CVE-1"]);
    assert.equal(filter.query, "Net");
    assert.equal(filter.origin, "glibc");
    assert.equal(advisoryFilterOf(request({})).latestEventType, undefined, "UNSPECIFIED is no filter");
  });

  it("refuses oversized filters, naming the field", () => {
    const many = Array.from({ length: MAX_FILTER_VALUES + 1 }, (_, i) => `CVE-${i}`);
    assert.equal(
      fieldOf(() => advisoryFilterOf(request({ aliases: many }))),
      "aliases",
    );
    assert.equal(
      fieldOf(() => advisoryFilterOf(request({ excludeEventAuthors: many }))),
      "exclude_event_authors",
    );
    assert.equal(
      fieldOf(() => advisoryFilterOf(request({ query: "x".repeat(257) }))),
      "query",
    );
    assert.equal(
      fieldOf(() => advisoryFilterOf(request({ aliases: many.slice(1) }))),
      undefined,
      "1000 is fine",
    );
  });
});
