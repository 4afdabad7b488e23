import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { onOneEngine } from "../support/databases.js";
import { writeImageLayout } from "../support/oci-layout.js";
import { personWithRole } from "../support/registered-person.js";
import {
  buildImage,
  ociErrorOf,
  pushBlob,
  pushImage,
  putManifest,
  uploadBlob,
} from "../support/registry-push.js";
import { runSkopeo, skopeoSkip } from "../support/skopeo.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const REFUSAL = "acme/hub is the pull-through cache of upstream hub: pushes are refused";

// The registry refuses writes into an upstream's namespace for everyone, the platform
// administrator included; deletes (evicting the cache) stay allowed. The engine cannot change
// this (the directory's storage runs on both engines in its unit and conformance tests).
onOneEngine("upstreams: pushes into an upstream's namespace are refused", () => {
  let wharf: TestServer;
  let admin: string;
  let owner: string;
  let upstream: string;
  const before1 = buildImage("cached-before");

  before(async () => {
    // Loopback and plain http allowed, as for a local test upstream (nothing connects to it here).
    wharf = await startTestServer({ config: { eventsAllowLoopback: "true", eventsAllowHttp: "true" } });
    admin = await wharf.registryToken();
    const acme = await wharf.create("/iam/v2/groups", { name: "acme" });
    owner = await wharf.registryToken((await personWithRole(wharf, "olga", acme, "owner")).uid);
    // Content pushed before the upstream existed stays where it is (ADR 0051).
    await pushImage(wharf, "acme/hub/old", "v1", admin, before1);
    upstream = await wharf.create(`/registry/v2/upstreams/${acme}`, {
      name: "hub",
      url: "http://127.0.0.1:9",
    });
  });
  after(async () => {
    await wharf?.close();
  });

  it("refuses blob uploads and manifest PUTs with 403 DENIED naming the upstream, to the administrator and the owner", async () => {
    const image = buildImage("refused");
    for (const token of [admin, owner]) {
      const blob = await uploadBlob(wharf, "acme/hub/library/alpine", "some bytes", token);
      assert.equal(blob.status, 403);
      assert.deepEqual(await ociErrorOf(blob), { code: "DENIED", message: REFUSAL });
      const session = await wharf.registry("/v2/acme/hub/library/alpine/blobs/uploads/", {
        method: "POST",
        token,
      });
      assert.equal(session.status, 403);
      const manifest = await putManifest(wharf, "acme/hub/old", "v2", image.manifest, token);
      assert.equal(manifest.status, 403);
      assert.equal((await ociErrorOf(manifest)).message, REFUSAL);
    }
    // Nothing was created: the refused paths have no repo.
    const missing = await wharf.registry("/v2/acme/hub/library/alpine/tags/list", { token: admin });
    assert.equal(missing.status, 404);
  });

  it("refuses a cross-repository mount into the namespace; mounting out of it is a pull and works", async () => {
    const digest = before1.digest;
    const into = await wharf.registry(
      `/v2/acme/hub/mounted/blobs/uploads/?mount=${configDigest()}&from=acme/app`,
      {
        method: "POST",
        token: admin,
      },
    );
    assert.equal(into.status, 403);
    assert.equal((await ociErrorOf(into)).message, REFUSAL);
    const out = await wharf.registry(
      `/v2/acme/app/blobs/uploads/?mount=${configDigest()}&from=acme/hub/old`,
      {
        method: "POST",
        token: admin,
      },
    );
    assert.equal(out.status, 201, await out.text());
    assert.ok(digest);
  });

  it("allows pushes beside the namespace, and deletes in it (evicting the cache)", async () => {
    await pushImage(wharf, "acme/hubby/app", "v1", owner, "beside-1");
    await pushImage(wharf, "acme/team/hub/app", "v1", owner, "beside-2");
    const deleted = await wharf.registry(`/v2/acme/hub/old/manifests/${before1.digest}`, {
      method: "DELETE",
      token: owner,
    });
    assert.equal(deleted.status, 202, await deleted.text());
  });

  it("accepts pushes again once the upstream is deleted", async () => {
    const res = await wharf.api(`/registry/v2/upstreams/${upstream}`, {
      method: "DELETE",
      token: wharf.adminToken,
    });
    assert.equal(res.status, 200, await res.text());
    await pushBlob(wharf, "acme/hub/after", "after the upstream", admin);
    await wharf.create(`/registry/v2/upstreams/${upstream.split("/")[0]}`, {
      name: "hub",
      url: "http://127.0.0.1:9",
    });
    const again = await uploadBlob(wharf, "acme/hub/after", "and again", admin);
    assert.equal(again.status, 403, "a new upstream of the name closes the namespace again at once");
  });

  describe("as skopeo users see it", { skip: skopeoSkip }, () => {
    let work: string;
    before(async () => {
      work = await mkdtemp(join(tmpdir(), "wharf-upstream-push-"));
      await writeImageLayout(join(work, "src"), { tag: "v1", files: { "etc/hello": "hi\n" }, layers: 1 });
    });
    after(async () => {
      if (work) await rm(work, { recursive: true, force: true });
    });

    it("skopeo copy into the namespace fails with the registry's message, with the administrator's token", async () => {
      const host = new URL(wharf.registryUrl).host;
      const pushed = await runSkopeo([
        "copy",
        "--dest-tls-verify=false",
        "--dest-creds",
        `_token:${admin}`,
        `oci:${join(work, "src")}:v1`,
        `docker://${host}/acme/hub/library/hello:v1`,
      ]);
      assert.notEqual(pushed.code, 0);
      assert.ok(pushed.stderr.includes(REFUSAL), `skopeo's stderr shows the refusal: ${pushed.stderr}`);
      const beside = await runSkopeo([
        "copy",
        "--dest-tls-verify=false",
        "--dest-creds",
        `_token:${admin}`,
        `oci:${join(work, "src")}:v1`,
        `docker://${host}/acme/library/hello:v1`,
      ]);
      assert.equal(beside.code, 0, beside.stderr);
    });
  });

  /** The config blob of `before1`, which acme/hub/old holds. */
  function configDigest(): string {
    const parsed = JSON.parse(before1.manifest.toString("utf8")) as { config: { digest: string } };
    return parsed.config.digest;
  }
});
