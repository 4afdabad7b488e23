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
/** The wait before a dead thread is started again, here (1 s in a server). */
const RESTART_DELAY_MS = 50;

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
    const logged: { msg?: unknown; error?: unknown; at: number }[] = [];
    // A "database" that cannot be opened: the thread fails while starting, every time.
    const dir = await mkdtemp(join(tmpdir(), "wharf-thread-"));
    const notADirectory = join(dir, "file");
    await writeFile(notADirectory, "x");
    const thread = startDispatcherThread(
      {
        database: { sqlitePath: join(notADirectory, "wharf.db") },
        issuerUrl: "http://127.0.0.1:1",
        options: {},
        sinkAddresses: NO_SINK_EXCEPTIONS,
      },
      (line) => logged.push({ ...(line as Record<string, unknown>), at: performance.now() }),
      undefined,
      RESTART_DELAY_MS,
    );
    // Closed here too when the test fails before its own close: no thread is left restarting.
    after(async () => {
      await thread.close();
      await rm(dir, { recursive: true, force: true });
    });
    const restarts = () =>
      logged.filter((l) => l.msg === "event dispatcher thread stopped; starting it again");
    await waitUntil("it was started again twice", () => restarts().length >= 2, 15_000);
    assert.ok(
      logged.some(
        (l) => l.msg === "event dispatcher thread failed" && /EEXIST|ENOTDIR/.test(String(l.error)),
      ),
      `the cause is logged: ${JSON.stringify(logged[0])}`,
    );
    // One round here: the restart delay, then a thread starting and failing again.
    const [first, second] = restarts();
    const round = (second?.at ?? 0) - (first?.at ?? 0);
    const started = Date.now();
    await thread.close();
    const closing = Date.now() - started;
    const count = restarts().length;
    // A restart that close missed would be logged within a round (the delay, a thread starting and
    // failing): wait two, and no less than ten delays.
    await new Promise((r) => setTimeout(r, Math.max(2 * round, 10 * RESTART_DELAY_MS)));
    assert.equal(restarts().length, count, "no restart after close");
    // Within the 5 s the close and a 1.5 s wait after it were given when restarts waited 1 s.
    assert.ok(closing < 3500, `close returns promptly (${closing} ms)`);
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
