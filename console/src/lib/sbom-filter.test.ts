import { describe, expect, it } from "vitest";
import { filterPackages, type SbomPackage } from "./sbom-filter";

const pkg = (name: string, version: string, license: string, purl: string) =>
  ({ name, version, license, purl }) as SbomPackage;

const PACKAGES = [
  pkg("libssl3", "3.3.2-r0", "Apache-2.0", "pkg:apk/alpine/libssl3@3.3.2-r0"),
  pkg("busybox", "1.36.1-r29", "GPL-2.0-only", "pkg:apk/alpine/busybox@1.36.1-r29"),
  pkg("express", "4.21.1", "MIT", "pkg:npm/express@4.21.1"),
];

describe("filterPackages", () => {
  it("keeps every package, in order, for blank text", () => {
    expect(filterPackages(PACKAGES, "  ").map((p) => p.name)).toEqual(["libssl3", "busybox", "express"]);
  });

  it("matches name, version, license or purl, case-insensitively", () => {
    expect(filterPackages(PACKAGES, "SSL").map((p) => p.name)).toEqual(["libssl3"]);
    expect(filterPackages(PACKAGES, "pkg:apk").map((p) => p.name)).toEqual(["libssl3", "busybox"]);
    expect(filterPackages(PACKAGES, "gpl").map((p) => p.name)).toEqual(["busybox"]);
    expect(filterPackages(PACKAGES, "4.21").map((p) => p.name)).toEqual(["express"]);
    expect(filterPackages(PACKAGES, "nothing")).toEqual([]);
  });
});
