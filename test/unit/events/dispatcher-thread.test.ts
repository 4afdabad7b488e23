import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { startDispatcherThread } from "../../../src/events/dispatcher-thread.js";
import { NO_SINK_EXCEPTIONS } from "../../../src/events/sink-address-policy.js";
import { createSqliteWriteLockMemory, SqliteWriteLock } from "../../../src/storage/sql/sqlite-write-lock.js";
import { startWebhookReceiver } from "../../support/webhook-receiver.js";
import { startTestServer } from "../../support/wharf-server.js";

const LOCK_HOLDER = new URL("../../support/lock-holding-dispatcher.ts", import.meta.url);

const waitUntil = async (what: string, holds: () => boolean, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!holds()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe("event dispatcher thread", () => {
  it("a server's delivery thread delivers and its log lines reach the server's logger", async () => {
    const server = await startTestServer({
      events: { maxAttempts: 1, pollMs: 50 },
      config: { eventsAllowLoopback: "true" }, // the receiver listens on loopback
    });
    const receiver = await startWebhookReceiver();
    try {
      const org = await server.create("/iam/v2/groups", { name: "threaded" });
      await server.create(`/events/v2/subscriptions/${org}`, { sink: receiver.url() });
      await receiver.waitFor((a) => a.length === 1);
      receiver.respondWith(500);
      await server.create(`/iam/v2/groups/${org}`, { name: "child" });
      await waitUntil("the failure is logged", () =>
        server.logLines.some((l) => l.msg === "event delivery failed for good"),
      );
      const line = server.logLines.find((l) => l.msg === "event delivery failed for good");
      assert.equal(line?.status, 500, "the thread's log line reached the server's logger, with the status");
      assert.equal(line?.type, "dev.wharf.api.iam.group.created.v1", "and the event type");
    } finally {
      await server.close();
      await receiver.close();
    }
  });

  it("a thread that dies is logged and started again until closed", async () => {
    const logged: Record<string, unknown>[] = [];
    // A "database" that cannot be opened: the thread fails while starting, every time.
    const dir = await mkdtemp(join(tmpdir(), "wharf-thread-"));
    after(() => rm(dir, { recursive: true, force: true }));
    const notADirectory = join(dir, "file");
    await writeFile(notADirectory, "x");
    const thread = startDispatcherThread(
      {
        database: { sqlitePath: join(notADirectory, "wharf.db") },
        issuerUrl: "http://127.0.0.1:1",
        options: {},
        sinkAddresses: NO_SINK_EXCEPTIONS,
      },
      (line) => logged.push(line as Record<string, unknown>),
    );
    const restarts = () =>
      logged.filter((l) => l.msg === "event dispatcher thread stopped; starting it again");
    await waitUntil("it was started again twice", () => restarts().length >= 2, 15_000);
    assert.ok(
      logged.some(
        (l) => l.msg === "event dispatcher thread failed" && /EEXIST|ENOTDIR/.test(String(l.error)),
      ),
      `the cause is logged: ${JSON.stringify(logged[0])}`,
    );
    const started = Date.now();
    await thread.close();
    const count = restarts().length;
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(restarts().length, count, "no restart after close");
    assert.ok(Date.now() - started < 5000, "close returns promptly");
  });

  it("a thread that dies holding the SQLite write lock has it released for the serving thread", async () => {
    const memory = createSqliteWriteLockMemory();
    const logged: Record<string, unknown>[] = [];
    const thread = startDispatcherThread(
      {
        database: { sqlitePath: ":memory:", sqliteWriteLock: memory },
        issuerUrl: "http://127.0.0.1:1",
        options: {},
        sinkAddresses: NO_SINK_EXCEPTIONS,
      },
      (line) => logged.push(line as Record<string, unknown>),
      LOCK_HOLDER,
    );
    try {
      await waitUntil(
        "the release is logged",
        () =>
          logged.some(
            (l) => l.msg === "event dispatcher thread stopped holding the database write lock; released it",
          ),
        15_000,
      );
    } finally {
      await thread.close();
    }
    // Without the release this would wait out its timeout: the dead thread's id stays in the word.
    const lock = new SqliteWriteLock(memory);
    await lock.acquire(200);
    lock.release();
  });
});
