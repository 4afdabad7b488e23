import assert from "node:assert/strict";
import { createServer, type Server } from "node:net";
import { describe, it } from "node:test";
import { bindPorts } from "../../../src/composition/ports.js";

const listen = (server: Server, port: number) =>
  new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });

describe("bindPorts", () => {
  it("binds both ports and derives the public URLs from the bound ports unless configured", async () => {
    const addr = { host: "127.0.0.1", port: 0 };
    const ports = await bindPorts(
      { apiAddr: addr, registryAddr: addr, publicUrl: "", registryUrl: "https://registry.example" },
      () => {},
    );
    try {
      assert.ok(ports.api.address.port > 0);
      assert.notEqual(ports.registry.address.port, ports.api.address.port);
      assert.deepEqual(ports.urls, {
        apiUrl: `http://127.0.0.1:${ports.api.address.port}`,
        registryUrl: "https://registry.example",
      });
      const early = await fetch(`${ports.urls.apiUrl}/healthz`);
      assert.equal(early.status, 503, "not serving yet");
    } finally {
      await Promise.all([ports.api.close({ graceMs: 0 }), ports.registry.close({ graceMs: 0 })]);
    }
  });

  it("closes the API port when the registry port cannot be bound", async () => {
    const busy = createServer();
    await listen(busy, 0);
    const { port: busyPort } = busy.address() as { port: number };
    const free = createServer();
    await listen(free, 0);
    const { port: apiPort } = free.address() as { port: number };
    await new Promise((resolve) => free.close(resolve));
    try {
      await assert.rejects(
        bindPorts(
          {
            apiAddr: { host: "127.0.0.1", port: apiPort },
            registryAddr: { host: "127.0.0.1", port: busyPort },
            publicUrl: "",
            registryUrl: "",
          },
          () => {},
        ),
        /EADDRINUSE/,
      );
      // The API port is free again: binding it succeeds.
      const again = createServer();
      await listen(again, apiPort);
      await new Promise((resolve) => again.close(resolve));
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });
});
