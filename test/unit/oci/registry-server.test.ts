import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { RegistryDeps } from "../../../src/oci/registry-request.js";
import { bindRegistryServer } from "../../../src/oci/registry-server.js";
import { plainRequest } from "../../support/plain-http.js";

/** Just enough of the registry's dependencies for `/healthz`, byte counting and close. */
function fakeDeps() {
  const seen = { transferred: 0, uploadsClosed: 0 };
  const deps = {
    uploads: {
      close: async () => {
        seen.uploadsClosed++;
      },
    },
    metrics: {
      transferred: (read: number, written: number) => {
        seen.transferred += read + written;
      },
      observe: () => {},
    },
  } as unknown as RegistryDeps;
  return { deps, seen };
}

describe("bindRegistryServer", () => {
  it("knows its address before serving and answers 503 UNAVAILABLE until serve, then the registry", async () => {
    const server = await bindRegistryServer({ host: "127.0.0.1", port: 0 }, () => {});
    const { deps, seen } = fakeDeps();
    try {
      assert.equal(server.address.host, "127.0.0.1");
      assert.ok(server.address.port > 0, "the real port of port 0");
      const base = `http://127.0.0.1:${server.address.port}`;
      for (const path of ["/v2/", "/healthz", "/v2/some/repo/blobs/uploads/"]) {
        const early = await plainRequest(
          `${base}${path}`,
          path.endsWith("uploads/") ? { method: "POST" } : {},
        );
        assert.equal(early.status, 503, path);
        assert.equal(early.headers["retry-after"], "1");
        assert.equal(early.headers["content-type"], "application/json");
        assert.deepEqual(JSON.parse(early.body.toString()), {
          errors: [{ code: "UNAVAILABLE", message: "the server is starting; retry shortly" }],
        });
      }
      const head = await plainRequest(`${base}/v2/`, { method: "HEAD" });
      assert.equal(head.status, 503);
      assert.equal(head.body.length, 0, "no body for HEAD");
      assert.equal(seen.transferred, 0, "nothing counted before serve");

      server.serve(deps);
      const healthz = await plainRequest(`${base}/healthz`);
      assert.equal(healthz.status, 200);
      assert.equal(healthz.body.toString(), "ok\n");
      assert.ok(seen.transferred > 0, "bytes counted once serving");
      assert.throws(() => server.serve(deps), /already serves/);
    } finally {
      await server.close({ graceMs: 0 });
    }
    assert.equal(seen.uploadsClosed, 1, "close closes the served uploads");
  });

  it("closes without ever serving and frees the port", async () => {
    const server = await bindRegistryServer({ host: "127.0.0.1", port: 0 }, () => {});
    const { port } = server.address;
    await server.close({ graceMs: 0 });
    const again = await bindRegistryServer({ host: "127.0.0.1", port }, () => {});
    await again.close({ graceMs: 0 });
  });
});
