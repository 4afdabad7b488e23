import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import http2 from "node:http2";
import { after, before, it } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import pg from "pg";
import {
  RepoSchema,
  ReposService,
  UpdateRepoRequestSchema,
} from "../../src/gen/platform/registry/v2/repos_pb.js";
import { createSqliteWriteLockMemory, SqliteWriteLock } from "../../src/storage/sql/sqlite-write-lock.js";
import { expectJson } from "../support/api-assertions.js";
import { forEachEngine } from "../support/databases.js";
import { grpcCall } from "../support/grpc-call.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const UPDATE_REPO = "/platform.registry.v2.ReposService/UpdateRepo";
/** The deadline (or the time before the client goes away) of every blocked call. */
const DEADLINE_MS = 300;
/** When a client relying on the server's deadline gives up by itself (the server ignored it). */
const CLIENT_GIVES_UP_MS = 3000;

/** A lock that makes writes of one repo wait; `release` lets them go on. */
interface HeldLock {
  release(): Promise<void>;
}

/** The longest any step of a case may take before the case fails with that step named. */
const STEP_MS = 20_000;

/** `promise`, or a rejection naming `step` once `ms` passed: a stuck step fails its case, not the run. */
async function within<T>(ms: number, step: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${step}: not done in ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** What became of the blocked call, as its client saw it. */
type Outcome = { grpcCode?: number; connectCode?: Code; httpStatus?: number };

/**
 * Every API path gives a call up when its deadline passes or its client goes away, and the call's
 * write then never commits. Each case makes an UpdateRepo wait on a lock held by another party (the
 * SQLite write lock held outside the server's store; a row lock of the repo held by another
 * PostgreSQL client), lets the deadline pass or the client leave, and checks (1) the code the call
 * ended with, (2) that once the lock is released neither the new description nor its event was
 * committed, and (3) that the server goes on serving (a later update of the same repo succeeds).
 */
forEachEngine("deadlines and cancellation", (db) => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  let grpcClient: grpc.Client;
  let databaseUrl = "";
  let org: string;
  const writeLock = createSqliteWriteLockMemory();

  before(async () => {
    databaseUrl = db.engine === "postgres" ? ((await db.freshOptions()).databaseUrl ?? "") : "";
    server = await startTestServer({
      config: { eventsAllowLoopback: "true" },
      ...(databaseUrl ? { databaseUrl } : { sqliteWriteLock: writeLock }),
    });
    receiver = await startWebhookReceiver();
    grpcClient = new grpc.Client(new URL(server.apiUrl).host, grpc.credentials.createInsecure());
    org = await server.create("/iam/v2/groups", { name: "acme" });
    await server.create(`/events/v2/subscriptions/${org}`, { sink: receiver.url() });
  });
  after(async () => {
    grpcClient.close();
    await server.close();
    await receiver.close();
  });

  /** Holds what makes an update of `repoUid` wait: the write lock (SQLite), the repo's row (PostgreSQL). */
  async function holdLock(repoUid: string): Promise<HeldLock> {
    if (db.engine === "sqlite") {
      // Held from this thread, which is also the server's: the server's writes wait on it exactly
      // as on another thread's hold (the lock is not reentrant). No worker thread is started here:
      // a worker's start under the test loader is not what this file tests.
      const lock = new SqliteWriteLock(writeLock);
      await lock.acquire(STEP_MS);
      return { release: async () => lock.release() };
    }
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query("BEGIN");
    const locked = await client.query("SELECT uid FROM repos WHERE uid = $1 FOR UPDATE", [repoUid]);
    assert.equal(locked.rowCount, 1, "the repo's row is locked");
    return {
      release: async () => {
        await client.query("ROLLBACK");
        await client.end();
      },
    };
  }

  /** The one log line of request `requestId`, once written. */
  async function logLineOf(requestId: string, timeoutMs = 10_000): Promise<Record<string, unknown>> {
    for (let waited = 0; waited < timeoutMs; waited += 20) {
      const line = server.logLines.find((l) => l.requestId === requestId);
      if (line) return line;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`no log line for request ${requestId}`);
  }

  function updateRequest(repoUid: string, description: string) {
    return create(UpdateRepoRequestSchema, {
      repo: { uid: repoUid, description },
      updateMask: { paths: ["description"] },
    });
  }

  /**
   * Creates a repo, holds the lock on it, runs `blocked` (an update to description "during" that
   * must be given up), then releases the lock and checks (2) and (3). Returns what `blocked` saw.
   */
  async function blockedUpdate(
    name: string,
    blocked: (repoUid: string, requestId: string) => Promise<Outcome>,
  ): Promise<{ outcome: Outcome; log: Record<string, unknown>; elapsedMs: number }> {
    const repoUid = await server.create(`/registry/v2/repos/${org}`, { name });
    const requestId = `blocked-${name}-${db.engine}`;
    const lock = await within(STEP_MS, `holding the lock on ${name}`, holdLock(repoUid));
    let outcome: Outcome;
    const started = performance.now();
    try {
      outcome = await within(STEP_MS, `the blocked call on ${name}`, blocked(repoUid, requestId));
    } finally {
      // Held a little longer: the server is still waiting, with the call given up.
      await new Promise((resolve) => setTimeout(resolve, 100));
      await within(STEP_MS, `releasing the lock on ${name}`, lock.release());
    }
    const elapsedMs = performance.now() - started;
    const log = await logLineOf(requestId);

    // (3) The server still serves: an update of the same repo, queued behind the blocked one.
    const after = await expectJson(
      await server.api(`/registry/v2/repos/${repoUid}`, {
        method: "PATCH",
        token: server.adminToken,
        body: { description: "after" },
      }),
    );
    assert.equal(after.description, "after", "a later update succeeds");

    // (2) Nothing of the blocked update was committed: neither the description nor its event.
    const events = await receiver.waitFor((a) =>
      a.some((d) => d.headers["ce-subject"] === repoUid && d.headers["ce-type"]?.includes("repo.updated")),
    );
    const updates = events
      .filter((d) => d.headers["ce-subject"] === repoUid && d.headers["ce-type"]?.includes("repo.updated"))
      .map((d) => (JSON.parse(d.body) as { body: { description: string } }).body.description);
    assert.deepEqual(updates, ["after"], "the one recorded update is the later one");
    return { outcome, log, elapsedMs };
  }

  it("gRPC (direct path): grpc-timeout passes → DEADLINE_EXCEEDED from the server, nothing committed", async () => {
    const { outcome, log, elapsedMs } = await blockedUpdate("h2-deadline", async (repoUid, requestId) => {
      const session = http2.connect(server.apiUrl);
      try {
        const frame = Buffer.from(toBinary(UpdateRepoRequestSchema, updateRequest(repoUid, "during")));
        const stream = session.request({
          ":method": "POST",
          ":path": UPDATE_REPO,
          "content-type": "application/grpc",
          te: "trailers",
          authorization: `Bearer ${server.adminToken}`,
          "grpc-timeout": `${DEADLINE_MS}m`,
          "x-request-id": requestId,
        });
        const prefix = Buffer.alloc(5);
        prefix.writeUInt32BE(frame.length, 1);
        stream.end(Buffer.concat([prefix, frame]));
        const givingUp = setTimeout(() => stream.close(http2.constants.NGHTTP2_CANCEL), CLIENT_GIVES_UP_MS);
        let status: string | string[] | undefined;
        stream.once("response", (headers) => {
          status = headers["grpc-status"];
        });
        stream.once("trailers", (trailers) => {
          status ??= trailers["grpc-status"];
        });
        stream.resume();
        await new Promise((resolve) => stream.once("close", resolve));
        clearTimeout(givingUp);
        return status === undefined ? {} : { grpcCode: Number(status) };
      } finally {
        session.close();
      }
    });
    assert.equal(outcome.grpcCode, grpc.status.DEADLINE_EXCEEDED, "the server answered DEADLINE_EXCEEDED");
    assert.ok(elapsedMs < 2000, `answered at the deadline, before the lock was released (${elapsedMs} ms)`);
    assert.equal(log.code, "DEADLINE_EXCEEDED", "logged as DEADLINE_EXCEEDED");
  });

  it("gRPC with @grpc/grpc-js and a deadline: DEADLINE_EXCEEDED, nothing committed", async () => {
    const { outcome, log } = await blockedUpdate("grpc-js-deadline", async (repoUid, requestId) => {
      const { error } = await grpcCall(
        grpcClient,
        UPDATE_REPO,
        { input: UpdateRepoRequestSchema, output: RepoSchema },
        updateRequest(repoUid, "during"),
        server.adminToken,
        { deadline: Date.now() + DEADLINE_MS, metadata: { "x-request-id": requestId } },
      );
      return { grpcCode: error?.code ?? 0 };
    });
    assert.equal(outcome.grpcCode, grpc.status.DEADLINE_EXCEEDED, "the client saw DEADLINE_EXCEEDED");
    // The client resets the stream at its deadline, about when the server's own timer fires.
    assert.ok(["DEADLINE_EXCEEDED", "CANCELLED"].includes(log.code as string), `logged ${log.code}`);
  });

  it("gRPC with @grpc/grpc-js, the call cancelled: CANCELLED (499), nothing committed", async () => {
    const { outcome, log } = await blockedUpdate("grpc-js-cancel", async (repoUid, requestId) => {
      const { error } = await grpcCall(
        grpcClient,
        UPDATE_REPO,
        { input: UpdateRepoRequestSchema, output: RepoSchema },
        updateRequest(repoUid, "during"),
        server.adminToken,
        {
          started: (call) => setTimeout(() => call.cancel(), DEADLINE_MS),
          metadata: { "x-request-id": requestId },
        },
      );
      return { grpcCode: error?.code ?? 0 };
    });
    assert.equal(outcome.grpcCode, grpc.status.CANCELLED, "the client cancelled");
    assert.equal(log.code, "CANCELLED", "the server gave the call up as CANCELLED");
    assert.equal(log.status, 499, "logged 499");
  });

  it("Connect protocol (connect-node, timeoutMs): DEADLINE_EXCEEDED, nothing committed", async () => {
    const { outcome, log } = await blockedUpdate("connect-deadline", async (repoUid, requestId) => {
      const client = createClient(
        ReposService,
        createConnectTransport({ baseUrl: server.apiUrl, httpVersion: "1.1" }),
      );
      try {
        await client.updateRepo(updateRequest(repoUid, "during"), {
          timeoutMs: DEADLINE_MS,
          headers: { authorization: `Bearer ${server.adminToken}`, "x-request-id": requestId },
        });
        return { connectCode: Code.Unknown };
      } catch (err) {
        return { connectCode: ConnectError.from(err).code };
      }
    });
    assert.equal(outcome.connectCode, Code.DeadlineExceeded, "the client saw DEADLINE_EXCEEDED");
    assert.ok(["DEADLINE_EXCEEDED", "CANCELLED"].includes(log.code as string), `logged ${log.code}`);
  });

  it("Connect protocol (fetch, connect-timeout-ms): DEADLINE_EXCEEDED from the server, nothing committed", async () => {
    const { outcome, log, elapsedMs } = await blockedUpdate(
      "connect-fetch-deadline",
      async (repoUid, requestId) => {
        const res = await fetch(`${server.apiUrl}${UPDATE_REPO}`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "connect-protocol-version": "1",
            "connect-timeout-ms": String(DEADLINE_MS),
            authorization: `Bearer ${server.adminToken}`,
            "x-request-id": requestId,
          },
          body: JSON.stringify({ repo: { uid: repoUid, description: "during" }, updateMask: "description" }),
          signal: AbortSignal.timeout(CLIENT_GIVES_UP_MS),
        }).catch(() => undefined);
        if (!res) return {};
        const error = (await res.json()) as { code?: string };
        return {
          httpStatus: res.status,
          connectCode: error.code === "deadline_exceeded" ? Code.DeadlineExceeded : undefined,
        };
      },
    );
    assert.equal(outcome.connectCode, Code.DeadlineExceeded, "the server answered deadline_exceeded");
    assert.equal(outcome.httpStatus, 504, "as HTTP 504");
    assert.ok(elapsedMs < 2000, `answered at the deadline, before the lock was released (${elapsedMs} ms)`);
    assert.equal(log.code, "DEADLINE_EXCEEDED", "logged as DEADLINE_EXCEEDED");
  });

  it("gRPC-Web (fetch, grpc-timeout): DEADLINE_EXCEEDED from the server, nothing committed", async () => {
    const { outcome, log, elapsedMs } = await blockedUpdate(
      "grpc-web-deadline",
      async (repoUid, requestId) => {
        const message = Buffer.from(toBinary(UpdateRepoRequestSchema, updateRequest(repoUid, "during")));
        const prefix = Buffer.alloc(5);
        prefix.writeUInt32BE(message.length, 1);
        const res = await fetch(`${server.apiUrl}${UPDATE_REPO}`, {
          method: "POST",
          headers: {
            "content-type": "application/grpc-web+proto",
            "x-grpc-web": "1",
            "grpc-timeout": `${DEADLINE_MS}m`,
            authorization: `Bearer ${server.adminToken}`,
            "x-request-id": requestId,
          },
          body: Buffer.concat([prefix, message]),
          signal: AbortSignal.timeout(CLIENT_GIVES_UP_MS),
        }).catch(() => undefined);
        return res ? { grpcCode: grpcWebStatus(res.headers, Buffer.from(await res.arrayBuffer())) } : {};
      },
    );
    assert.equal(outcome.grpcCode, grpc.status.DEADLINE_EXCEEDED, "the server answered DEADLINE_EXCEEDED");
    assert.ok(elapsedMs < 2000, `answered at the deadline, before the lock was released (${elapsedMs} ms)`);
    assert.equal(log.code, "DEADLINE_EXCEEDED", "logged as DEADLINE_EXCEEDED");
  });

  it("REST, the client disconnects: logged 499 CANCELLED, nothing committed", async () => {
    const { log } = await blockedUpdate("rest-disconnect", async (repoUid, requestId) => {
      const body = JSON.stringify({ description: "during" });
      const req = httpRequest(`${server.apiUrl}/registry/v2/repos/${repoUid}`, {
        method: "PATCH",
        headers: {
          authorization: `Bearer ${server.adminToken}`,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          "x-request-id": requestId,
        },
      });
      req.on("error", () => {});
      req.end(body);
      await new Promise((resolve) => setTimeout(resolve, DEADLINE_MS));
      req.destroy();
      await logLineOf(requestId, CLIENT_GIVES_UP_MS);
      return {};
    });
    assert.equal(log.status, 499, "logged 499");
    assert.equal(log.code, "CANCELLED", "logged as CANCELLED");
  });
});

/** The grpc-status of a gRPC-Web response: in its headers (trailers-only) or its trailer frame. */
function grpcWebStatus(headers: Headers, body: Buffer): number | undefined {
  const inHeaders = headers.get("grpc-status");
  if (inHeaders !== null) return Number(inHeaders);
  for (let at = 0; at + 5 <= body.length; ) {
    const length = body.readUInt32BE(at + 1);
    if ((body[at]! & 0x80) !== 0) {
      const trailer = /grpc-status:\s*(\d+)/i.exec(body.subarray(at + 5, at + 5 + length).toString("utf8"));
      return trailer ? Number(trailer[1]) : undefined;
    }
    at += 5 + length;
  }
  return undefined;
}
