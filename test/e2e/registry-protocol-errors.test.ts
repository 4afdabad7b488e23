import assert from "node:assert/strict";
import { readdir, rm, symlink } from "node:fs/promises";
import { request } from "node:http";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { onOneEngine } from "../support/databases.js";
import { type BuiltImage, ociErrorOf, pushImage, sha256 } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

// How the registry answers what it cannot serve: content its metadata names but storage lost (404
// or 500, never a 200 cut short), references that name nothing, undecodable path segments, a
// bare Bearer, and a client that goes away mid-upload (logged as cancelled, not as a failure).

/** The file of `digest` under the server's data folder (the filesystem blob driver's layout). */
async function blobFile(dataDir: string, digest: string): Promise<string> {
  const hex = digest.slice("sha256:".length);
  const found = (await readdir(dataDir, { recursive: true })).filter((p) => p.endsWith(`/${hex}`));
  assert.equal(found.length, 1, `one file for ${digest}: ${found.join(", ")}`);
  return join(dataDir, found[0] as string);
}

const errorLines = (server: TestServer, from: number) =>
  server.logLines.slice(from).filter((l) => l.level === "error");

onOneEngine("registry protocol errors", (db) => {
  let server: TestServer;
  let token: string;
  let image: BuiltImage;
  const name = "acme/app";
  const registry = (path: string, init: Parameters<TestServer["registry"]>[1] = {}) =>
    server.registry(path, { token, ...init });

  before(async () => {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    server = await startTestServer(databaseUrl ? { databaseUrl } : {});
    token = await server.registryToken();
    await server.create("/iam/v2/groups", { name: "acme" });
    image = await pushImage(server, name, "v1", token, "lost and found");
  });
  after(() => server?.close());

  describe("content the metadata names but storage lost", () => {
    it("answers GET and HEAD of a blob whose file is gone with 404 BLOB_UNKNOWN and logs it once as an error", async () => {
      const digest = image.layerDigests[0] as string;
      assert.equal((await registry(`/v2/${name}/blobs/${digest}`, { method: "HEAD" })).status, 200);
      await rm(await blobFile(server.dataDir, digest));
      for (const method of ["GET", "HEAD"]) {
        const from = server.logLines.length;
        const res = await registry(`/v2/${name}/blobs/${digest}`, { method });
        assert.equal(res.status, 404, method);
        assert.equal(res.headers.get("docker-content-digest"), null, `${method}: no success headers`);
        assert.equal(res.headers.get("content-type"), "application/json");
        if (method === "GET") assert.equal((await ociErrorOf(res)).code, "BLOB_UNKNOWN");
        const errors = errorLines(server, from);
        assert.equal(errors.length, 1, `${method}: ${JSON.stringify(errors)}`);
        assert.match(String(errors[0]?.error), new RegExp(digest.slice(7)));
      }
      const ranged = await registry(`/v2/${name}/blobs/${digest}`, { headers: { range: "bytes=0-3" } });
      assert.equal(ranged.status, 404, "a range of it too");
      assert.equal((await ociErrorOf(ranged)).code, "BLOB_UNKNOWN");
      // The manifest is kept in the metadata database, not in blob storage: still served whole.
      const manifest = await registry(`/v2/${name}/manifests/v1`);
      assert.equal(manifest.status, 200);
      assert.deepEqual(Buffer.from(await manifest.arrayBuffer()), image.manifest);
      assert.equal((await registry("/v2/")).status, 200, "the connection pool still works");
    });

    it("answers a blob that storage cannot read with 500 and an OCI body, on GET and HEAD, with exactly one error line", async () => {
      const digest = image.configDigest;
      const file = await blobFile(server.dataDir, digest);
      await rm(file);
      await symlink(file, file); // a symlink loop: ELOOP, an I/O error that is not "missing"
      for (const method of ["GET", "HEAD"]) {
        const from = server.logLines.length;
        const res = await registry(`/v2/${name}/blobs/${digest}`, { method });
        assert.equal(res.status, 500, method);
        assert.equal(res.headers.get("content-type"), "application/json");
        assert.equal(res.headers.get("docker-content-digest"), null);
        if (method === "GET") {
          const error = await ociErrorOf(res);
          assert.equal(error.code, "INTERNAL");
          assert.doesNotMatch(error.message, /ELOOP|wharf-test/, "no internals in the answer");
        }
        const errors = errorLines(server, from);
        assert.equal(errors.length, 1, `${method}: ${JSON.stringify(errors)}`);
        assert.match(String(errors[0]?.error), /ELOOP/);
      }
    });
  });

  describe("references that name nothing", () => {
    it("answers GET, HEAD and DELETE of an invalid manifest reference with 404 MANIFEST_UNKNOWN; PUT keeps 400", async () => {
      for (const reference of [".INVALID_MANIFEST_NAME", "sha256:short", "sha384:abc", "t%ff"]) {
        for (const method of ["GET", "HEAD", "DELETE"]) {
          const res = await registry(`/v2/${name}/manifests/${reference}`, { method });
          assert.equal(res.status, 404, `${method} ${reference}`);
          if (method !== "HEAD") assert.equal((await ociErrorOf(res)).code, "MANIFEST_UNKNOWN");
        }
      }
      const put = await registry(`/v2/${name}/manifests/.INVALID_MANIFEST_NAME`, {
        method: "PUT",
        headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" },
        body: image.manifest,
      });
      assert.equal(put.status, 400);
      assert.equal((await ociErrorOf(put)).code, "MANIFEST_INVALID");
      const undecodable = await registry(`/v2/${name}/manifests/t%ff`, {
        method: "PUT",
        headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" },
        body: image.manifest,
      });
      assert.equal(undecodable.status, 400);
      assert.equal((await ociErrorOf(undecodable)).code, "MANIFEST_INVALID");
      assert.equal((await registry(`/v2/${name}/manifests/v1`)).status, 200, "nothing was deleted");
    });

    it("still asks for credentials before saying an invalid reference is unknown", async () => {
      const res = await server.registry(`/v2/${name}/manifests/.INVALID_MANIFEST_NAME`, { method: "DELETE" });
      assert.equal(res.status, 401);
    });

    it("answers malformed percent-escapes in the last segment with the 4xx of that position, never 500", async () => {
      const cases: [string, string, number, string][] = [
        ["GET", `/v2/${name}/manifests/t%ff`, 404, "MANIFEST_UNKNOWN"],
        ["GET", `/v2/${name}/blobs/%E0%A4%A`, 404, "BLOB_UNKNOWN"],
        ["DELETE", `/v2/${name}/blobs/%ff`, 404, "BLOB_UNKNOWN"],
        ["GET", `/v2/${name}/blobs/sha256:short`, 404, "BLOB_UNKNOWN"],
        ["PATCH", `/v2/${name}/blobs/uploads/%ff`, 404, "BLOB_UPLOAD_UNKNOWN"],
        ["PUT", `/v2/${name}/blobs/uploads/%ff?digest=${sha256("x")}`, 404, "BLOB_UPLOAD_UNKNOWN"],
        ["GET", `/v2/${name}/_service/history/%ff`, 404, "MANIFEST_UNKNOWN"],
        ["GET", `/v2/${name}/referrers/%ff`, 400, "DIGEST_INVALID"],
        ["GET", "/v2/acme/a%ffpp/manifests/v1", 400, "NAME_INVALID"],
      ];
      const from = server.logLines.length;
      for (const [method, path, status, code] of cases) {
        const res = await registry(path, { method, ...(method === "PATCH" ? { body: "x" } : {}) });
        assert.equal(res.status, status, `${method} ${path}`);
        assert.equal((await ociErrorOf(res)).code, code, `${method} ${path}`);
      }
      assert.deepEqual(errorLines(server, from), [], "none is logged as an error");
    });
  });

  describe("credentials", () => {
    it("says a bare Bearer is missing its token, on the registry and on the API (401 both)", async () => {
      const reg = await server.registry(`/v2/${name}/manifests/v1`, { headers: { authorization: "Bearer" } });
      assert.equal(reg.status, 401);
      assert.match(reg.headers.get("www-authenticate") ?? "", /^Bearer realm=/);
      const regError = await ociErrorOf(reg);
      assert.equal(regError.code, "UNAUTHORIZED");
      assert.match(regError.message, /missing bearer token/);
      assert.doesNotMatch(regError.message, /scheme/);

      const api = await fetch(`${server.apiUrl}/iam/v2/groups`, { headers: { authorization: "Bearer" } });
      assert.equal(api.status, 401);
      const status = (await api.json()) as { code: number; message: string };
      assert.equal(status.code, 16);
      assert.match(status.message, /missing bearer token/);
    });
  });

  describe("a client that goes away", () => {
    /** Starts a request declaring `declared` bytes, sends `sent` of them, then drops the connection. */
    async function abandon(method: string, path: string, declared: number, sent: number): Promise<void> {
      const url = new URL(server.registryUrl);
      await new Promise<void>((resolve) => {
        const req = request({
          host: url.hostname,
          port: url.port,
          method,
          path,
          headers: { authorization: `Bearer ${token}`, "content-length": String(declared) },
        });
        req.on("error", () => resolve());
        req.on("close", () => resolve());
        req.write(Buffer.alloc(sent, 1), () => setTimeout(() => req.destroy(), 100));
      });
    }

    async function lineOf(path: string, from: number): Promise<Record<string, unknown>> {
      for (let i = 0; i < 100; i++) {
        const line = server.logLines.slice(from).find((l) => l.path === path && "status" in l);
        if (line) return line;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`no log line for ${path}`);
    }

    it("logs a PATCH or PUT upload dropped mid-body as a cancelled request: 499, no stack, no error line", async () => {
      for (const method of ["PATCH", "PUT"]) {
        const post = await registry(`/v2/${name}/blobs/uploads/`, { method: "POST" });
        assert.equal(post.status, 202);
        const location = new URL(post.headers.get("location") ?? "", server.registryUrl).pathname;
        const from = server.logLines.length;
        await abandon(
          method,
          method === "PUT" ? `${location}?digest=${sha256("x")}` : location,
          1 << 20,
          4096,
        );
        const line = await lineOf(location, from);
        assert.equal(line.status, 499, `${method}: ${JSON.stringify(line)}`);
        assert.equal(line.error, "CANCELLED");
        assert.deepEqual(errorLines(server, from), [], `${method}: no error-level line`);
        assert.doesNotMatch(JSON.stringify(server.logLines.slice(from)), /stack| {4}at /);
      }
      assert.equal((await registry("/v2/")).status, 200, "the registry still serves");
    });
  });
});
