// The public namespace through the pull-through cache: anyone may pull its `latest` tags, the first
// (cold) pull of an image the cache has never seen included; other tags still need credentials.
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { onOneEngine } from "../support/databases.js";
import { type Distribution, distributionSkip, startDistribution } from "../support/distribution.js";
import { type ImageLayoutResult, writeImageLayout } from "../support/oci-layout.js";
import { runSkopeo, skopeoSkip } from "../support/skopeo.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const skip = skopeoSkip || distributionSkip;
const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";

onOneEngine("pull-through cache in the public namespace", () => {
  describe("anonymous pulls", { skip }, () => {
    let upstream: Distribution;
    let wharf: TestServer;
    let work: string;
    let image: ImageLayoutResult;

    before(async () => {
      upstream = await startDistribution();
      wharf = await startTestServer({
        config: { eventsAllowLoopback: "true", eventsAllowHttp: "true", publicNamespace: "pub" },
      });
      const pub = await wharf.create("/iam/v2/groups", { name: "pub" });
      await wharf.create(`/registry/v2/upstreams/${pub}`, { name: "hub", url: upstream.url });
      work = await mkdtemp(join(tmpdir(), "wharf-pull-through-public-"));
      image = await writeImageLayout(join(work, "source"), { tag: "latest", files: { "etc/app": "1\n" } });
      for (const tag of ["latest", "v1"]) {
        const seeded = await runSkopeo([
          ...["copy", "--dest-tls-verify=false", `oci:${join(work, "source")}:latest`],
          `docker://${upstream.host}/library/app:${tag}`,
        ]);
        assert.equal(seeded.code, 0, seeded.stderr);
      }
    });
    after(async () => {
      await wharf?.close();
      await upstream?.close();
      if (work) await rm(work, { recursive: true, force: true });
    });

    it("refuses an anonymous cold pull of a tag that is not public, and fetches nothing", async () => {
      const asked = async () => (await upstream.logTail(10_000)).split("manifests/v1").length;
      const before = await asked();
      const res = await wharf.registry("/v2/pub/hub/library/app/manifests/v1", {
        headers: { accept: OCI_MANIFEST },
      });
      await res.arrayBuffer();
      assert.equal(res.status, 401);
      assert.equal(await asked(), before, "the upstream was asked for a tag the caller may not pull");
    });

    it("serves an anonymous cold pull of latest, manifest and blobs, with skopeo", async () => {
      const pulled = await runSkopeo([
        ...["copy", "--src-tls-verify=false", "--src-no-creds"],
        `docker://${new URL(wharf.registryUrl).host}/pub/hub/library/app:latest`,
        `oci:${join(work, "pulled")}:latest`,
      ]);
      assert.equal(pulled.code, 0, pulled.stderr);
      const res = await wharf.registry("/v2/pub/hub/library/app/manifests/latest", {
        method: "HEAD",
        headers: { accept: OCI_MANIFEST },
      });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("docker-content-digest"), image.manifestDigest);
    });

    it("still refuses other tags anonymously once the repo exists", async () => {
      const res = await wharf.registry("/v2/pub/hub/library/app/manifests/v1", {
        headers: { accept: OCI_MANIFEST },
      });
      await res.arrayBuffer();
      assert.equal(res.status, 401);
    });
  });
});
