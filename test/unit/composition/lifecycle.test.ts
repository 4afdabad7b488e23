import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type Closable, createLifecycle } from "../../../src/composition/lifecycle.js";

/** A closable that records its name (and grace period) in `log` when closed. */
function recorded(log: string[], name: string, fail = false): Closable {
  return {
    async close(options) {
      log.push(options?.graceMs === undefined ? name : `${name}(grace ${options.graceMs})`);
      if (fail) throw new Error(`${name} failed`);
    },
  };
}

describe("createLifecycle", () => {
  it("close: the listeners (with what settles alongside), then what was started, last first, then the resources", async () => {
    const log: string[] = [];
    const lifecycle = createLifecycle([recorded(log, "store"), recorded(log, "blobs")]);
    lifecycle.onClose(async () => void log.push("revocations"));
    lifecycle.listening(recorded(log, "api"), recorded(log, "registry", true));
    lifecycle.onClose(async () => void log.push("dispatcher"));
    lifecycle.onClose(async () => {
      log.push("pull events");
      throw new Error("failing closer");
    });
    let gcSettled = false;
    const gc = new Promise<void>((resolve) => setTimeout(resolve, 20)).then(() => {
      gcSettled = true;
      log.push("gc idle");
    });
    await lifecycle.close([gc]);
    assert.ok(gcSettled);
    assert.deepEqual(log, [
      "api",
      "registry",
      "gc idle",
      "pull events",
      "dispatcher",
      "revocations",
      "store",
      "blobs",
    ]);
  });

  it("abort: the listeners bound so far at once (graceMs 0), then what was started, then the resources", async () => {
    const log: string[] = [];
    const lifecycle = createLifecycle([recorded(log, "store"), recorded(log, "blobs")]);
    lifecycle.listening(recorded(log, "api"));
    lifecycle.onClose(async () => void log.push("revocations"));
    await lifecycle.abort();
    assert.deepEqual(log, ["api(grace 0)", "revocations", "store", "blobs"]);
  });
});
