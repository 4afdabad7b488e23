import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { artifactUid, versionUid } from "../../../src/libraries/library-ids.js";
import { compareMavenVersions } from "../../../src/libraries/maven-version.js";
import {
  compareVersions,
  cudaVersionOf,
  normalizeCudaVersion,
  versionProblem,
} from "../../../src/libraries/version-order.js";
import type { LibraryEcosystemName } from "../../../src/storage/library-store.js";

function shuffled<T>(list: readonly T[]): T[] {
  // Reversed and interleaved: a fixed permutation far from the sorted order.
  const reversed = [...list].reverse();
  return [...reversed.filter((_, i) => i % 2 === 0), ...reversed.filter((_, i) => i % 2 === 1)];
}

function assertOrder(ecosystem: LibraryEcosystemName, ordered: readonly string[]): void {
  const sorted = shuffled(ordered).sort((a, b) => compareVersions(ecosystem, a, b));
  assert.deepEqual(sorted, ordered);
}

describe("ecosystem-aware version order", () => {
  it("JAVA follows Maven's ComparableVersion, remediated builds right after their release", () => {
    assertOrder("JAVA", [
      "1.0-alpha-1",
      "1.0-alpha-2",
      "1.0-beta",
      "1.0-M1",
      "1.0-rc1",
      "1.0-SNAPSHOT",
      "1.0",
      "1.0-sp1",
      "1.0-0.cgr.1",
      "1.0-0.cgr.2",
      "1.0.1",
      "1.9",
      "1.10",
      "3.5.0",
      "3.5.0-0.cgr.2",
      "3.5.1",
    ]);
  });

  it("JAVA: Maven's equal spellings compare 0, the total order still separates them by text", () => {
    assert.equal(compareMavenVersions("1.0", "1.0.0"), 0);
    assert.equal(compareMavenVersions("1.0-ga", "1"), 0);
    assert.equal(compareMavenVersions("1.0-final", "1.0"), 0);
    assert.equal(compareMavenVersions("1.0-CR1", "1.0-rc1"), 0);
    assert.ok(compareMavenVersions("1.0-foo", "1.0-sp") > 0, "unknown qualifiers sort after the known ones");
    assert.notEqual(compareVersions("JAVA", "1.0", "1.0.0"), 0);
  });

  it("PYTHON follows PEP 440: pre < release < local builds < post", () => {
    assertOrder("PYTHON", [
      "2.0.0",
      "2.1.0.dev1",
      "2.1.0a1",
      "2.1.0rc1",
      "2.1.0",
      "2.1.0+cgr.1",
      "2.1.0+cu121",
      "2.1.0.post1",
      "10.0",
    ]);
  });

  it("JAVASCRIPT follows semver, with -cgr.N right after its release (not before it, as a prerelease)", () => {
    assertOrder("JAVASCRIPT", [
      "1.2.3-beta.1",
      "1.2.3",
      "1.2.3-cgr.1",
      "1.2.3-cgr.2",
      "1.2.3-cgr.10",
      "1.2.4-rc.1",
      "1.2.4",
      "1.10.0",
    ]);
  });

  it("validates versions per ecosystem", () => {
    assert.equal(versionProblem("PYTHON", "1.0.post1"), undefined);
    assert.match(versionProblem("PYTHON", "latest") ?? "", /PEP 440/);
    assert.equal(versionProblem("JAVASCRIPT", "1.2.3-cgr.1"), undefined);
    assert.match(versionProblem("JAVASCRIPT", "1.2") ?? "", /semver/);
    assert.equal(versionProblem("JAVA", "2.17.1.Final"), undefined);
  });
});

describe("CUDA builds", () => {
  it("reads the CUDA version of a PyPI local label, only for PYTHON", () => {
    assert.equal(cudaVersionOf("PYTHON", "2.3.0+cu121"), "12.1");
    assert.equal(cudaVersionOf("PYTHON", "2.3.0+cgr.1.cu118"), "11.8");
    assert.equal(cudaVersionOf("PYTHON", "2.3.0"), "");
    assert.equal(cudaVersionOf("PYTHON", "2.3.0+cpu"), "");
    assert.equal(cudaVersionOf("JAVA", "2.3.0+cu121"), "");
  });

  it("normalizes the filter from 12.1, cu121 or 121", () => {
    assert.equal(normalizeCudaVersion("12.1"), "12.1");
    assert.equal(normalizeCudaVersion("cu121"), "12.1");
    assert.equal(normalizeCudaVersion("CU118"), "11.8");
    assert.equal(normalizeCudaVersion("121"), "12.1");
    assert.equal(normalizeCudaVersion("twelve"), undefined);
    assert.equal(normalizeCudaVersion("12.1.1"), undefined);
  });
});

describe("library uids", () => {
  it("are deterministic per ecosystem and name, versions under their artifact", () => {
    const uid = artifactUid("JAVA", "org.example:core");
    assert.match(uid, /^[0-9a-f]{40}$/);
    assert.equal(uid, artifactUid("JAVA", "org.example:core"));
    assert.notEqual(uid, artifactUid("PYTHON", "org.example:core"));
    assert.match(versionUid(uid, "1.0"), new RegExp(`^${uid}/[0-9a-f]{16}$`));
    assert.notEqual(versionUid(uid, "1.0"), versionUid(uid, "1.0.0"));
  });
});
