import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { gunzipSync } from "node:zlib";
import {
  digestOf,
  layoutBlob,
  OCI_CONFIG,
  OCI_INDEX,
  OCI_LAYER_GZIP,
  OCI_MANIFEST,
  REF_NAME,
  writeImageLayout,
  writeMultiArchLayout,
} from "./oci-layout.js";
import { commandAvailable, runSkopeo, skopeoSkip } from "./skopeo.js";

const umociSkip = commandAvailable("umoci") ? false : "umoci not installed: apt-get install umoci";

const V1 = {
  tag: "v1",
  files: {
    "hello.txt": "hello v1\n",
    "etc/app/config.json": '{"port":8080}',
    "bin/blob": Buffer.from([0, 1, 2, 255]),
    [`${"deep/".repeat(30)}file.txt`]: "a path longer than 100 bytes",
  },
  layers: 3,
};
const V2 = { tag: "v2", files: { "hello.txt": "hello v2\n" } };
const MULTI = {
  tag: "multi",
  platforms: [
    { architecture: "amd64", os: "linux", files: { "arch.txt": "amd64" } },
    { architecture: "arm64", os: "linux", variant: "v8", files: { "arch.txt": "arm64" } },
  ],
};

async function writeAll(dir: string) {
  const v1 = await writeImageLayout(dir, V1);
  const v2 = await writeImageLayout(dir, V2);
  const multi = await writeMultiArchLayout(dir, MULTI);
  return { v1, v2, multi };
}

/** Every file of `dir` (relative path → sha256 hex). */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath ?? entry.path, entry.name);
    out[path.slice(dir.length + 1)] = createHash("sha256")
      .update(await readFile(path))
      .digest("hex");
  }
  return out;
}

function blobJson(dir: string, digest: string) {
  return JSON.parse(layoutBlob(dir, digest).toString("utf8"));
}

let root: string;
before(async () => {
  root = await mkdtemp(join(tmpdir(), "wharf-oci-layout-"));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("OCI layout writer", () => {
  test("the same inputs give the same digests and the same bytes in another directory", async () => {
    const a = await writeAll(join(root, "a"));
    const b = await writeAll(join(root, "b"));
    assert.deepEqual(a, b);
    assert.deepEqual(await snapshot(join(root, "a")), await snapshot(join(root, "b")));

    // Order of `files` does not matter; content does.
    const reordered = Object.fromEntries(Object.entries(V1.files).reverse());
    const c = await writeImageLayout(join(root, "c"), { ...V1, files: reordered });
    assert.equal(c.manifestDigest, a.v1.manifestDigest);
    const d = await writeImageLayout(join(root, "c"), { ...V1, files: { ...V1.files, "hello.txt": "x" } });
    assert.notEqual(d.manifestDigest, a.v1.manifestDigest);
  });

  test("manifest, config and layers are consistent and index.json names every tag", async () => {
    const dir = join(root, "structure");
    const { v1, v2, multi } = await writeAll(dir);

    const index = JSON.parse(await readFile(join(dir, "index.json"), "utf8"));
    assert.equal(index.schemaVersion, 2);
    assert.deepEqual(
      index.manifests.map((m: { annotations: Record<string, string>; digest: string; mediaType: string }) => [
        m.annotations[REF_NAME],
        m.digest,
        m.mediaType,
      ]),
      [
        ["multi", multi.indexDigest, OCI_INDEX],
        ["v1", v1.manifestDigest, OCI_MANIFEST],
        ["v2", v2.manifestDigest, OCI_MANIFEST],
      ],
    );
    assert.deepEqual(JSON.parse(await readFile(join(dir, "oci-layout"), "utf8")), {
      imageLayoutVersion: "1.0.0",
    });

    const manifestBytes = layoutBlob(dir, v1.manifestDigest);
    assert.equal(manifestBytes.length, v1.manifestSize);
    assert.equal(digestOf(manifestBytes), v1.manifestDigest);
    const manifest = JSON.parse(manifestBytes.toString("utf8"));
    assert.equal(manifest.mediaType, OCI_MANIFEST);
    assert.equal(manifest.config.mediaType, OCI_CONFIG);
    assert.equal(manifest.config.digest, v1.configDigest);
    assert.equal(manifest.layers.length, 3);
    assert.deepEqual(
      manifest.layers.map((l: { digest: string }) => l.digest),
      v1.layerDigests,
    );
    let size = manifest.config.size;
    const config = blobJson(dir, v1.configDigest);
    assert.equal(config.architecture, "amd64");
    assert.equal(config.os, "linux");
    manifest.layers.forEach((layer: { mediaType: string; digest: string; size: number }, i: number) => {
      assert.equal(layer.mediaType, OCI_LAYER_GZIP);
      const gz = layoutBlob(dir, layer.digest);
      assert.equal(gz.length, layer.size);
      size += layer.size;
      // gzip header: magic, deflate, no flags (no name), mtime 0, OS Unix.
      assert.equal(gz.subarray(0, 4).toString("hex"), "1f8b0800");
      assert.equal(gz.readUInt32LE(4), 0);
      assert.equal(gz[9], 3);
      assert.equal(digestOf(gunzipSync(gz)), config.rootfs.diff_ids[i]);
    });
    assert.equal(v1.size, size);

    const list = blobJson(dir, multi.indexDigest);
    assert.equal(list.mediaType, OCI_INDEX);
    assert.deepEqual(
      list.manifests.map((m: { platform: unknown; digest: string }) => [m.platform, m.digest]),
      [
        [{ architecture: "amd64", os: "linux" }, multi.platforms[0]!.manifestDigest],
        [{ architecture: "arm64", os: "linux", variant: "v8" }, multi.platforms[1]!.manifestDigest],
      ],
    );
    assert.equal(
      blobJson(dir, blobJson(dir, multi.platforms[1]!.manifestDigest).config.digest).architecture,
      "arm64",
    );
  });

  test("concurrent writes into one directory keep every tag", async () => {
    const dir = join(root, "concurrent");
    const tags = ["t1", "t2", "t3", "t4", "t5"];
    await Promise.all(tags.map((tag) => writeImageLayout(dir, { tag, files: { tag } })));
    const index = JSON.parse(await readFile(join(dir, "index.json"), "utf8"));
    assert.deepEqual(
      index.manifests.map((m: { annotations: Record<string, string> }) => m.annotations[REF_NAME]),
      tags,
    );
  });

  test("skopeo reads the layout: inspect --raw digests match, copy to dir: succeeds", {
    skip: skopeoSkip,
  }, async () => {
    const dir = join(root, "skopeo");
    const { v1, v2, multi } = await writeAll(dir);
    for (const [tag, digest] of [
      ["v1", v1.manifestDigest],
      ["v2", v2.manifestDigest],
      ["multi", multi.indexDigest],
    ] as const) {
      const r = await runSkopeo(["inspect", "--raw", `oci:${dir}:${tag}`]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(digestOf(r.stdout), digest, `inspect --raw of ${tag}`);
    }

    const out = join(root, "skopeo-dir");
    const copy = await runSkopeo(["copy", "-q", `oci:${dir}:v1`, `dir:${out}`]);
    assert.equal(copy.code, 0, copy.stderr);
    assert.equal(digestOf(await readFile(join(out, "manifest.json"))), v1.manifestDigest);
    for (const digest of [v1.configDigest, ...v1.layerDigests]) {
      assert.equal(digestOf(await readFile(join(out, digest.slice("sha256:".length)))), digest);
    }

    // A multi-platform copy keeps every digest (layout → layout).
    const back = join(root, "skopeo-multi");
    const all = await runSkopeo(["copy", "-q", "--all", `oci:${dir}:multi`, `oci:${back}:multi`]);
    assert.equal(all.code, 0, all.stderr);
    for (const digest of [multi.indexDigest, ...multi.platforms.map((p) => p.manifestDigest)]) {
      assert.equal(digestOf(layoutBlob(back, digest)), digest);
    }
  });

  test("umoci unpacks the image with the files given", { skip: umociSkip }, async () => {
    const dir = join(root, "umoci");
    await writeImageLayout(dir, V1);
    const bundle = join(root, "umoci-bundle");
    const { spawn } = await import("node:child_process");
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn("umoci", ["unpack", "--rootless", "--image", `${dir}:v1`, bundle], {
        stdio: "ignore",
      });
      child.on("error", reject);
      child.on("close", resolve);
    });
    assert.equal(code, 0);
    for (const [path, content] of Object.entries(V1.files)) {
      assert.deepEqual(await readFile(join(bundle, "rootfs", path)), Buffer.from(content));
    }
  });
});

describe("runSkopeo", { skip: skopeoSkip }, () => {
  let server: Server;
  let host: string;
  const seen: { url: string; authorization?: string }[] = [];
  before(async () => {
    // A stand-in registry in this process: answers only if runSkopeo leaves the event loop free.
    server = createServer((req, res) => {
      seen.push({ url: req.url ?? "", authorization: req.headers.authorization });
      if (req.url === "/v2/hang/manifests/latest") return; // never answers
      if (req.url === "/v2/" && !req.headers.authorization) {
        res.writeHead(401, { "www-authenticate": 'Basic realm="wharf"' }).end();
        return;
      }
      res.writeHead(req.url === "/v2/" ? 200 : 404, { "content-type": "application/json" });
      res.end(JSON.stringify({ errors: [{ code: "MANIFEST_UNKNOWN", message: "manifest unknown" }] }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  test("talks to a server in the same process and reports a failure as a code", async () => {
    const r = await runSkopeo(["inspect", "--tls-verify=false", `docker://${host}/acme/app:latest`]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /manifest unknown/i);
  });

  test("does not read the user's credentials (HOME, DOCKER_CONFIG, XDG_RUNTIME_DIR)", async () => {
    const home = join(root, "fake-home");
    const auths = JSON.stringify({
      auths: { [host]: { auth: Buffer.from("user:secret").toString("base64") } },
    });
    await mkdir(join(home, ".docker"), { recursive: true });
    await mkdir(join(home, "run", "containers"), { recursive: true });
    await writeFile(join(home, ".docker", "config.json"), auths);
    await writeFile(join(home, "run", "containers", "auth.json"), auths);
    const saved = { HOME: process.env.HOME, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR };
    process.env.HOME = home;
    process.env.XDG_RUNTIME_DIR = join(home, "run");
    try {
      seen.length = 0;
      await runSkopeo(["inspect", "--tls-verify=false", `docker://${host}/acme/app:latest`]);
      const sent = seen.map((s) => s.authorization ?? "");
      assert.ok(sent.length > 0);
      assert.ok(!sent.some((a) => a.includes(Buffer.from("user:secret").toString("base64"))), sent.join());
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  test("kills skopeo and rejects after the timeout", async () => {
    await assert.rejects(
      runSkopeo(["inspect", "--tls-verify=false", `docker://${host}/hang:latest`], { timeoutMs: 1000 }),
      /timed out after 1000 ms/,
    );
  });
});
