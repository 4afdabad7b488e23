import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, toJson } from "@bufbuild/protobuf";
import { TimestampSchema } from "@bufbuild/protobuf/wkt";
import { timestampToJson } from "../../../src/codec/timestamp-json.js";

/** What protobuf-es writes (the reference), or the error it throws. */
function reference(seconds: bigint, nanos: number): string | Error {
  try {
    return toJson(TimestampSchema, create(TimestampSchema, { seconds, nanos })) as string;
  } catch (err) {
    return err as Error;
  }
}

function ours(seconds: bigint, nanos: number): string | Error {
  try {
    return timestampToJson(seconds, nanos);
  } catch (err) {
    return err as Error;
  }
}

function assertSame(seconds: bigint, nanos: number): void {
  const want = reference(seconds, nanos);
  const got = ours(seconds, nanos);
  if (want instanceof Error)
    assert.ok(got instanceof Error, `${seconds}s ${nanos}ns: expected a throw, got ${got}`);
  else assert.equal(got, want, `${seconds}s ${nanos}ns`);
}

const MIN = -62_135_596_800n;
const MAX = 253_402_300_799n;

describe("timestampToJson", () => {
  it("writes 0, 3, 6 or 9 fractional digits, like protobuf-es", () => {
    assert.equal(timestampToJson(0n, 0), "1970-01-01T00:00:00Z");
    assert.equal(timestampToJson(1_700_000_000n, 120_000_000), "2023-11-14T22:13:20.120Z");
    assert.equal(timestampToJson(1_700_000_000n, 1_000), "2023-11-14T22:13:20.000001Z");
    assert.equal(timestampToJson(1_700_000_000n, 1), "2023-11-14T22:13:20.000000001Z");
    for (const nanos of [
      0, 1, 10, 999, 1_000, 1_001, 999_000, 1_000_000, 10_000_000, 123_456_789, 999_999_999,
    ]) {
      assertSame(1_700_000_000n, nanos);
    }
  });

  it("matches at the range ends, around epoch, leap days and century years", () => {
    const day = 86_400n;
    const cases = [
      MIN,
      MIN + 1n,
      MAX,
      MAX - 1n,
      -1n,
      0n,
      1n,
      951_782_400n, // 2000-02-29
      951_868_800n, // 2000-03-01
      -2_203_891_200n, // 1900-03-01
      -2_203_977_600n, // 1900-02-28
      4_107_542_400n, // 2100-03-01
      -12_212_553_600n, // 1583-01-01
      -61_851_600_000n, // year 10
      -59_011_459_200n, // year 100
    ];
    for (const seconds of cases) {
      for (const delta of [-day, -1n, 0n, 1n, day]) {
        for (const nanos of [0, 500_000_000, 999_999_999]) assertSame(seconds + delta, nanos);
      }
    }
  });

  it("matches across the whole range", () => {
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const span = Number(MAX - MIN);
    for (let i = 0; i < 20_000; i++) {
      const seconds = MIN + BigInt(Math.floor(random() * span));
      const nanos = [0, Math.floor(random() * 1000) * 1_000_000, Math.floor(random() * 1e9)][i % 3]!;
      assertSame(seconds, nanos);
    }
  });

  it("throws outside 0001-01-01 … 9999-12-31 and for nanos outside 0 … 999999999", () => {
    for (const [seconds, nanos] of [
      [MIN - 1n, 0],
      [MAX + 1n, 0],
      [0n, -1],
      [0n, 1_000_000_000],
    ] as const) {
      assert.ok(reference(seconds, nanos) instanceof Error);
      assert.throws(() => timestampToJson(seconds, nanos));
    }
  });
});
