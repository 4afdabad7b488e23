import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  checkBundle,
  isSigstoreBundleType,
  parseTrustedRoot,
} from "../../../../../src/registry/supply-chain/signatures/sigstore-bundle.js";
import { certificateBundle } from "../../../../support/cosign.js";
import { buildImage } from "../../../../support/registry-push.js";
import { makeThrowawayCa, opensslSkip, type ThrowawayCa } from "../../../../support/throwaway-ca.js";

/** A trusted root naming `caPem` as its only Fulcio CA, no logs (as the published JSON writes it). */
function trustedRootJson(caPem: string): string {
  const der = new X509Certificate(caPem).raw.toString("base64");
  return JSON.stringify({
    mediaType: "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
    tlogs: [],
    certificateAuthorities: [
      {
        subject: { organization: "test", commonName: "test" },
        uri: "https://fulcio.test",
        certChain: { certificates: [{ rawBytes: der }] },
        validFor: { start: "2020-01-01T00:00:00Z" },
      },
    ],
    ctlogs: [],
    timestampAuthorities: [],
  });
}

describe("Sigstore bundles: media types and trusted roots", () => {
  it("recognises the bundle media types cosign and sigstore-js write", () => {
    for (const t of [
      "application/vnd.dev.sigstore.bundle.v0.3+json",
      "application/vnd.dev.sigstore.bundle+json;version=0.3",
      "application/vnd.dev.sigstore.bundle+json;version=0.2",
    ])
      assert.ok(isSigstoreBundleType(t), t);
    for (const t of [undefined, "application/vnd.dev.cosign.artifact.sig.v1+json", "application/json"])
      assert.equal(isSigstoreBundleType(t), false, String(t));
  });

  it("refuses a trusted root that is not JSON or names nothing", () => {
    assert.throws(() => parseTrustedRoot("{not json"), /not JSON/);
    assert.throws(() => parseTrustedRoot("{}"), /names no certificate authority/);
  });
});

describe("Sigstore bundles: keyless (certificate) bundles", { skip: opensslSkip }, () => {
  let dir: string;
  let ca: ThrowawayCa;
  let bundle: Buffer;
  const image = buildImage("keyless");

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "wharf-keyless-"));
    ca = await makeThrowawayCa(dir);
    const leaf = await ca.issue("signer");
    bundle = await certificateBundle({
      certPem: await readFile(leaf.certFile, "utf8"),
      keyPem: await readFile(leaf.keyFile, "utf8"),
      artifact: image.manifest,
    });
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("does not verify without a trusted root, and says so", () => {
    const verdict = checkBundle(image.digest, bundle, image.manifest, [], undefined);
    assert.deepEqual(verdict, {
      verified: false,
      keyUid: "",
      keyName: "",
      reason:
        "keyless (certificate) bundle: no Sigstore trusted root is configured (--sigstore-trusted-root)",
    });
  });

  it("with a trusted root, checks the bundle against it (no log entry or timestamp: not verified)", () => {
    const root = parseTrustedRoot(trustedRootJson(ca.pem.toString()));
    const verdict = checkBundle(image.digest, bundle, image.manifest, [], root);
    assert.equal(verdict.verified, false);
    assert.match(verdict.reason, /^keyless bundle does not verify against the trusted root: .*timestamp/);
  });

  it("checks the subject before anything else", () => {
    const other = buildImage("other");
    const verdict = checkBundle(other.digest, bundle, other.manifest, [], undefined);
    assert.match(verdict.reason, /^bundle signs sha256:[0-9a-f]{64}, not this image$/);
  });
});
