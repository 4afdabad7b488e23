import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createLogSink, REDACTED, redactText } from "../../../src/observability/log.js";

/** A sink writing into an array of raw lines. */
async function sinkInto(options: Parameters<typeof createLogSink>[0] = {}) {
  const written: string[] = [];
  const log = await createLogSink({
    ...options,
    destination: { write: (line: string) => written.push(line) },
  });
  const parsed = () =>
    written.flatMap((chunk) => chunk.split("\n").filter((l) => l !== "")).map((l) => JSON.parse(l));
  return { log, written, parsed };
}

const JWT = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg";

describe("log sink", () => {
  it("writes one JSON line per call: level name, ISO time, the fields, msg", async () => {
    const { log, written, parsed } = await sinkInto();
    log({ level: "warn", msg: "readiness failing", part: "blobs", time: "not this" });
    assert.equal(written.length, 1);
    assert.ok(written[0]?.endsWith("\n"));
    const [line] = parsed();
    assert.equal(line.level, "warn");
    assert.match(line.time, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.notEqual(line.time, "not this", "the time of writing wins");
    assert.equal(line.msg, "readiness failing");
    assert.equal(line.part, "blobs");
    assert.equal("pid" in line || "hostname" in line, false, "no pino base fields");
  });

  it("defaults: level info, msg from `event`, else log; unknown levels are info", async () => {
    const { log, parsed } = await sinkInto();
    log({ event: "gc", blobs: 2 });
    log({ detail: 1 });
    log({ level: "loud", msg: "m" });
    assert.deepEqual(
      parsed().map((l) => [l.level, l.msg]),
      [
        ["info", "gc"],
        ["info", "log"],
        ["info", "m"],
      ],
    );
  });

  it("drops lines below the level; carries the fixed fields (a worker's slot)", async () => {
    const { log, parsed } = await sinkInto({ level: "warn", fields: { worker: 3 } });
    log({ level: "info", msg: "dropped" });
    log({ level: "debug", msg: "dropped too" });
    log({ level: "error", msg: "kept" });
    assert.deepEqual(
      parsed().map((l) => [l.msg, l.worker]),
      [["kept", 3]],
    );
    const silent = await sinkInto({ level: "silent" });
    silent.log({ level: "error", msg: "nothing" });
    assert.deepEqual(silent.written, []);
  });

  it("redacts secret fields, one level down too, and credentials inside text", async () => {
    const { log, written, parsed } = await sinkInto();
    log({
      msg: `login failed for Bearer ${JWT}`,
      authorization: `Bearer ${JWT}`,
      password: "hunter2-password",
      headers: { authorization: "Basic X3Rva2VuOnNlY3JldA==", cookie: "session=abc" },
      oidc: { clientSecret: "client-secret-value", clientId: "wharf" },
      error: `upstream said: token ${JWT} expired`,
      cause: { message: "connect postgres://wharf:db-password@db:5432/wharf failed" },
      url: "https://user:url-password@example.com/x",
    });
    const text = written.join("");
    for (const secret of [
      JWT,
      "hunter2-password",
      "X3Rva2VuOnNlY3JldA==",
      "session=abc",
      "client-secret-value",
      "db-password",
      "url-password",
    ])
      assert.equal(text.includes(secret), false, `${secret} is redacted: ${text}`);
    const [line] = parsed();
    assert.equal(line.authorization, REDACTED);
    assert.equal(line.password, REDACTED);
    assert.equal(line.oidc.clientSecret, REDACTED);
    assert.equal(line.oidc.clientId, "wharf", "the rest stays");
    assert.equal(line.msg, `login failed for Bearer ${REDACTED}`);
    assert.equal(line.cause.message, `connect postgres://wharf:${REDACTED}@db:5432/wharf failed`);
  });

  it("redactText leaves text without credentials as it is", () => {
    for (const text of ["GET /v2/acme/app/manifests/v1", "http://127.0.0.1:5000/v2/", "sha256:abc", "a: b"])
      assert.equal(redactText(text), text);
    assert.equal(
      redactText(`Basic dXNlcjpwYXNz and Bearer abc.def`),
      `Basic ${REDACTED} and Bearer ${REDACTED}`,
    );
  });

  it("a line that cannot be serialised is dropped, not thrown", async () => {
    const { log } = await sinkInto();
    const cyclic: Record<string, unknown> = { msg: "cyclic" };
    cyclic.self = cyclic;
    assert.doesNotThrow(() => log(cyclic));
    assert.doesNotThrow(() => log(null as unknown as object));
  });

  it("pretty: text for people, written at once, redacted too", async () => {
    const { log, written } = await sinkInto({ format: "pretty" });
    log({ level: "warn", msg: "readiness failing", password: "pretty-secret" });
    const text = written.join("");
    assert.match(text, /WARN/);
    assert.match(text, /readiness failing/);
    assert.equal(text.includes("pretty-secret"), false);
  });
});
