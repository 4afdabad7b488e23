import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
import { forEachEngine } from "../support/databases.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

// The checks of the OCI Distribution Spec v1.1 conformance workflows (pull, push, content
// discovery, content management), written against Wharf over plain HTTP.

const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
const OCI_INDEX = "application/vnd.oci.image.index.v1+json";
const EMPTY_CONFIG = "application/vnd.oci.empty.v1+json";
const EMPTY_DIGEST = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";

const sha256 = (data: string | Uint8Array) => `sha256:${createHash("sha256").update(data).digest("hex")}`;

interface OciErrorBody {
  errors: { code: string; message: string }[];
}

async function expectOciError(res: Response, status: number, code: string): Promise<string> {
  const body = (await res.json()) as OciErrorBody;
  assert.equal(res.status, status, JSON.stringify(body));
  assert.equal(body.errors[0]?.code, code, JSON.stringify(body));
  return body.errors[0]?.message ?? "";
}

forEachEngine("OCI distribution spec", (db) => {
  let server: TestServer;
  let token: string;
  const name = "conformance/app";
  const other = "conformance/other";
  const config = Buffer.from(
    JSON.stringify({ architecture: "amd64", os: "linux", rootfs: { type: "layers", diff_ids: [] } }),
  );
  const layer = Buffer.from("layer bytes for the conformance suite\n".repeat(100));

  const registry = (path: string, init: Parameters<TestServer["registry"]>[1] = {}) =>
    server.registry(path, { token, ...init });

  async function pushBlob(repo: string, bytes: Uint8Array): Promise<string> {
    const digest = sha256(bytes);
    const res = await registry(`/v2/${repo}/blobs/uploads/?digest=${digest}`, {
      method: "POST",
      headers: { "content-type": "application/octet-stream" },
      body: bytes,
    });
    assert.equal(res.status, 201, await res.text());
    return digest;
  }

  function imageManifest(extra: Record<string, unknown> = {}): Buffer {
    return Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        config: {
          mediaType: "application/vnd.oci.image.config.v1+json",
          digest: sha256(config),
          size: config.length,
        },
        layers: [
          { mediaType: "application/vnd.oci.image.layer.v1.tar", digest: sha256(layer), size: layer.length },
        ],
        ...extra,
      }),
    );
  }

  async function putManifest(repo: string, reference: string, body: Buffer, mediaType = OCI_MANIFEST) {
    return registry(`/v2/${repo}/manifests/${reference}`, {
      method: "PUT",
      headers: { "content-type": mediaType },
      body,
    });
  }

  before(async () => {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    server = await startTestServer(databaseUrl ? { databaseUrl } : {});
    token = await server.registryToken();
    await server.create("/iam/v2/groups", { name: "conformance" });
    // A push creates the repo on first use.
    await pushBlob(name, config);
    await pushBlob(name, layer);
    const res = await putManifest(name, "tagged", imageManifest());
    assert.equal(res.status, 201, await res.text());
  });
  after(() => server?.close());

  describe("pull", () => {
    it("answers /v2/ with 200 for a valid token", async () => {
      const res = await registry("/v2/");
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("docker-distribution-api-version"), "registry/2.0");
    });

    it("HEADs and GETs a blob with its length and digest", async () => {
      const digest = sha256(layer);
      const head = await registry(`/v2/${name}/blobs/${digest}`, { method: "HEAD" });
      assert.equal(head.status, 200);
      assert.equal(head.headers.get("content-length"), String(layer.length));
      assert.equal(head.headers.get("docker-content-digest"), digest);
      const get = await registry(`/v2/${name}/blobs/${digest}`);
      assert.equal(get.status, 200);
      assert.deepEqual(Buffer.from(await get.arrayBuffer()), layer);
    });

    it("serves byte ranges of a blob with 206 and refuses unsatisfiable ones with 416", async () => {
      const digest = sha256(layer);
      const part = await registry(`/v2/${name}/blobs/${digest}`, { headers: { range: "bytes=10-19" } });
      assert.equal(part.status, 206);
      assert.equal(part.headers.get("content-range"), `bytes 10-19/${layer.length}`);
      assert.deepEqual(Buffer.from(await part.arrayBuffer()), layer.subarray(10, 20));
      const tail = await registry(`/v2/${name}/blobs/${digest}`, { headers: { range: "bytes=-5" } });
      assert.deepEqual(Buffer.from(await tail.arrayBuffer()), layer.subarray(layer.length - 5));
      const bad = await registry(`/v2/${name}/blobs/${digest}`, {
        headers: { range: `bytes=${layer.length}-` },
      });
      assert.equal(bad.status, 416);
      assert.equal(bad.headers.get("content-range"), `bytes */${layer.length}`);
      await bad.body?.cancel();
    });

    it("answers a missing blob with 404 BLOB_UNKNOWN (GET) and 404 (HEAD)", async () => {
      const missing = sha256("nope");
      await expectOciError(await registry(`/v2/${name}/blobs/${missing}`), 404, "BLOB_UNKNOWN");
      const head = await registry(`/v2/${name}/blobs/${missing}`, { method: "HEAD" });
      assert.equal(head.status, 404);
    });

    it("does not serve a blob through a repo that does not link it", async () => {
      await pushBlob(other, Buffer.from("other"));
      await expectOciError(await registry(`/v2/${other}/blobs/${sha256(layer)}`), 404, "BLOB_UNKNOWN");
    });

    it("GETs and HEADs a manifest by tag and by digest with media type and digest", async () => {
      const body = imageManifest();
      const digest = sha256(body);
      for (const reference of ["tagged", digest]) {
        const get = await registry(`/v2/${name}/manifests/${reference}`, {
          headers: { accept: OCI_MANIFEST },
        });
        assert.equal(get.status, 200);
        assert.equal(get.headers.get("content-type"), OCI_MANIFEST);
        assert.equal(get.headers.get("docker-content-digest"), digest);
        assert.deepEqual(Buffer.from(await get.arrayBuffer()), body);
        const head = await registry(`/v2/${name}/manifests/${reference}`, { method: "HEAD" });
        assert.equal(head.status, 200);
        assert.equal(head.headers.get("content-length"), String(body.length));
      }
    });

    it("answers missing manifests with 404 MANIFEST_UNKNOWN and missing repos with NAME_UNKNOWN", async () => {
      await expectOciError(await registry(`/v2/${name}/manifests/nosuchtag`), 404, "MANIFEST_UNKNOWN");
      await expectOciError(await registry(`/v2/${name}/manifests/${sha256("x")}`), 404, "MANIFEST_UNKNOWN");
      await expectOciError(
        await registry("/v2/conformance/nosuchrepo/manifests/latest"),
        404,
        "NAME_UNKNOWN",
      );
    });
  });

  describe("push", () => {
    it("opens a session (202, Location, Range), reports it (204) and finishes it with PUT (201)", async () => {
      const bytes = Buffer.from("post then put");
      const post = await registry(`/v2/${name}/blobs/uploads/`, { method: "POST" });
      assert.equal(post.status, 202);
      const location = post.headers.get("location") ?? "";
      assert.match(location, new RegExp(`^/v2/${name}/blobs/uploads/[0-9a-f]{32}$`));
      assert.equal(post.headers.get("range"), "0-0");
      const status = await registry(location);
      assert.equal(status.status, 204);
      assert.equal(status.headers.get("location"), location);
      const put = await registry(`${location}?digest=${sha256(bytes)}`, {
        method: "PUT",
        headers: { "content-type": "application/octet-stream" },
        body: bytes,
      });
      assert.equal(put.status, 201, await put.text());
      assert.equal(put.headers.get("location"), `/v2/${name}/blobs/${sha256(bytes)}`);
      assert.equal(put.headers.get("docker-content-digest"), sha256(bytes));
      const head = await registry(`/v2/${name}/blobs/${sha256(bytes)}`, { method: "HEAD" });
      assert.equal(head.status, 200);
    });

    it("accepts a streamed PATCH without Content-Range", async () => {
      const bytes = Buffer.from("streamed chunk");
      const post = await registry(`/v2/${name}/blobs/uploads/`, { method: "POST" });
      const location = post.headers.get("location") ?? "";
      const patch = await registry(location, { method: "PATCH", body: bytes });
      assert.equal(patch.status, 202);
      assert.equal(patch.headers.get("range"), `0-${bytes.length - 1}`);
      const put = await registry(`${patch.headers.get("location")}?digest=${sha256(bytes)}`, {
        method: "PUT",
      });
      assert.equal(put.status, 201, await put.text());
    });

    it("takes ordered chunks and refuses out-of-order and repeated ones with 416", async () => {
      const bytes = Buffer.from("0123456789abcdefghij");
      const post = await registry(`/v2/${name}/blobs/uploads/`, { method: "POST" });
      const location = post.headers.get("location") ?? "";
      const chunk = (start: number, end: number) =>
        registry(location, {
          method: "PATCH",
          headers: {
            "content-type": "application/octet-stream",
            "content-range": `${start}-${end - 1}`,
            "content-length": String(end - start),
          },
          body: bytes.subarray(start, end),
        });
      const first = await chunk(0, 8);
      assert.equal(first.status, 202);
      assert.equal(first.headers.get("range"), "0-7");
      const skipped = await chunk(12, 20);
      assert.equal(skipped.status, 416);
      assert.equal(skipped.headers.get("range"), "0-7");
      await skipped.body?.cancel();
      const repeated = await chunk(0, 8);
      assert.equal(repeated.status, 416);
      await repeated.body?.cancel();
      const second = await chunk(8, 20);
      assert.equal(second.status, 202);
      assert.equal(second.headers.get("range"), "0-19");
      const status = await registry(location);
      assert.equal(status.headers.get("range"), "0-19");
      const put = await registry(`${location}?digest=${sha256(bytes)}`, { method: "PUT" });
      assert.equal(put.status, 201);
      const get = await registry(`/v2/${name}/blobs/${sha256(bytes)}`);
      assert.deepEqual(Buffer.from(await get.arrayBuffer()), bytes);
    });

    it("refuses a wrong digest with 400 DIGEST_INVALID and stores nothing", async () => {
      const bytes = Buffer.from("the real content");
      const claimed = sha256("something else");
      const res = await registry(`/v2/${name}/blobs/uploads/?digest=${claimed}`, {
        method: "POST",
        body: bytes,
      });
      await expectOciError(res, 400, "DIGEST_INVALID");
      assert.equal((await registry(`/v2/${name}/blobs/${claimed}`, { method: "HEAD" })).status, 404);
      assert.equal((await registry(`/v2/${name}/blobs/${sha256(bytes)}`, { method: "HEAD" })).status, 404);
      const post = await registry(`/v2/${name}/blobs/uploads/`, { method: "POST" });
      const location = post.headers.get("location") ?? "";
      await registry(location, { method: "PATCH", body: bytes });
      await expectOciError(
        await registry(`${location}?digest=${claimed}`, { method: "PUT" }),
        400,
        "DIGEST_INVALID",
      );
      await expectOciError(await registry(location), 404, "BLOB_UPLOAD_UNKNOWN");
      await expectOciError(
        await registry(`/v2/${name}/blobs/uploads/?digest=sha256:xyz`, { method: "POST", body: bytes }),
        400,
        "DIGEST_INVALID",
      );
    });

    it("mounts a blob from another repo (201) and falls back to an upload when it cannot (202)", async () => {
      const digest = sha256(layer);
      const mounted = await registry(`/v2/conformance/mounted/blobs/uploads/?mount=${digest}&from=${name}`, {
        method: "POST",
      });
      assert.equal(mounted.status, 201);
      assert.equal(mounted.headers.get("location"), `/v2/conformance/mounted/blobs/${digest}`);
      assert.equal(
        (await registry(`/v2/conformance/mounted/blobs/${digest}`, { method: "HEAD" })).status,
        200,
      );
      const missing = await registry(
        `/v2/conformance/mounted/blobs/uploads/?mount=${sha256("absent")}&from=${name}`,
        {
          method: "POST",
        },
      );
      assert.equal(missing.status, 202);
      assert.match(missing.headers.get("location") ?? "", /\/blobs\/uploads\//);
      const noFrom = await registry(`/v2/conformance/mounted/blobs/uploads/?mount=${digest}`, {
        method: "POST",
      });
      assert.equal(noFrom.status, 202);
    });

    it("stores a manifest by tag and by digest (201, Location, Docker-Content-Digest)", async () => {
      const body = imageManifest({ annotations: { "org.example.v": "2" } });
      const digest = sha256(body);
      const byDigest = await putManifest(name, digest, body);
      assert.equal(byDigest.status, 201);
      assert.equal(byDigest.headers.get("location"), `/v2/${name}/manifests/${digest}`);
      assert.equal(byDigest.headers.get("docker-content-digest"), digest);
      const byTag = await putManifest(name, "v2", body);
      assert.equal(byTag.status, 201);
      const get = await registry(`/v2/${name}/manifests/v2`);
      assert.equal(get.headers.get("docker-content-digest"), digest);
      await get.body?.cancel();
    });

    it("accepts an artifact manifest with the empty config and no layers", async () => {
      const body = Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: OCI_MANIFEST,
          artifactType: "application/vnd.example.thing",
          config: { mediaType: EMPTY_CONFIG, digest: EMPTY_DIGEST, size: 2 },
          layers: [],
        }),
      );
      assert.equal((await putManifest(name, "artifact", body)).status, 201);
      const blob = await registry(`/v2/${name}/blobs/${EMPTY_DIGEST}`);
      assert.equal(await blob.text(), "{}");
    });

    it("refuses manifests naming missing blobs, bad digests, bad JSON, unknown media types and oversize bodies", async () => {
      const missingLayer = imageManifest({
        layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar", digest: sha256("missing"), size: 7 }],
      });
      await expectOciError(await putManifest(name, "broken", missingLayer), 400, "MANIFEST_BLOB_UNKNOWN");
      await expectOciError(
        await putManifest(name, sha256("not this"), imageManifest()),
        400,
        "DIGEST_INVALID",
      );
      await expectOciError(
        await putManifest(name, "broken", Buffer.from("{not json")),
        400,
        "MANIFEST_INVALID",
      );
      await expectOciError(
        await putManifest(name, "broken", imageManifest(), "application/vnd.example.unknown+json"),
        400,
        "MANIFEST_INVALID",
      );
      await expectOciError(
        await putManifest(name, "broken", imageManifest({ mediaType: OCI_INDEX })),
        400,
        "MANIFEST_INVALID",
      );
      const big = imageManifest({ annotations: { pad: "x".repeat(4 * 1024 * 1024) } });
      const res = await putManifest(name, "broken", big);
      assert.equal(res.status, 413);
      await expectOciError(await registry(`/v2/${name}/manifests/broken`), 404, "MANIFEST_UNKNOWN");
    });

    it("refuses an index whose child manifests are not in the repo", async () => {
      const index = Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: OCI_INDEX,
          manifests: [{ mediaType: OCI_MANIFEST, digest: sha256("absent child"), size: 10 }],
        }),
      );
      assert.equal((await putManifest(name, "index", index, OCI_INDEX)).status, 400);
    });

    it("refuses invalid names and tags", async () => {
      await expectOciError(await registry("/v2/Conformance/App/manifests/latest"), 400, "NAME_INVALID");
      await expectOciError(await putManifest(name, "-bad-tag", imageManifest()), 400, "MANIFEST_INVALID");
    });

    it("survives a client that drops mid-upload and shows no partial blob", async () => {
      const bytes = Buffer.alloc(256 * 1024, 7);
      const digest = sha256(bytes);
      const url = new URL(server.registryUrl);
      await new Promise<void>((resolve) => {
        const socket = connect(Number(url.port), url.hostname, () => {
          socket.write(
            `POST /v2/${name}/blobs/uploads/?digest=${digest} HTTP/1.1\r\nHost: x\r\n` +
              `Authorization: Bearer ${token}\r\nContent-Length: ${bytes.length}\r\n\r\n`,
          );
          socket.write(bytes.subarray(0, 1000), () => setTimeout(() => socket.destroy(), 100));
        });
        socket.on("close", () => resolve());
        socket.on("error", () => undefined);
      });
      assert.equal((await registry(`/v2/${name}/blobs/${digest}`, { method: "HEAD" })).status, 404);
      assert.equal((await registry("/v2/")).status, 200);
    });
  });

  describe("content discovery", () => {
    const repo = "conformance/tags";
    before(async () => {
      await pushBlob(repo, config);
      await pushBlob(repo, layer);
      for (const tag of ["d", "a", "c", "b", "e"]) {
        assert.equal((await putManifest(repo, tag, imageManifest())).status, 201);
      }
    });

    it("lists every tag in order", async () => {
      const res = await registry(`/v2/${repo}/tags/list`);
      assert.deepEqual(await res.json(), { name: repo, tags: ["a", "b", "c", "d", "e"] });
      assert.equal(res.headers.get("link"), null);
    });

    it("pages with n and last, linking to the next page", async () => {
      const first = await registry(`/v2/${repo}/tags/list?n=2`);
      assert.deepEqual(await first.json(), { name: repo, tags: ["a", "b"] });
      assert.equal(first.headers.get("link"), `</v2/${repo}/tags/list?n=2&last=b>; rel="next"`);
      const next = await registry(`/v2/${repo}/tags/list?n=2&last=b`);
      assert.deepEqual(await next.json(), { name: repo, tags: ["c", "d"] });
      const last = await registry(`/v2/${repo}/tags/list?n=2&last=d`);
      assert.deepEqual(await last.json(), { name: repo, tags: ["e"] });
      assert.equal(last.headers.get("link"), null);
      const none = await registry(`/v2/${repo}/tags/list?n=0`);
      assert.deepEqual(await none.json(), { name: repo, tags: [] });
      await expectOciError(await registry(`/v2/${repo}/tags/list?n=-1`), 400, "PAGINATION_NUMBER_INVALID");
    });

    it("lists referrers with artifact types, filters them, and answers an empty index for unknown subjects", async () => {
      const subject = imageManifest();
      const subjectDigest = sha256(subject);
      const referrer = (artifactType: string, n: number) =>
        Buffer.from(
          JSON.stringify({
            schemaVersion: 2,
            mediaType: OCI_MANIFEST,
            artifactType,
            config: { mediaType: EMPTY_CONFIG, digest: EMPTY_DIGEST, size: 2 },
            layers: [],
            subject: { mediaType: OCI_MANIFEST, digest: subjectDigest, size: subject.length },
            annotations: { n: String(n) },
          }),
        );
      const sig = referrer("application/vnd.example.sig", 1);
      const sbom = referrer("application/vnd.example.sbom", 2);
      for (const body of [sig, sbom]) {
        const res = await putManifest(repo, sha256(body), body);
        assert.equal(res.status, 201);
        assert.equal(res.headers.get("oci-subject"), subjectDigest);
      }
      const all = await registry(`/v2/${repo}/referrers/${subjectDigest}`);
      assert.equal(all.status, 200);
      assert.equal(all.headers.get("content-type"), OCI_INDEX);
      const index = (await all.json()) as {
        manifests: { digest: string; artifactType: string; size: number }[];
      };
      assert.deepEqual(
        index.manifests.map((m) => [m.digest, m.artifactType, m.size]).sort(),
        [
          [sha256(sbom), "application/vnd.example.sbom", sbom.length],
          [sha256(sig), "application/vnd.example.sig", sig.length],
        ].sort(),
      );
      const filtered = await registry(
        `/v2/${repo}/referrers/${subjectDigest}?artifactType=application/vnd.example.sig`,
      );
      assert.equal(filtered.headers.get("oci-filters-applied"), "artifactType");
      const only = (await filtered.json()) as {
        manifests: { digest: string; annotations: Record<string, string> }[];
      };
      assert.deepEqual(
        only.manifests.map((m) => [m.digest, m.annotations]),
        [[sha256(sig), { n: "1" }]],
      );
      const empty = await registry(`/v2/${repo}/referrers/${sha256("nothing refers to me")}`);
      assert.equal(empty.status, 200);
      assert.deepEqual(await empty.json(), { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [] });
      await expectOciError(await registry(`/v2/${repo}/referrers/sha256:short`), 400, "DIGEST_INVALID");
    });
  });

  describe("content management", () => {
    const repo = "conformance/manage";
    let digest: string;
    before(async () => {
      await pushBlob(repo, config);
      await pushBlob(repo, layer);
      const body = imageManifest();
      digest = sha256(body);
      for (const tag of ["keep", "drop", "also"])
        assert.equal((await putManifest(repo, tag, body)).status, 201);
    });

    it("deletes a tag (202), leaving the manifest and other tags", async () => {
      const res = await registry(`/v2/${repo}/manifests/drop`, { method: "DELETE" });
      assert.equal(res.status, 202);
      await expectOciError(await registry(`/v2/${repo}/manifests/drop`), 404, "MANIFEST_UNKNOWN");
      assert.equal((await registry(`/v2/${repo}/manifests/keep`, { method: "HEAD" })).status, 200);
      await expectOciError(
        await registry(`/v2/${repo}/manifests/drop`, { method: "DELETE" }),
        404,
        "MANIFEST_UNKNOWN",
      );
    });

    it("deletes a manifest by digest (202) together with the tags pointing at it", async () => {
      const res = await registry(`/v2/${repo}/manifests/${digest}`, { method: "DELETE" });
      assert.equal(res.status, 202);
      await expectOciError(await registry(`/v2/${repo}/manifests/${digest}`), 404, "MANIFEST_UNKNOWN");
      await expectOciError(await registry(`/v2/${repo}/manifests/keep`), 404, "MANIFEST_UNKNOWN");
      const tags = await registry(`/v2/${repo}/tags/list`);
      assert.deepEqual(await tags.json(), { name: repo, tags: [] });
    });

    it("deletes a blob (202); it is gone from that repo only", async () => {
      const res = await registry(`/v2/${repo}/blobs/${sha256(layer)}`, { method: "DELETE" });
      assert.equal(res.status, 202);
      await expectOciError(await registry(`/v2/${repo}/blobs/${sha256(layer)}`), 404, "BLOB_UNKNOWN");
      assert.equal((await registry(`/v2/${name}/blobs/${sha256(layer)}`, { method: "HEAD" })).status, 200);
    });

    it("cancels an upload (204); the session is then unknown", async () => {
      const post = await registry(`/v2/${repo}/blobs/uploads/`, { method: "POST" });
      const location = post.headers.get("location") ?? "";
      await registry(location, { method: "PATCH", body: Buffer.from("abc") });
      assert.equal((await registry(location, { method: "DELETE" })).status, 204);
      await expectOciError(await registry(location), 404, "BLOB_UPLOAD_UNKNOWN");
    });

    it("answers unsupported methods with 405", async () => {
      const res = await registry(`/v2/${repo}/tags/list`, { method: "DELETE" });
      assert.equal(res.status, 405);
      await res.body?.cancel();
    });
  });
});
