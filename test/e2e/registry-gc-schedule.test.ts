import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

// `--gc-interval`: the server runs garbage collection by itself and logs each report.

describe("scheduled garbage collection", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ config: { gcInterval: "1s" } });
  });
  after(() => server?.close());

  it("runs on its interval, logging what it removed, while the registry keeps serving", async () => {
    const token = await server.registryToken();
    await server.create("/iam/v2/groups", { name: "gcsched" });
    const bytes = Buffer.from("kept: pushed within the grace period");
    const digest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
    const push = await server.registry(`/v2/gcsched/app/blobs/uploads/?digest=${digest}`, {
      method: "POST",
      token,
      body: bytes,
    });
    assert.equal(push.status, 201);
    const deadline = Date.now() + 10_000;
    const gcLines = () => server.logLines.filter((line) => line.event === "gc");
    while (gcLines().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.ok(gcLines().length >= 2, `expected two gc runs, saw ${gcLines().length}`);
    assert.deepEqual(Object.keys(gcLines()[0] ?? {}).sort(), [
      "blobs",
      "bytes",
      "event",
      "links",
      "manifests",
      "msg",
      "strayObjects",
      "uploads",
    ]);
    assert.equal(gcLines()[0]?.msg, "garbage collected", "a msg, as every log line has (ADR 0041)");
    const head = await server.registry(`/v2/gcsched/app/blobs/${digest}`, { method: "HEAD", token });
    assert.equal(head.status, 200, "a blob inside the grace period survives the runs");
  });
});
