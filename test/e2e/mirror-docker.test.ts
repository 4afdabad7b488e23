import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it, type TestContext } from "node:test";
import { type Distribution, distributionSkip, startDistribution } from "../support/distribution.js";
import { type DockerDaemon, dockerSkip, startDocker } from "../support/docker.js";
import { type ImageLayoutResult, writeImageLayout } from "../support/oci-layout.js";
import { runSkopeo, skopeoSkip } from "../support/skopeo.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

// The transparent mirror with the real Docker daemon (ADR 0053): `registry-mirrors` sends Docker
// Hub paths (`/v2/library/…`, `/v2/demo/app/…`) without `ns`; Wharf serves them from the
// `docker.io` mapping's upstream, `acme/hub`: a pull-through cache of a real docker-registry seeded
// with skopeo. There is no network here, so a pull that succeeds was served by the mirror.

const INDEX_SERVER = "https://index.docker.io/v1/";

describe("transparent mirror: docker registry-mirrors", {
  skip: dockerSkip || skopeoSkip || distributionSkip,
}, () => {
  let wharf: TestServer;
  let upstream: Distribution;
  let work: string;
  let docker: DockerDaemon | undefined;
  let skipped: string | undefined;
  let app: ImageLayoutResult;
  let busybox: ImageLayoutResult;
  let registryToken: string;
  let acmeUid: string;

  const skipUnlessDocker = (t: TestContext): DockerDaemon | undefined => {
    if (skipped) t.skip(skipped);
    return docker;
  };

  /** Writes the client's `config.json`: Wharf's token as the credentials for Docker Hub, or none. */
  async function credentials(token: string | undefined): Promise<void> {
    const auths =
      token === undefined
        ? {}
        : { [INDEX_SERVER]: { auth: Buffer.from(`_token:${token}`).toString("base64") } };
    await writeFile(
      join(docker?.configDir as string, "config.json"),
      `${JSON.stringify({ auths }, null, 2)}\n`,
    );
  }

  before(async () => {
    work = await mkdtemp(join(tmpdir(), "wharf-mirror-docker-"));
    upstream = await startDistribution();
    const layout = join(work, "layout");
    app = await writeImageLayout(layout, { tag: "app", files: { "etc/app": "demo app 1\n" } });
    busybox = await writeImageLayout(layout, { tag: "busybox", files: { "bin/busybox": "not really\n" } });
    for (const [tag, target] of [
      ["app", "demo/app:1"],
      ["busybox", "library/busybox:latest"],
    ] as const) {
      const seeded = await runSkopeo([
        ...["copy", "--dest-tls-verify=false", `oci:${layout}:${tag}`, `docker://${upstream.host}/${target}`],
      ]);
      assert.equal(seeded.code, 0, seeded.stderr);
    }
    wharf = await startTestServer({
      config: {
        ...{ mirrorUpstream: "docker.io=acme/hub", publicNamespace: "acme" },
        // The upstream is on loopback, in plain HTTP.
        ...{ eventsAllowLoopback: "true", eventsAllowHttp: "true" },
      },
    });
    registryToken = await wharf.registryToken();
    acmeUid = await wharf.create("/iam/v2/groups", { name: "acme" });
    await wharf.create(`/registry/v2/upstreams/${acmeUid}`, { name: "hub", url: upstream.url });
    const host = new URL(wharf.registryUrl).host;
    const started = await startDocker(join(work, "docker"), {
      "registry-mirrors": [wharf.registryUrl],
      "insecure-registries": [host],
    });
    if ("skip" in started) skipped = started.skip;
    else docker = started;
  });

  after(async () => {
    await docker?.stop();
    await wharf?.close();
    await upstream?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("writes the daemon.json the guide shows", async (t) => {
    const d = skipUnlessDocker(t);
    if (!d) return;
    const written = JSON.parse(await readFile(d.daemonJson, "utf8")) as Record<string, string[]>;
    assert.deepEqual(written["registry-mirrors"], [wharf.registryUrl]);
  });

  it("refuses a pull of a tag that is not public without credentials", async (t) => {
    const d = skipUnlessDocker(t);
    if (!d) return;
    await credentials(undefined);
    const pulled = await d.docker(["pull", "demo/app:1"]);
    assert.notEqual(pulled.code, 0, pulled.stdout);
    const seen = wharf.logLines.filter((l) => l.msg === "request" && l.mirroredTo === "acme/hub/demo/app");
    assert.ok(seen.length > 0, "docker asked the mirror first");
    assert.ok(
      seen.every((l) => l.status === 401 || l.status === 403),
      JSON.stringify(seen.map((l) => l.status)),
    );
  });

  it("pulls a Hub-style name (demo/app:1) with Wharf's token as the Docker Hub credentials", async (t) => {
    const d = skipUnlessDocker(t);
    if (!d) return;
    await credentials(registryToken);
    const before = wharf.logLines.length;
    const pulled = await d.docker(["pull", "demo/app:1"]);
    assert.equal(pulled.code, 0, `${pulled.stdout}\n${pulled.stderr}`);
    const id = await d.docker(["image", "inspect", "--format", "{{.Id}}", "demo/app:1"]);
    assert.equal(id.stdout.trim(), app.configDigest, "the image pushed under acme/hub/demo/app");
    const lines = wharf.logLines.slice(before).filter((l) => l.msg === "request");
    const manifest = lines.find((l) => l.route === "manifest" && l.status === 200);
    assert.equal(manifest?.path, "/v2/demo/app/manifests/1", "docker sent the Hub path");
    assert.equal(manifest?.mirroredTo, "acme/hub/demo/app");
    assert.equal(manifest?.ns, undefined, "docker sends no ns");
  });

  it("pulls an official image (busybox → library/busybox:latest)", async (t) => {
    const d = skipUnlessDocker(t);
    if (!d) return;
    await credentials(registryToken);
    const pulled = await d.docker(["pull", "busybox"]);
    assert.equal(pulled.code, 0, `${pulled.stdout}\n${pulled.stderr}`);
    const id = await d.docker(["image", "inspect", "--format", "{{.Id}}", "busybox:latest"]);
    assert.equal(id.stdout.trim(), busybox.configDigest);
  });

  it("recorded the pulled image in acme/hub like a push, and pulls it again with the upstream stopped", async (t) => {
    const d = skipUnlessDocker(t);
    if (!d) return;
    const repos = (await (
      await wharf.api(`/registry/v2/repos?uidp.descendants_of=${acmeUid}&name=app`, {
        token: wharf.adminToken,
      })
    ).json()) as { repos?: { uid: string }[] };
    const repo = repos.repos?.[0]?.uid;
    assert.ok(repo, "the cache created acme/hub/demo/app");
    const tags = (await (
      await wharf.api(`/registry/v2/tags?uidp.children_of=${repo}`, { token: wharf.adminToken })
    ).json()) as { tags?: { name: string; digest: string }[] };
    assert.deepEqual(
      tags.tags?.map((tag) => [tag.name, tag.digest]),
      [["1", app.manifestDigest]],
    );
    await credentials(registryToken);
    assert.equal((await d.docker(["image", "rm", "demo/app:1"])).code, 0);
    await upstream.stop();
    try {
      const pulled = await d.docker(["pull", "demo/app:1"]);
      assert.equal(pulled.code, 0, `${pulled.stdout}\n${pulled.stderr}`);
      const id = await d.docker(["image", "inspect", "--format", "{{.Id}}", "demo/app:1"]);
      assert.equal(id.stdout.trim(), app.configDigest);
    } finally {
      await upstream.restart();
    }
  });

  it("pulls a latest tag anonymously when the organization is the public namespace", async (t) => {
    const d = skipUnlessDocker(t);
    if (!d) return;
    await credentials(undefined);
    await d.docker(["image", "rm", "busybox:latest"]);
    const pulled = await d.docker(["pull", "library/busybox:latest"]);
    assert.equal(pulled.code, 0, `${pulled.stdout}\n${pulled.stderr}`);
    const id = await d.docker(["image", "inspect", "--format", "{{.Id}}", "busybox:latest"]);
    assert.equal(id.stdout.trim(), busybox.configDigest);
    // Other tags of a public namespace still need credentials.
    await d.docker(["image", "rm", "demo/app:1"]);
    assert.notEqual((await d.docker(["pull", "demo/app:1"])).code, 0);
  });
});
