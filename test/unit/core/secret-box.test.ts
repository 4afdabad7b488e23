import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SECRET_BOX_KEY_SETTING, type SecretKeySettings, secretBoxOf } from "../../../src/core/secret-box.js";

/** Settings in a map, counting writes, as SettingsStore.putIfAbsent behaves. */
function memorySettings(): SecretKeySettings & { values: Map<string, string>; calls: number } {
  const values = new Map<string, string>();
  return {
    values,
    calls: 0,
    async putIfAbsent(key, value) {
      this.calls++;
      if (!values.has(key)) values.set(key, value);
      return values.get(key) as string;
    },
  };
}

describe("secretBoxOf", () => {
  it("seals to v1:<iv>:<body>, opens it again, and never shows the plain text", async () => {
    const box = secretBoxOf(memorySettings());
    const sealed = await box.seal("hunter2 ünïcode");
    assert.match(sealed, /^v1:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$/);
    assert.ok(!sealed.includes("hunter2"));
    assert.equal(await box.open(sealed), "hunter2 ünïcode");
  });

  it('keeps "" as "" both ways (no secret)', async () => {
    const settings = memorySettings();
    const box = secretBoxOf(settings);
    assert.equal(await box.seal(""), "");
    assert.equal(await box.open(""), "");
    assert.equal(settings.calls, 0, "no key is created for no secret");
  });

  it("seals the same text differently each time (a fresh IV)", async () => {
    const box = secretBoxOf(memorySettings());
    const a = await box.seal("same");
    const b = await box.seal("same");
    assert.notEqual(a, b);
    assert.equal(await box.open(a), "same");
    assert.equal(await box.open(b), "same");
  });

  it("creates the key once, in the settings, and another box on the same settings (a replica) opens the values", async () => {
    const settings = memorySettings();
    const one = secretBoxOf(settings);
    const sealed = await one.seal("shared");
    await one.seal("again");
    assert.equal(settings.calls, 1, "the key is read once and kept");
    assert.equal(Buffer.from(settings.values.get(SECRET_BOX_KEY_SETTING) ?? "", "base64url").length, 32);
    const replica = secretBoxOf(settings);
    assert.equal(await replica.open(sealed), "shared");
  });

  it("refuses a value sealed under another key, tampered with, or not sealed at all", async () => {
    const box = secretBoxOf(memorySettings());
    const elsewhere = await secretBoxOf(memorySettings()).seal("secret");
    await assert.rejects(box.open(elsewhere), /does not open under this deployment's key/);
    const sealed = await box.seal("secret");
    const [v, iv, body] = sealed.split(":") as [string, string, string];
    const bytes = Buffer.from(body, "base64url");
    bytes[0] = (bytes[0] ?? 0) ^ 1;
    await assert.rejects(box.open(`${v}:${iv}:${bytes.toString("base64url")}`), /does not open/);
    await assert.rejects(box.open("secret"), /not a v1 sealed value/);
    await assert.rejects(box.open("v2:a:b"), /not a v1 sealed value/);
    await assert.rejects(box.open("v1:AAAA:AAAA"), /malformed/);
  });

  it("tries again after a failed key read instead of keeping the failure", async () => {
    let fail = true;
    const inner = memorySettings();
    const box = secretBoxOf({
      putIfAbsent: (key, value) =>
        fail ? Promise.reject(new Error("database down")) : inner.putIfAbsent(key, value),
    });
    await assert.rejects(box.seal("x"), /database down/);
    fail = false;
    assert.equal(await box.open(await box.seal("x")), "x");
  });

  it("refuses a stored key of the wrong size", async () => {
    const settings = memorySettings();
    settings.values.set(SECRET_BOX_KEY_SETTING, Buffer.alloc(16).toString("base64url"));
    await assert.rejects(secretBoxOf(settings).seal("x"), /not a 32-byte key/);
  });
});
