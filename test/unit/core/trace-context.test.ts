import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatTraceparent, newTraceId, parseTraceparent } from "../../../src/core/trace-context.js";
import { startRequestTrace, traced, tracedCall } from "../../../src/core/tracing.js";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";

describe("W3C traceparent", () => {
  it("parses a valid header and formats it back", () => {
    const parsed = parseTraceparent(`00-${TRACE}-${SPAN}-01`);
    assert.deepEqual(parsed, { traceId: TRACE, spanId: SPAN, sampled: true });
    assert.equal(formatTraceparent(parsed!), `00-${TRACE}-${SPAN}-01`);
    assert.equal(parseTraceparent(`00-${TRACE}-${SPAN}-00`)?.sampled, false);
    assert.equal(
      parseTraceparent(`cc-${TRACE}-${SPAN}-01-future`)?.traceId,
      TRACE,
      "a later version's extra fields",
    );
  });

  it("refuses what the specification says to ignore", () => {
    for (const bad of [
      undefined,
      ["a", "b"],
      "",
      `00-${TRACE}-${SPAN}`,
      `00-${TRACE.toUpperCase()}-${SPAN}-01`,
      `ff-${TRACE}-${SPAN}-01`,
      `00-${"0".repeat(32)}-${SPAN}-01`,
      `00-${TRACE}-${"0".repeat(16)}-01`,
      `00-${TRACE}-${SPAN}-01-extra`,
      `00-${TRACE}-${SPAN}-1`,
      `00-${TRACE}-${SPAN}-01${"x".repeat(600)}`,
    ])
      assert.equal(parseTraceparent(bad as string | undefined), undefined, JSON.stringify(bad));
  });

  it("new trace ids are 32 hex digits, not zero, and differ", () => {
    const ids = new Set(Array.from({ length: 100 }, newTraceId));
    assert.equal(ids.size, 100);
    for (const id of ids) assert.match(id, /^[0-9a-f]{32}$/);
  });
});

describe("tracing off (no tracer installed)", () => {
  it("a request's trace id is the incoming one, else new; there is no span", () => {
    assert.deepEqual(startRequestTrace("GET", `00-${TRACE}-${SPAN}-01`, {}), {
      traceId: TRACE,
      span: undefined,
    });
    const fresh = startRequestTrace("GET", "garbage", {});
    assert.match(fresh.traceId, /^[0-9a-f]{32}$/);
    assert.notEqual(fresh.traceId, TRACE);
  });

  it("traced runs the function as it is; tracedCall hands on the recorded traceparent", async () => {
    assert.equal(await traced("x", {}, async () => 7), 7);
    await assert.rejects(
      traced("x", {}, async () => {
        throw new Error("boom");
      }),
      /boom/,
    );
    const recorded = `00-${TRACE}-${SPAN}-01`;
    assert.equal(await tracedCall("call", recorded, {}, async (traceparent) => traceparent), recorded);
    assert.equal(await tracedCall("call", undefined, {}, async (traceparent) => traceparent), undefined);
  });
});
