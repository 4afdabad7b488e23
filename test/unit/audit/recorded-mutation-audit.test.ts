import assert from "node:assert/strict";
import { before, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { auditChangeIn, createApiAuditor } from "../../../src/audit/api-audit.js";
import { auditRow, MAX_CLIENT_TEXT, resultOfError } from "../../../src/audit/audit-rows.js";
import type { CallAudit } from "../../../src/core/context.js";
import {
  DomainError,
  failedPrecondition,
  invalidArgument,
  permissionDenied,
  unauthenticated,
} from "../../../src/core/errors.js";
import { newRootUid } from "../../../src/core/uidp.js";
import { createEventRecorder } from "../../../src/events/event-recorder.js";
import { recordedMutation } from "../../../src/events/recorded-mutation.js";
import { GroupSchema } from "../../../src/gen/platform/iam/v2/groups_pb.js";
import type { Store } from "../../../src/storage/store.js";
import { forEachEngine } from "../../support/databases.js";

const clock = { now: () => 1_800_000_000_000 };
const principal = { identityUid: "a".repeat(40), isAdmin: false, claims: {} };
const callAudit = (): CallAudit => ({
  action: "platform.iam.v2.GroupsService/CreateGroup",
  requestId: "r-1",
  sourceAddress: "127.0.0.1",
  userAgent: "test",
  recorded: false,
});

forEachEngine("audit records of recorded mutations", (db) => {
  let store: Store;
  const events = createEventRecorder({ apiUrl: "http://api", registryUrl: "http://registry" });
  before(async () => {
    store = await db.openFresh();
  });

  const groupChange = (uid: string) => ({
    resource: "group" as const,
    verb: "created" as const,
    subject: uid,
    group: uid,
    schema: GroupSchema,
    body: { uid, name: "g" },
  });
  const row = (uid: string) => ({
    uid,
    name: `g${uid.slice(0, 6)}`,
    description: "",
    verified: false,
    createTime: clock.now(),
    updateTime: clock.now(),
  });

  it("writes one OK record with the change, in its transaction", async () => {
    const uid = newRootUid();
    const audit = callAudit();
    await recordedMutation(
      { store, events },
      { principal, clock, audit },
      (tx) => tx.groups.insert(row(uid)),
      groupChange(uid),
    );
    assert.equal(audit.recorded, true);
    const rows = await store.audit.list({ resource: uid }, { limit: 10 });
    assert.deepEqual(
      rows.map((r) => [r.row.action, r.row.resultCode, r.row.groupUid, r.row.actor, r.row.requestId]),
      [["platform.iam.v2.GroupsService/CreateGroup", "OK", uid, principal.identityUid, "r-1"]],
    );
  });

  it("leaves no record when the transaction rolls back after the change, and unmarks the call", async () => {
    const uid = newRootUid();
    const audit = callAudit();
    const controller = new AbortController();
    await assert.rejects(
      recordedMutation(
        { store, events },
        { principal, clock, audit, signal: controller.signal },
        (tx) => tx.groups.insert(row(uid)),
        () => {
          // Given up on after the write: the audit INSERT runs, then the commit is refused.
          controller.abort(new Error("client went away"));
          return groupChange(uid);
        },
      ),
      /client went away/,
    );
    assert.equal(audit.recorded, false, "the pipeline must still write the call's outcome");
    assert.deepEqual(await store.audit.list({ resource: uid }, { limit: 10 }), []);
    assert.equal(await store.groups.get(uid), undefined);
  });

  it("records a call under the resource it names, not the first other resource it changed", async () => {
    const policy = `${newRootUid()}/0123456789abcdef`;
    const repo = newRootUid();
    const tag = `${repo}/fedcba9876543210`;
    const audit = { ...callAudit(), target: { resource: policy, group: policy } };
    await store.transaction(async (tx) => {
      await auditChangeIn(tx, { principal, clock, audit }, { resource: tag, group: tag });
      await auditChangeIn(tx, { principal, clock, audit }, { resource: `${tag}0`, group: tag });
    });
    const rows = await store.audit.list({ resource: policy }, { limit: 10 });
    assert.deepEqual(
      rows.map((r) => [r.row.resource, r.row.groupUid, r.row.resultCode]),
      [[policy, policy, "OK"]],
      "one record per call, under the resource the call named",
    );
    assert.deepEqual(await store.audit.list({ resource: tag }, { limit: 10 }), []);
    // A change to the named resource itself keeps the change's group (its parent).
    const own = { ...callAudit(), target: { resource: tag, group: tag } };
    await store.transaction((tx) =>
      auditChangeIn(tx, { principal, clock, audit: own }, { resource: tag, group: repo }),
    );
    const ownRows = await store.audit.list({ resource: tag }, { limit: 10 });
    assert.deepEqual(
      ownRows.map((r) => r.row.groupUid),
      [repo],
    );
  });

  it("writes nothing for a context without audit facts (reads, the registry, jobs)", async () => {
    const uid = newRootUid();
    await store.transaction((tx) => auditChangeIn(tx, { principal, clock }, { resource: uid, group: uid }));
    assert.deepEqual(await store.audit.list({ resource: uid }, { limit: 10 }), []);
  });

  it("the pipeline's auditor writes refusals, and a success only when no change wrote it", async () => {
    const auditor = createApiAuditor({ store, clock, logger: () => {} });
    const uid = newRootUid();
    const audit = callAudit();
    await auditor.finished({
      audit,
      principal: undefined,
      resource: uid,
      group: uid,
      error: { error: unauthenticated("no token"), codeName: "UNAUTHENTICATED" },
    });
    audit.recorded = true;
    await auditor.finished({ audit, principal, resource: uid, group: uid });
    const rows = await store.audit.list({ resource: uid }, { limit: 10 });
    assert.deepEqual(
      rows.map((r) => [r.row.resultCode, r.row.resultReason, r.row.actor]),
      [["DENIED", "UNAUTHENTICATED", ""]],
    );
  });
});

it("classifies errors: DENIED for refusals, FAILED with the precondition type or reason otherwise", () => {
  assert.deepEqual(resultOfError(permissionDenied("no"), "PERMISSION_DENIED"), {
    resultCode: "DENIED",
    resultReason: "PERMISSION_DENIED",
  });
  assert.deepEqual(resultOfError(failedPrecondition("TAG_IMMUTABLE", "no", "x"), "FAILED_PRECONDITION"), {
    resultCode: "FAILED",
    resultReason: "TAG_IMMUTABLE",
  });
  const rateLimited = new DomainError(Code.ResourceExhausted, "slow down", { reason: "RATE_LIMITED" });
  assert.deepEqual(resultOfError(rateLimited, "RESOURCE_EXHAUSTED"), {
    resultCode: "DENIED",
    resultReason: "RATE_LIMITED",
  });
  assert.deepEqual(resultOfError(invalidArgument("name", "bad"), "INVALID_ARGUMENT"), {
    resultCode: "FAILED",
    resultReason: "INVALID_ARGUMENT",
  });
});

it("clips the texts a client chooses, so a refused request cannot store bulk in the log", () => {
  const row = auditRow(
    undefined,
    { requestId: "r", sourceAddress: "10.0.0.1", userAgent: "u".repeat(10_000) },
    { time: 1, action: "x", resource: "r".repeat(10_000), group: "", resultCode: "DENIED" },
  );
  assert.equal(row.resource.length, MAX_CLIENT_TEXT);
  assert.equal(row.userAgent.length, MAX_CLIENT_TEXT);
});
