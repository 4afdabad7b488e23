import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createSignatureVerifier } from "../../../../../src/registry/supply-chain/signatures/signature-verifier.js";
import type { TrustedKey, TrustedKeyring } from "../../../../../src/registry/supply-chain/supply-chain.js";
import { createChangeHub } from "../../../../../src/storage/change-feed.js";
import {
  bundleReferrerManifest,
  COSIGN_KEY_TYPES,
  type CosignKey,
  generateCosignKey,
  type SignatureLayer,
  signatureManifest,
  signatureTag,
  signPayload,
  sigstoreBundle,
  simpleSigningPayload,
} from "../../../../support/cosign.js";
import { buildImage } from "../../../../support/registry-push.js";
import { type MemoryContent, memoryContent } from "./memory-content.js";

const REPO = { uid: "org1/repo1", name: "acme/app" };

function trusted(key: CosignKey, name: string): TrustedKey {
  return {
    uid: `org1/${name}`,
    name,
    parentUid: "org1",
    parentPath: "acme",
    publicKeyPem: key.publicKeyPem,
    createTime: 0,
  };
}

function keyringOf(keys: TrustedKey[]): TrustedKeyring & { keys: TrustedKey[]; calls: number } {
  const ring = {
    keys,
    calls: 0,
    async keysFor(repoUid: string) {
      ring.calls++;
      return repoUid === REPO.uid ? ring.keys : [];
    },
  };
  return ring;
}

function world(keys: TrustedKey[]) {
  const content = memoryContent();
  const image = buildImage("signed");
  const digest = content.putManifest(image.manifest);
  const keyring = keyringOf(keys);
  const changes = createChangeHub();
  let now = 1_000;
  const verifier = createSignatureVerifier({ content, keyring, changes, clock: { now: () => now } });
  return {
    content,
    image,
    digest,
    keyring,
    changes,
    verifier,
    advance: (ms: number) => {
      now += ms;
    },
    list: () => verifier.signatures(REPO, digest),
  };
}

function layer(key: CosignKey, digest: string): SignatureLayer {
  const payload = simpleSigningPayload("localhost/acme/app", digest);
  return { payload, signature: signPayload(key, payload).toString("base64") };
}

/** Puts `layers` as a signature of `digest` in `layout`; returns the signature manifest's digest. */
function sign(
  content: MemoryContent,
  digest: string,
  layers: SignatureLayer[],
  layout: "tag" | "referrer",
): string {
  const size = 100;
  const built =
    layout === "tag"
      ? signatureManifest(layers)
      : signatureManifest(layers, { mediaType: "application/vnd.oci.image.manifest.v1+json", digest, size });
  return content.putManifest(
    built.manifest,
    built.blobs,
    layout === "tag" ? signatureTag(digest) : undefined,
  );
}

describe("signature verifier: cosign simple signing", () => {
  for (const type of COSIGN_KEY_TYPES) {
    for (const layout of ["tag", "referrer"] as const) {
      it(`verifies a ${type} signature in the ${layout} layout`, async () => {
        const key = generateCosignKey(type);
        const w = world([trusted(key, "release")]);
        const referrer = sign(w.content, w.digest, [layer(key, w.digest)], layout);
        assert.deepEqual(await w.list(), [
          {
            referrer,
            layout: layout === "tag" ? "cosign-tag" : "cosign-referrer",
            keyUid: "org1/release",
            keyName: "release",
            verified: true,
            reason: "verified by key release trusted at acme",
          },
        ]);
      });
    }
  }

  it("does not verify a signature copied from another image (the payload names that image)", async () => {
    const key = generateCosignKey("ecdsa-p256");
    const w = world([trusted(key, "release")]);
    const other = `sha256:${"ab".repeat(32)}`;
    sign(w.content, w.digest, [layer(key, other)], "referrer");
    const [check] = await w.list();
    assert.equal(check?.verified, false);
    assert.equal(check?.keyUid, "");
    assert.equal(check?.reason, `payload names ${other}, not this image`);
  });

  it("does not verify with a key nobody trusts; tries every trusted key", async () => {
    const signer = generateCosignKey("ed25519");
    const stranger = generateCosignKey("ed25519");
    const second = generateCosignKey("rsa-2048");
    const w = world([trusted(stranger, "other")]);
    sign(w.content, w.digest, [layer(signer, w.digest)], "tag");
    const [check] = await w.list();
    assert.equal(check?.verified, false);
    assert.equal(check?.reason, "no trusted key verifies it");
    w.keyring.keys = [trusted(stranger, "other"), trusted(second, "second"), trusted(signer, "right")];
    w.changes.publish({ tables: ["trusted_keys"], everything: false });
    assert.equal((await w.list())[0]?.keyName, "right");
  });

  it("says when no key is registered at all", async () => {
    const w = world([]);
    sign(w.content, w.digest, [layer(generateCosignKey("ecdsa-p384"), w.digest)], "tag");
    assert.match((await w.list())[0]?.reason ?? "", /no signing key is registered/);
  });

  it("does not verify a tampered payload", async () => {
    const key = generateCosignKey("ecdsa-p256");
    const w = world([trusted(key, "release")]);
    const good = layer(key, w.digest);
    const tampered = Buffer.from(good.payload.toString().replace('"optional":null', '"optional":{"x":1}'));
    sign(w.content, w.digest, [{ payload: tampered, signature: good.signature }], "tag");
    assert.equal((await w.list())[0]?.verified, false);
  });

  it("answers malformed annotations, base64 and JSON with reasons, never a throw", async () => {
    const key = generateCosignKey("ecdsa-p256");
    const w = world([trusted(key, "release")]);
    const good = layer(key, w.digest);
    const notJson = Buffer.from("{not json");
    const noDigest = Buffer.from(JSON.stringify({ critical: { image: {} } }));
    sign(
      w.content,
      w.digest,
      [
        { payload: good.payload, signature: "" },
        { payload: good.payload, signature: "%%%not base64%%%" },
        { payload: notJson, signature: signPayload(key, notJson).toString("base64") },
        { payload: noDigest, signature: signPayload(key, noDigest).toString("base64") },
        { payload: good.payload, signature: Buffer.from("garbage signature").toString("base64") },
      ],
      "tag",
    );
    const reasons = (await w.list()).map((c) => [c.verified, c.reason]);
    assert.deepEqual(reasons, [
      [false, "malformed signature annotation: the layer has no dev.cosignproject.cosign/signature"],
      [false, "malformed signature annotation: not base64"],
      [false, "malformed payload: not JSON"],
      [false, "malformed payload: no critical.image.docker-manifest-digest"],
      [false, "no trusted key verifies it"],
    ]);
  });

  it("refuses to read a payload over the size cap", async () => {
    const key = generateCosignKey("ed25519");
    const w = world([trusted(key, "release")]);
    const base = JSON.parse(simpleSigningPayload("r", w.digest).toString()) as Record<string, unknown>;
    const huge = Buffer.from(JSON.stringify({ ...base, optional: { pad: "x".repeat(70 * 1024) } }));
    sign(
      w.content,
      w.digest,
      [{ payload: huge, signature: signPayload(key, huge).toString("base64") }],
      "tag",
    );
    const [check] = await w.list();
    assert.equal(check?.verified, false);
    assert.match(check?.reason ?? "", /signature payload larger than 64 KiB/);
  });

  it("looks at no more than 100 signatures", async () => {
    const key = generateCosignKey("ed25519");
    const w = world([trusted(key, "release")]);
    const layers = Array.from({ length: 150 }, () => layer(key, w.digest));
    sign(w.content, w.digest, layers, "tag");
    assert.equal((await w.list()).length, 100);
  });

  it("answers a malformed or missing signature manifest", async () => {
    const w = world([]);
    w.content.tags.set(signatureTag(w.digest), `sha256:${"0".repeat(64)}`);
    assert.deepEqual(
      (await w.list()).map((c) => c.reason),
      ["signature manifest is missing"],
    );
    w.content.tags.set(signatureTag(w.digest), w.content.putManifest(Buffer.from("[1,2]")));
    w.changes.publish({ tables: ["tags"], everything: false });
    assert.deepEqual(
      (await w.list()).map((c) => c.reason),
      ["malformed signature manifest: no layers"],
    );
  });

  it("lists both layouts and ignores other referrers", async () => {
    const key = generateCosignKey("ecdsa-p256");
    const w = world([trusted(key, "release")]);
    const tagged = sign(w.content, w.digest, [layer(key, w.digest)], "tag");
    const referred = sign(w.content, w.digest, [layer(key, w.digest)], "referrer");
    const sbom = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        config: { mediaType: "application/spdx+json" },
        layers: [],
        subject: { digest: w.digest },
      }),
    );
    w.content.putManifest(sbom);
    const checks = await w.list();
    assert.deepEqual(
      checks.map((c) => [c.referrer, c.layout, c.verified]),
      [
        [tagged, "cosign-tag", true],
        [referred, "cosign-referrer", true],
      ],
    );
  });

  it("caches per image and drops the cache on a supply-chain change or after its time", async () => {
    const key = generateCosignKey("ecdsa-p256");
    const w = world([trusted(key, "release")]);
    sign(w.content, w.digest, [layer(key, w.digest)], "tag");
    assert.equal((await w.list())[0]?.verified, true);
    const reads = w.content.reads;
    await w.list();
    assert.equal(w.content.reads, reads, "a second call is served from the cache");
    w.changes.publish({ tables: ["events"], everything: false });
    await w.list();
    assert.equal(w.content.reads, reads, "an unrelated table keeps it");
    w.keyring.keys = [];
    w.changes.publish({ tables: ["trusted_keys"], everything: false });
    assert.equal((await w.list())[0]?.verified, false, "a deleted key shows on the next call");
    w.keyring.keys = [trusted(key, "release")];
    w.advance(61_000);
    assert.equal((await w.list())[0]?.verified, true, "the cache expires");
  });
});

describe("signature verifier: verified signers", () => {
  it("names each verifying key once, and reads nothing in a repo that trusts no key", async () => {
    const key = generateCosignKey("ecdsa-p256");
    const w = world([trusted(key, "release")]);
    sign(w.content, w.digest, [layer(key, w.digest), layer(key, w.digest)], "tag");
    sign(w.content, w.digest, [layer(generateCosignKey("ed25519"), w.digest)], "referrer");
    assert.deepEqual(await w.verifier.verifiedSigners(REPO, w.digest), [
      { keyUid: "org1/release", keyName: "release" },
    ]);
    w.keyring.keys = [];
    w.changes.publish({ tables: ["trusted_keys"], everything: false });
    const reads = w.content.reads;
    assert.deepEqual(await w.verifier.verifiedSigners(REPO, w.digest), []);
    assert.equal(w.content.reads, reads, "no manifest read");
  });
});

describe("signature verifier: Sigstore bundles", () => {
  for (const kind of ["dsse", "message"] as const) {
    it(`verifies a keyed ${kind} bundle with a trusted key, not with another`, async () => {
      const key = generateCosignKey("ecdsa-p256");
      const w = world([trusted(generateCosignKey("ecdsa-p256"), "other"), trusted(key, "release")]);
      const bundle = await sigstoreBundle({ key, kind, subjectDigest: w.digest, artifact: w.image.manifest });
      const subject = { mediaType: "application/vnd.oci.image.manifest.v1+json", digest: w.digest, size: 1 };
      const built = bundleReferrerManifest(bundle, subject);
      const referrer = w.content.putManifest(built.manifest, built.blobs);
      assert.deepEqual(await w.list(), [
        {
          referrer,
          layout: "sigstore-bundle",
          keyUid: "org1/release",
          keyName: "release",
          verified: true,
          reason: "verified by key release trusted at acme",
        },
      ]);
      w.keyring.keys = [trusted(generateCosignKey("ecdsa-p256"), "other")];
      w.changes.publish({ tables: ["trusted_keys"], everything: false });
      const [check] = await w.list();
      assert.equal(check?.verified, false);
      assert.equal(check?.reason, "no trusted key verifies it");
    });
  }

  it("does not verify a bundle whose subject is another image", async () => {
    const key = generateCosignKey("ed25519");
    const w = world([trusted(key, "release")]);
    const other = `sha256:${"cd".repeat(32)}`;
    const bundle = await sigstoreBundle({ key, kind: "dsse", subjectDigest: other });
    const built = bundleReferrerManifest(bundle, { mediaType: "x", digest: w.digest, size: 1 });
    w.content.putManifest(built.manifest, built.blobs);
    const [check] = await w.list();
    assert.equal(check?.verified, false);
    assert.equal(check?.reason, `bundle's statement names ${other}, not this image`);
  });

  it("answers a malformed bundle, and a keyless one without a trusted root, with reasons", async () => {
    const w = world([]);
    const subject = { mediaType: "x", digest: w.digest, size: 1 };
    const bad = bundleReferrerManifest(Buffer.from('{"mediaType":"nope"}'), subject);
    w.content.putManifest(bad.manifest, bad.blobs);
    const [check] = await w.list();
    assert.equal(check?.verified, false);
    assert.match(check?.reason ?? "", /^malformed Sigstore bundle: /);
  });
});
