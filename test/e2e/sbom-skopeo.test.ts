// A real client's push of the layout docker buildx writes with `--sbom=true` (an index listing the
// image and an in-toto attestation manifest for it), copied with skopeo, then read with GetSbom.
// SQLite: storage is covered on both engines by sbom.test.ts.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { expectJson } from "../support/api-assertions.js";
import {
  digestOf,
  OCI_CONFIG,
  OCI_INDEX,
  OCI_MANIFEST,
  REF_NAME,
  writeImageLayout,
} from "../support/oci-layout.js";
import { runSkopeo, skopeoSkip } from "../support/skopeo.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

/** Writes `bytes` as a blob of the layout at `dir`; its descriptor fields. */
async function blob(dir: string, bytes: Buffer): Promise<{ digest: string; size: number }> {
  const digest = digestOf(bytes);
  await writeFile(join(dir, "blobs", "sha256", digest.slice("sha256:".length)), bytes);
  return { digest, size: bytes.length };
}

describe("an SBOM attestation pushed with skopeo in docker buildx's layout", { skip: skopeoSkip }, () => {
  let wharf: TestServer;
  let work: string;

  before(async () => {
    wharf = await startTestServer();
    await wharf.create("/iam/v2/groups", { name: "acme" });
    work = await mkdtemp(join(tmpdir(), "wharf-sbom-skopeo-"));
  });
  after(async () => {
    await wharf?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("GetSbom answers the image's packages from the attestation manifest in its index", async () => {
    const dir = join(work, "layout");
    const image = await writeImageLayout(dir, {
      tag: "image-only",
      files: { "etc/os-release": "ID=test\n" },
    });
    const statement = await blob(
      dir,
      readFileSync(new URL("../fixtures/sbom/spdx-2.3.intoto.json", import.meta.url)),
    );
    const config = await blob(
      dir,
      Buffer.from(
        '{"architecture":"unknown","os":"unknown","config":{},"rootfs":{"type":"layers","diff_ids":[]}}',
      ),
    );
    const attestation = await blob(
      dir,
      Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: OCI_MANIFEST,
          config: { mediaType: OCI_CONFIG, ...config },
          layers: [
            {
              mediaType: "application/vnd.in-toto+json",
              ...statement,
              annotations: { "in-toto.io/predicate-type": "https://spdx.dev/Document" },
            },
          ],
        }),
      ),
    );
    const index = await blob(
      dir,
      Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: OCI_INDEX,
          manifests: [
            {
              mediaType: OCI_MANIFEST,
              digest: image.manifestDigest,
              size: image.manifestSize,
              platform: { architecture: "amd64", os: "linux" },
            },
            {
              mediaType: OCI_MANIFEST,
              ...attestation,
              platform: { architecture: "unknown", os: "unknown" },
              annotations: {
                "vnd.docker.reference.digest": image.manifestDigest,
                "vnd.docker.reference.type": "attestation-manifest",
              },
            },
          ],
        }),
      ),
    );
    await writeFile(
      join(dir, "index.json"),
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI_INDEX,
        manifests: [{ mediaType: OCI_INDEX, ...index, annotations: { [REF_NAME]: "1.0" } }],
      }),
    );
    const host = new URL(wharf.registryUrl).host;
    const pushed = await runSkopeo([
      "copy",
      "--all",
      "--preserve-digests",
      "--dest-tls-verify=false",
      "--dest-creds",
      `_token:${await wharf.registryToken()}`,
      `oci:${dir}:1.0`,
      `docker://${host}/acme/built:1.0`,
    ]);
    assert.equal(pushed.code, 0, pushed.stderr);

    const repos = await expectJson<{ repos: { uid: string }[] }>(
      await wharf.api("/registry/v2/repos?name=built", { token: wharf.adminToken }),
    );
    const repoUid = repos.repos[0]?.uid as string;
    const sbom = await expectJson<{ format: string; referrer: string; packages: { name: string }[] }>(
      await wharf.api(`/registry/v2/repos/${repoUid}/digests/${image.manifestDigest}/sbom`, {
        token: wharf.adminToken,
      }),
    );
    assert.equal(sbom.format, "SPDX-2.3");
    assert.equal(sbom.referrer, attestation.digest);
    assert.deepEqual(
      sbom.packages.map((p) => p.name),
      ["alpine-baselayout", "libssl3", "busybox", "golang.org/x/net", "app"],
    );
  });
});
