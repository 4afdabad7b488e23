import assert from "node:assert/strict";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { expectJson } from "../support/api-assertions.js";
import {
  type ImageLayoutResult,
  layoutBlob,
  type MultiArchLayoutResult,
  writeImageLayout,
  writeMultiArchLayout,
} from "../support/oci-layout.js";
import { runSkopeo, type SkopeoResult, skopeoSkip } from "../support/skopeo.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

function ok(r: SkopeoResult, what: string): string {
  assert.equal(r.code, 0, `${what} failed: ${r.stderr}`);
  return r.stdout;
}

describe("the registry with a real client (skopeo)", { skip: skopeoSkip }, () => {
  let wharf: TestServer;
  let work: string;
  let source: string;
  let host: string;
  let creds: string;
  let acme: string;
  let v1: ImageLayoutResult;
  let v2: ImageLayoutResult;
  let multi: MultiArchLayoutResult;

  async function repoUid(name: string): Promise<string> {
    const list = await expectJson<{ repos?: { uid: string }[] }>(
      await wharf.api(`/registry/v2/repos?uidp.descendants_of=${acme}&name=${name}`, {
        token: wharf.adminToken,
      }),
    );
    const uid = list.repos?.[0]?.uid;
    assert.ok(uid, `repo ${name} exists`);
    return uid;
  }

  async function apiTags(repo: string): Promise<{ name: string; digest: string }[]> {
    const body = await expectJson<{ tags?: { name: string; digest: string }[] }>(
      await wharf.api(`/registry/v2/tags?uidp.children_of=${repo}`, { token: wharf.adminToken }),
    );
    return body.tags ?? [];
  }

  before(async () => {
    wharf = await startTestServer();
    host = new URL(wharf.registryUrl).host;
    creds = `_token:${await wharf.registryToken()}`;
    acme = await wharf.create("/iam/v2/groups", { name: "acme" });
    work = await mkdtemp(join(tmpdir(), "wharf-skopeo-test-"));
    source = join(work, "source");
    v1 = await writeImageLayout(source, {
      tag: "v1",
      files: { "etc/version": "1\n", "usr/bin/app": "#!/bin/sh\necho one\n" },
      layers: 2,
    });
    v2 = await writeImageLayout(source, {
      tag: "v2",
      files: { "etc/version": "2\n", "usr/bin/app": "#!/bin/sh\necho two\n" },
      layers: 2,
    });
    multi = await writeMultiArchLayout(source, {
      tag: "multi",
      platforms: [
        { architecture: "amd64", os: "linux", files: { "arch.txt": "amd64\n" } },
        {
          architecture: "arm64",
          os: "linux",
          variant: "v8",
          files: { "arch.txt": "arm64\n", "lib/extra.so": Buffer.alloc(4096, 7) },
        },
      ],
    });
  });
  after(async () => {
    await wharf?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("pushes two versions to one tag; the tag history lists both in order", async () => {
    for (const tag of ["v1", "v2"]) {
      ok(
        await runSkopeo([
          "copy",
          "--dest-tls-verify=false",
          "--dest-creds",
          creds,
          `oci:${source}:${tag}`,
          `docker://${host}/acme/app:latest`,
        ]),
        `push ${tag}`,
      );
    }
    const history = await expectJson<{ history: { digest: string; updateTimestamp: string }[] }>(
      await wharf.registry("/v2/acme/app/_service/history/latest", { token: await wharf.registryToken() }),
    );
    assert.deepEqual(
      history.history.map((h) => h.digest),
      [v1.manifestDigest, v2.manifestDigest],
    );
    const tags = await apiTags(await repoUid("app"));
    assert.deepEqual(
      tags.map((t) => [t.name, t.digest]),
      [["latest", v2.manifestDigest]],
    );
  });

  it("pulls the older digest back byte for byte", async () => {
    const ref = `docker://${host}/acme/app@${v1.manifestDigest}`;
    const remoteRaw = ok(
      await runSkopeo(["inspect", "--raw", "--tls-verify=false", "--creds", creds, ref]),
      "inspect --raw",
    );
    assert.equal(remoteRaw, layoutBlob(source, v1.manifestDigest).toString("utf8"));

    const out = join(work, "pulled");
    ok(
      await runSkopeo(["copy", "--src-tls-verify=false", "--src-creds", creds, ref, `oci:${out}:old`]),
      "pull by digest",
    );
    const localRaw = ok(await runSkopeo(["inspect", "--raw", `oci:${out}:old`]), "inspect local");
    assert.equal(localRaw, layoutBlob(source, v1.manifestDigest).toString("utf8"));
    const blobs = (await readdir(join(out, "blobs", "sha256"))).map((h) => `sha256:${h}`).sort();
    const expected = [v1.manifestDigest, v1.configDigest, ...v1.layerDigests].sort();
    assert.deepEqual(blobs, expected);
    for (const digest of expected) {
      assert.ok(layoutBlob(out, digest).equals(layoutBlob(source, digest)), `${digest} identical`);
    }
  });

  it("lists the tag", async () => {
    const listed = JSON.parse(
      ok(
        await runSkopeo(["list-tags", "--tls-verify=false", "--creds", creds, `docker://${host}/acme/app`]),
        "list-tags",
      ),
    ) as { Repository: string; Tags: string[] };
    assert.deepEqual(listed.Tags, ["latest"]);
    assert.equal(listed.Repository, `${host}/acme/app`);
  });

  it("copies a multi-arch index whole; the Tags list shows its digest", async () => {
    ok(
      await runSkopeo([
        "copy",
        "--all",
        "--dest-tls-verify=false",
        "--dest-creds",
        creds,
        `oci:${source}:multi`,
        `docker://${host}/acme/multi:1`,
      ]),
      "copy --all",
    );
    const raw = ok(
      await runSkopeo([
        "inspect",
        "--raw",
        "--tls-verify=false",
        "--creds",
        creds,
        `docker://${host}/acme/multi:1`,
      ]),
      "inspect index",
    );
    assert.equal(raw, layoutBlob(source, multi.indexDigest).toString("utf8"));
    const tags = await apiTags(await repoUid("multi"));
    assert.deepEqual(
      tags.map((t) => [t.name, t.digest]),
      [["1", multi.indexDigest]],
    );
    // Every platform manifest went along.
    for (const p of multi.platforms) {
      const res = await wharf.registry(`/v2/acme/multi/manifests/${p.manifestDigest}`, {
        method: "HEAD",
        token: await wharf.registryToken(),
      });
      assert.equal(res.status, 200, p.architecture);
    }
  });

  it("answers the architectures of the index and the size of one architecture", async () => {
    const repo = await repoUid("multi");
    const archs = await expectJson<{ architectures: string[] }>(
      await wharf.api(`/registry/v2/repos/${repo}/digests/${multi.indexDigest}/architectures`, {
        token: wharf.adminToken,
      }),
    );
    assert.deepEqual([...archs.architectures].sort(), ["amd64", "arm64"]);
    const arm64 = multi.platforms.find((p) => p.architecture === "arm64");
    assert.ok(arm64, "arm64 platform in the layout");
    const size = await expectJson<{ size: string; architecture: string }>(
      await wharf.api(`/registry/v2/repos/${repo}/digests/${multi.indexDigest}/size?architecture=arm64`, {
        token: wharf.adminToken,
      }),
    );
    assert.equal(size.size, String(arm64.size));
    assert.equal(size.architecture, "arm64");
    const amd64 = multi.platforms.find((p) => p.architecture === "amd64");
    const byDefault = await expectJson<{ size: string; architecture: string }>(
      await wharf.api(`/registry/v2/repos/${repo}/digests/${multi.indexDigest}/size`, {
        token: wharf.adminToken,
      }),
    );
    assert.deepEqual(byDefault, { size: String(amd64?.size), architecture: "amd64" });
    const single = await expectJson<{ architectures: string[] }>(
      await wharf.api(
        `/registry/v2/repos/${await repoUid("app")}/digests/${v1.manifestDigest}/architectures`,
        {
          token: wharf.adminToken,
        },
      ),
    );
    assert.deepEqual(single.architectures, ["amd64"]);
  });
});
