import { describe, expect, it } from "vitest";
import { ancestorUids, formatAgo, formatBytes, formatTime, pathWithUid, shortDigest, toDate } from "./format";

describe("format", () => {
  it("shortens digests to 12 hex digits", () => {
    expect(shortDigest(`sha256:${"ab".repeat(32)}`)).toBe("sha256:abababababab");
    expect(shortDigest("latest")).toBe("latest");
  });

  it("writes sizes in binary units", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(1023)).toBe("1023 B");
    expect(formatBytes(1536)).toBe("1.5 KiB");
    expect(formatBytes(5n * 1024n * 1024n)).toBe("5.0 MiB");
  });

  it("reads protobuf timestamps and strings, and writes UTC", () => {
    const ts = { seconds: 1_764_114_000n, nanos: 500_000_000 } as never;
    expect(toDate(ts)?.toISOString()).toBe("2025-11-25T23:40:00.500Z");
    expect(formatTime("2026-01-02T03:04:05Z")).toBe("2026-01-02 03:04 UTC");
    expect(formatTime(undefined)).toBe("—");
    expect(formatAgo("2026-01-01T00:00:00Z", Date.parse("2026-01-01T00:05:00Z"))).toBe("5 minutes ago");
    expect(formatAgo("2026-01-01T00:00:00Z", Date.parse("2026-01-04T00:00:00Z"))).toBe("3 days ago");
  });

  it("lists a uidp's ancestors and builds paths with uids", () => {
    expect(ancestorUids("a/b/c")).toEqual(["a", "a/b"]);
    expect(ancestorUids("a")).toEqual([]);
    expect(pathWithUid("/repos", "a b/c")).toBe("/repos/a%20b/c");
  });
});
