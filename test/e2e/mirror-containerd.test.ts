import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it, type TestContext } from "node:test";
import {
  type ContainerdDaemon,
  containerdSkip,
  startContainerd,
  writeHostsToml,
} from "../support/containerd.js";
import { type Distribution, distributionSkip, startDistribution } from "../support/distribution.js";
import { type ImageLayoutResult, writeImageLayout } from "../support/oci-layout.js";
import { runSkopeo, skopeoSkip } from "../support/skopeo.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

// The transparent mirror with a real containerd (ADR 0053): `ctr images pull --hosts-dir` with a
// hosts.toml whose mirror is Wharf sends `/v2/<path>/…?ns=<registry host>`; Wharf serves the
// mapped upstream's pull-through cache, each upstream a real docker-registry seeded with skopeo.
// Two hosts map to two upstreams holding different images under the same path, so a pull that gets
// the right image shows `ns` decided it.

describe("transparent mirror: containerd hosts.toml", {
  skip: containerdSkip || skopeoSkip || distributionSkip,
}, () => {
  let wharf: TestServer;
  let hub: Distribution;
  let quay: Distribution;
  let work: string;
  let hostsDir: string;
  let containerd: ContainerdDaemon | undefined;
  let skipped: string | undefined;
  let hubImage: ImageLayoutResult;
  let quayImage: ImageLayoutResult;
  let creds: string;

  const skipUnlessContainerd = (t: TestContext): ContainerdDaemon | undefined => {
    if (skipped) t.skip(skipped);
    return containerd;
  };

  before(async () => {
    work = await mkdtemp(join(tmpdir(), "wharf-mirror-containerd-"));
    [hub, quay] = await Promise.all([startDistribution(), startDistribution()]);
    const layout = join(work, "layout");
    hubImage = await writeImageLayout(layout, { tag: "hub", files: { "etc/from": "docker.io\n" } });
    quayImage = await writeImageLayout(layout, { tag: "quay", files: { "etc/from": "quay.io\n" } });
    for (const [tag, registry] of [
      ["hub", hub],
      ["quay", quay],
    ] as const) {
      const seeded = await runSkopeo([
        ...[
          "copy",
          "--dest-tls-verify=false",
          `oci:${layout}:${tag}`,
          `docker://${registry.host}/library/app:1`,
        ],
      ]);
      assert.equal(seeded.code, 0, seeded.stderr);
    }
    wharf = await startTestServer({
      config: {
        mirrorUpstream: "docker.io=acme/hub,quay.io=acme/quay",
        ...{ eventsAllowLoopback: "true", eventsAllowHttp: "true" },
      },
    });
    creds = `_token:${await wharf.registryToken()}`;
    const acme = await wharf.create("/iam/v2/groups", { name: "acme" });
    await wharf.create(`/registry/v2/upstreams/${acme}`, { name: "hub", url: hub.url });
    await wharf.create(`/registry/v2/upstreams/${acme}`, { name: "quay", url: quay.url });
    hostsDir = join(work, "certs.d");
    await writeHostsToml(hostsDir, "docker.io", wharf.registryUrl);
    await writeHostsToml(hostsDir, "quay.io", wharf.registryUrl);
    const started = await startContainerd(join(work, "containerd"));
    if ("skip" in started) skipped = started.skip;
    else containerd = started;
  });

  after(async () => {
    await containerd?.stop();
    await wharf?.close();
    await Promise.all([hub?.close(), quay?.close()]);
    if (work) await rm(work, { recursive: true, force: true });
  });

  /** `ctr images pull` of `ref` through the hosts dir, as `user` (none: anonymous). */
  const pull = (c: ContainerdDaemon, ref: string, user?: string) =>
    c.ctr([
      ...["images", "pull", "--hosts-dir", hostsDir, "--snapshotter", "native"],
      ...(user === undefined ? [] : ["--user", user]),
      ref,
    ]);

  /** The digest containerd recorded for `ref`. */
  async function digestOf(c: ContainerdDaemon, ref: string): Promise<string | undefined> {
    const listed = await c.ctr(["images", "list"]);
    const line = listed.stdout.split("\n").find((l) => l.startsWith(`${ref} `));
    return line?.split(/\s+/).find((field) => field.startsWith("sha256:"));
  }

  it("pulls docker.io/library/app:1 from docker.io's upstream, the request carrying ?ns=docker.io", async (t) => {
    const c = skipUnlessContainerd(t);
    if (!c) return;
    const before = wharf.logLines.length;
    const pulled = await pull(c, "docker.io/library/app:1", creds);
    assert.equal(pulled.code, 0, `${pulled.stdout}\n${pulled.stderr}`);
    assert.equal(await digestOf(c, "docker.io/library/app:1"), hubImage.manifestDigest);
    const lines = wharf.logLines.slice(before).filter((l) => l.msg === "request" && l.route === "manifest");
    assert.ok(lines.length > 0, "containerd asked Wharf");
    for (const line of lines) {
      assert.match(String(line.path), /^\/v2\/library\/app\/manifests\/(1|sha256:[0-9a-f]{64})$/);
      assert.equal(line.ns, "docker.io", "Wharf saw ns");
      assert.equal(line.mirroredTo, "acme/hub/library/app");
    }
    assert.ok(lines.some((l) => l.status === 200));
  });

  it("pulls quay.io/library/app:1 from quay.io's upstream: ns, not the path, picks the upstream", async (t) => {
    const c = skipUnlessContainerd(t);
    if (!c) return;
    const pulled = await pull(c, "quay.io/library/app:1", creds);
    assert.equal(pulled.code, 0, `${pulled.stdout}\n${pulled.stderr}`);
    assert.equal(await digestOf(c, "quay.io/library/app:1"), quayImage.manifestDigest);
    assert.notEqual(quayImage.manifestDigest, hubImage.manifestDigest);
  });

  it("refuses an anonymous pull of a private organization's upstream", async (t) => {
    const c = skipUnlessContainerd(t);
    if (!c) return;
    const before = wharf.logLines.length;
    // ctr resolves the tag at the registry even when the image is already in its store.
    const pulled = await pull(c, "docker.io/library/app:1", undefined);
    assert.notEqual(pulled.code, 0, pulled.stdout);
    const refused = wharf.logLines
      .slice(before)
      .filter((l) => l.msg === "request" && l.mirroredTo === "acme/hub/library/app");
    assert.ok(refused.length > 0 && refused.every((l) => l.status === 401 || l.status === 403));
  });
});
