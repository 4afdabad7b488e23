import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { SbomFormatError } from "../../../../../src/registry/supply-chain/sbom/sbom-errors.js";
import {
  MAX_COMPONENT_DEPTH,
  parseSbom,
  type SbomLimits,
} from "../../../../../src/registry/supply-chain/sbom/sbom-parser.js";

const FIXTURES = new URL("../../../../fixtures/sbom/", import.meta.url);
const LIMITS: SbomLimits = { maxBytes: 64 * 1024 * 1024, maxPackages: 100_000 };

function fixture(name: string): Buffer {
  return readFileSync(new URL(name, FIXTURES));
}

/** `bytes` as a stream of `size`-byte chunks, so tokens straddle chunk boundaries. */
async function* chunked(bytes: Uint8Array, size: number): AsyncIterable<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

async function rejects(source: Uint8Array | string, pattern: RegExp, limits = LIMITS): Promise<void> {
  await assert.rejects(
    parseSbom(typeof source === "string" ? Buffer.from(source) : source, limits),
    (err: unknown) => {
      assert.ok(err instanceof SbomFormatError, `a SbomFormatError, not ${String(err)}`);
      assert.match(err.message, pattern);
      return true;
    },
  );
}

const SPDX_PACKAGES = [
  {
    name: "alpine-baselayout",
    version: "3.6.5-r0",
    purl: "pkg:apk/alpine/alpine-baselayout@3.6.5-r0?arch=x86_64&distro=alpine-3.20.3",
    license: "GPL-2.0-only",
  },
  {
    name: "libssl3",
    version: "3.3.2-r0",
    purl: "pkg:apk/alpine/libssl3@3.3.2-r0?arch=x86_64&distro=alpine-3.20.3",
    license: "Apache-2.0",
  },
  {
    name: "busybox",
    version: "1.36.1-r29",
    purl: "pkg:apk/alpine/busybox@1.36.1-r29?arch=x86_64&distro=alpine-3.20.3",
    license: "GPL-2.0-only",
  },
  { name: "golang.org/x/net", version: "v0.23.0", purl: "pkg:golang/golang.org/x/net@v0.23.0", license: "" },
  { name: "app", version: "", purl: "", license: "MIT OR Apache-2.0" },
];

const CDX15_PACKAGES = [
  {
    name: "busybox",
    version: "1.36.1-r29",
    purl: "pkg:apk/alpine/busybox@1.36.1-r29?arch=x86_64&distro=alpine-3.20.3",
    license: "GPL-2.0-only",
  },
  { name: "service", version: "2.4.0", purl: "pkg:maven/com.example/service@2.4.0", license: "MIT" },
  {
    name: "jackson-databind",
    version: "2.17.2",
    purl: "pkg:maven/com.fasterxml.jackson.core/jackson-databind@2.17.2",
    license: "Apache-2.0",
  },
  {
    name: "snakeyaml",
    version: "2.2",
    purl: "pkg:maven/org.yaml/snakeyaml@2.2",
    license: "Apache License, Version 2.0",
  },
  { name: "/etc/os-release", version: "", purl: "", license: "" },
];

const CDX16_PACKAGES = [
  { name: "web", version: "1.0.0", purl: "pkg:npm/web@1.0.0", license: "MIT OR Apache-2.0" },
  { name: "express", version: "4.21.1", purl: "pkg:npm/express@4.21.1", license: "MIT" },
  { name: "cookie", version: "0.7.1", purl: "pkg:npm/cookie@0.7.1", license: "MIT" },
  {
    name: "internal",
    version: "0.3.0",
    purl: "pkg:npm/%40acme/internal@0.3.0",
    license: "(Acme Proprietary) AND BSD-3-Clause",
  },
  {
    name: "glibc",
    version: "2.40-r3",
    purl: "pkg:apk/wolfi/glibc@2.40-r3?arch=x86_64&distro=wolfi-20230201",
    license: "LGPL-2.1-or-later",
  },
];

const CASES = [
  { base: "spdx-2.3", format: "SPDX-2.3", packages: SPDX_PACKAGES },
  { base: "cyclonedx-1.5", format: "CycloneDX-1.5", packages: CDX15_PACKAGES },
  { base: "cyclonedx-1.6", format: "CycloneDX-1.6", packages: CDX16_PACKAGES },
];
const WRAPPERS = [
  { suffix: "json", envelope: "bare" },
  { suffix: "intoto.json", envelope: "in-toto-statement" },
  { suffix: "dsse.json", envelope: "dsse-envelope" },
] as const;

describe("parseSbom: formats and wrappers", () => {
  for (const c of CASES) {
    for (const w of WRAPPERS) {
      it(`reads ${c.base}.${w.suffix}`, async () => {
        const sbom = await parseSbom(fixture(`${c.base}.${w.suffix}`), LIMITS);
        assert.equal(sbom.format, c.format);
        assert.equal(sbom.envelope, w.envelope);
        assert.deepEqual(sbom.packages, c.packages);
      });
    }
  }

  it("reads a document streamed in 7-byte chunks the same as whole", async () => {
    for (const name of ["spdx-2.3.json", "cyclonedx-1.6.intoto.json", "cyclonedx-1.5.dsse.json"]) {
      const whole = await parseSbom(fixture(name), LIMITS);
      assert.deepEqual(await parseSbom(chunked(fixture(name), 7), LIMITS), whole, name);
    }
  });

  it("reads a Sigstore bundle's dsseEnvelope and a base64url payload", async () => {
    const statement = fixture("spdx-2.3.intoto.json");
    const bundle = {
      mediaType: "application/vnd.dev.sigstore.bundle.v0.3+json",
      verificationMaterial: { publicKey: { hint: "abc" } },
      dsseEnvelope: {
        payload: statement.toString("base64url"),
        payloadType: "application/vnd.in-toto+json",
        signatures: [{ sig: "MEUC" }],
      },
    };
    const sbom = await parseSbom(Buffer.from(JSON.stringify(bundle)), LIMITS);
    assert.equal(sbom.format, "SPDX-2.3");
    assert.equal(sbom.envelope, "dsse-envelope");
    assert.equal(sbom.packages.length, SPDX_PACKAGES.length);
  });

  it("lists CycloneDX parents before their children even when a parent's fields follow them", async () => {
    const doc = {
      bomFormat: "CycloneDX",
      specVersion: "1.6",
      components: [
        {
          components: [{ name: "child-a" }, { components: [{ name: "grandchild" }], name: "child-b" }],
          name: "parent",
        },
        { name: "sibling" },
      ],
    };
    const sbom = await parseSbom(Buffer.from(JSON.stringify(doc)), LIMITS);
    assert.deepEqual(
      sbom.packages.map((p) => p.name),
      ["parent", "child-a", "child-b", "grandchild", "sibling"],
    );
  });
});

describe("parseSbom: limits", () => {
  it("refuses more bytes than the limit, streamed or whole", async () => {
    const bytes = fixture("spdx-2.3.json");
    const limits = { ...LIMITS, maxBytes: 1000 };
    await rejects(bytes, /larger than the limit of 1000 bytes/, limits);
    await assert.rejects(parseSbom(chunked(bytes, 100), limits), /larger than the limit of 1000 bytes/);
  });

  it("counts a DSSE envelope's decoded payload against the byte limit too", async () => {
    const envelope = fixture("spdx-2.3.dsse.json");
    const limits = { ...LIMITS, maxBytes: envelope.length };
    await parseSbom(envelope, { ...LIMITS, maxBytes: envelope.length + 1 });
    await rejects(envelope, /larger than the limit/, { ...limits, maxBytes: envelope.length - 1 });
    // The payload alone is smaller than the envelope: the same limit passes it.
    assert.ok(Buffer.from(JSON.parse(envelope.toString()).payload, "base64").length < envelope.length);
  });

  it("refuses more packages than the limit, SPDX and CycloneDX (nested ones count)", async () => {
    await rejects(fixture("spdx-2.3.json"), /more than the limit of 4 packages/, {
      ...LIMITS,
      maxPackages: 4,
    });
    await parseSbom(fixture("spdx-2.3.json"), { ...LIMITS, maxPackages: 5 });
    await rejects(fixture("cyclonedx-1.6.dsse.json"), /more than the limit of 3 packages/, {
      ...LIMITS,
      maxPackages: 3,
    });
  });

  it(`refuses components nested deeper than ${MAX_COMPONENT_DEPTH} levels`, async () => {
    let component: Record<string, unknown> = { name: "leaf" };
    for (let i = 0; i < MAX_COMPONENT_DEPTH; i++) component = { name: `level-${i}`, components: [component] };
    const doc = (c: unknown) =>
      Buffer.from(JSON.stringify({ bomFormat: "CycloneDX", specVersion: "1.5", components: [c] }));
    await rejects(doc(component), /nest deeper than 32 levels/);
    // One level less is fine.
    const ok = await parseSbom(doc((component.components as unknown[])[0]), LIMITS);
    assert.equal(ok.packages.length, MAX_COMPONENT_DEPTH);
  });
});

describe("parseSbom: malformed documents", () => {
  it("says what is wrong and where", async () => {
    await rejects("", /the SBOM is empty/);
    await rejects('{"spdxVersion": "SPDX-2.3", "packages": [', /not valid JSON/);
    await rejects("{} {}", /not valid JSON/);
    await assert.rejects(
      parseSbom(chunked(Buffer.from("{} {}"), 3), LIMITS),
      /data after the end of the document/,
    );
    await rejects("[1, 2]", /not an SBOM Wharf reads; expected an SPDX 2\.3 or CycloneDX 1\.5\/1\.6/);
    await rejects(
      JSON.stringify({ spdxVersion: "SPDX-2.2", packages: [] }),
      /SPDX version "SPDX-2\.2" is not supported; expected SPDX-2\.3/,
    );
    await rejects(JSON.stringify({ packages: [{ name: "a" }] }), /has no spdxVersion/);
    await rejects(
      JSON.stringify({ bomFormat: "CycloneDX", specVersion: "1.4", components: [] }),
      /CycloneDX specVersion "1\.4" is not supported; expected 1\.5 or 1\.6/,
    );
    await rejects(JSON.stringify({ bomFormat: "SWID", specVersion: "1.5" }), /bomFormat is "SWID"/);
    await rejects(
      JSON.stringify({ spdxVersion: "SPDX-2.3", bomFormat: "CycloneDX", specVersion: "1.6" }),
      /mixes SPDX and CycloneDX/,
    );
    await rejects(
      JSON.stringify({ spdxVersion: "SPDX-2.3", packages: [{ name: "a" }, { versionInfo: "1" }] }),
      /^packages\[1\] has no name$/,
    );
    await rejects(
      JSON.stringify({ spdxVersion: "SPDX-2.3", packages: [{ name: 7 }] }),
      /packages\[0\]\.name must be a string, not number/,
    );
    await rejects(
      JSON.stringify({ spdxVersion: "SPDX-2.3", packages: [{ name: "a", externalRefs: {} }] }),
      /packages\[0\]\.externalRefs must be an array/,
    );
    await rejects(
      JSON.stringify({
        _type: "https://in-toto.io/Statement/v1",
        predicateType: "https://cyclonedx.org/bom",
        predicate: {
          bomFormat: "CycloneDX",
          specVersion: "1.6",
          components: [{ name: "a", components: [{ name: "b", purl: 3 }] }],
        },
      }),
      /predicate\.components\[0\]\.components\[0\]\.purl must be a string, not number/,
    );
    await rejects(
      JSON.stringify({
        bomFormat: "CycloneDX",
        specVersion: "1.5",
        components: [{ name: "a", licenses: [{}] }],
      }),
      /components\[0\]\.licenses\[0\] has neither license nor expression/,
    );
  });

  it("refuses DSSE envelopes that do not carry an in-toto SBOM statement", async () => {
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64");
    await rejects(
      JSON.stringify({ payloadType: "text/plain", payload: b64({}) }),
      /payloadType is "text\/plain"; expected application\/vnd\.in-toto\+json/,
    );
    await rejects(
      JSON.stringify({ payloadType: "application/vnd.in-toto+json", payload: "not base64!" }),
      /payload must be a base64 string/,
    );
    // A bare SBOM as the payload is not a statement.
    await rejects(
      JSON.stringify({
        payloadType: "application/vnd.in-toto+json",
        payload: fixture("spdx-2.3.json").toString("base64"),
      }),
      /statement holds no SBOM predicate/,
    );
    await rejects(
      JSON.stringify({
        payloadType: "application/vnd.in-toto+json",
        payload: b64({ payloadType: "application/vnd.in-toto+json", payload: b64({}) }),
      }),
      /DSSE envelope inside a DSSE envelope/,
    );
    // A provenance statement is not an SBOM.
    await rejects(
      JSON.stringify({
        payloadType: "application/vnd.in-toto+json",
        payload: b64({
          _type: "https://in-toto.io/Statement/v1",
          predicateType: "https://slsa.dev/provenance/v1",
          predicate: { buildDefinition: {} },
        }),
      }),
      /statement holds no SBOM predicate/,
    );
  });
});

describe("parseSbom: streaming", () => {
  it("reads a 40k-package SBOM from a generated stream without building the document", async () => {
    const count = 40_000;
    // About 10 MB of SPDX, generated chunk by chunk: the document never exists as one string.
    async function* generate(): AsyncIterable<Uint8Array> {
      yield Buffer.from('{"spdxVersion":"SPDX-2.3","dataLicense":"CC0-1.0","packages":[');
      for (let i = 0; i < count; i++) {
        const pkg = {
          name: `pkg-${i}`,
          SPDXID: `SPDXRef-Package-${i}`,
          versionInfo: `1.${i}.0`,
          downloadLocation: "NOASSERTION",
          licenseConcluded: "MIT",
          copyrightText: "NOASSERTION",
          // Bulk the parser must drop: never built.
          description: "x".repeat(100),
          externalRefs: [
            {
              referenceCategory: "PACKAGE-MANAGER",
              referenceType: "purl",
              referenceLocator: `pkg:npm/pkg-${i}@1.${i}.0`,
            },
          ],
        };
        yield Buffer.from(`${i === 0 ? "" : ","}${JSON.stringify(pkg)}`);
      }
      yield Buffer.from("]}");
    }
    const sbom = await parseSbom(generate(), LIMITS);
    assert.equal(sbom.packages.length, count);
    assert.deepEqual(sbom.packages[count - 1], {
      name: `pkg-${count - 1}`,
      version: `1.${count - 1}.0`,
      purl: `pkg:npm/pkg-${count - 1}@1.${count - 1}.0`,
      license: "MIT",
    });
  });

  it("stops reading at the first error (the rest of the stream is not read)", async () => {
    let chunks = 0;
    async function* source(): AsyncIterable<Uint8Array> {
      yield Buffer.from('{"spdxVersion":"SPDX-2.3","packages":[{"name":"first"}');
      for (; chunks < 1000; chunks++) yield Buffer.from(',{"name":"x"}');
    }
    await assert.rejects(
      parseSbom(source(), { ...LIMITS, maxPackages: 10 }),
      /more than the limit of 10 packages/,
    );
    assert.ok(chunks < 1000, `read ${chunks} chunks after the error`);
  });
});
