import assert from "node:assert/strict";
import { it } from "node:test";
import { create } from "@bufbuild/protobuf";
import type { Access, Principal, RequestContext } from "../../../src/core/context.js";
import { failedPrecondition, permissionDenied, unauthenticated } from "../../../src/core/errors.js";
import { bindService } from "../../../src/core/service.js";
import { SecurityAdvisoryService } from "../../../src/gen/platform/advisory/v2/security_advisory_pb.js";
import {
  DeleteRepoRequestSchema,
  GetRepoRequestSchema,
  ReposService,
} from "../../../src/gen/platform/registry/v2/repos_pb.js";
import { buildMethodTable } from "../../../src/transport/method-table.js";
import { createPipeline, type FinishedCall } from "../../../src/transport/pipeline.js";

const ORG = "a".repeat(40);
const REPO = `${ORG}/${"b".repeat(16)}`;
const TOKEN = "header.payload.signature";

function fixture(behaviour: { deleteRepo: (ctx: RequestContext) => Promise<void>; allow?: boolean }) {
  const finished: FinishedCall[] = [];
  const contexts: RequestContext[] = [];
  const accessFor = (principal: Principal | undefined): Access => ({
    has: async () => principal !== undefined,
    require: async () => {
      if (behaviour.allow === false) throw permissionDenied("no");
    },
    scopesWith: async () => ({ all: true }),
  });
  const unused = async (): Promise<never> => {
    throw new Error("not called");
  };
  const methods = buildMethodTable([
    bindService(ReposService, {
      getRepo: async (r, ctx) => {
        contexts.push(ctx);
        return { uid: r.uid };
      },
      deleteRepo: async (_r, ctx) => {
        contexts.push(ctx);
        await behaviour.deleteRepo(ctx);
        return {};
      },
      updateRepo: unused,
      listRepos: unused,
      createRepo: unused,
      getRepoReadme: unused,
      updateRepoReadme: unused,
    }),
  ]);
  const pipeline = createPipeline({
    authenticator: {
      authenticate: async (token) => {
        if (token !== TOKEN) throw unauthenticated("bad token");
        return { identityUid: ORG, isAdmin: false, claims: {} };
      },
    },
    accessFor,
    clock: { now: () => 1_700_000_000_000 },
    logger: () => {},
    audit: {
      finished: async (call) => {
        finished.push(call);
      },
    },
  });
  const byName = new Map(methods.map((m) => [m.method.name, m]));
  const record = () =>
    pipeline.begin({
      httpMethod: "DELETE",
      path: "/x",
      protocol: "rest",
      requestIdHeader: "req-1",
      clientAddress: "10.1.2.3",
      userAgent: "agent/1",
    });
  return { pipeline, byName, record, finished, contexts };
}

it("classifies RPCs as mutating from their HTTP binding; POST reads (:query) are not", () => {
  const unused = async (): Promise<never> => {
    throw new Error("not called");
  };
  const handlers = Object.fromEntries(ReposService.methods.map((m) => [m.localName, unused]));
  const advisory = Object.fromEntries(SecurityAdvisoryService.methods.map((m) => [m.localName, unused]));
  const table = buildMethodTable([
    bindService(ReposService, handlers as never),
    bindService(SecurityAdvisoryService, advisory as never),
  ]);
  const mutating = Object.fromEntries(table.map((m) => [m.method.name, m.mutating]));
  assert.equal(mutating.GetRepo, false);
  assert.equal(mutating.ListRepos, false);
  assert.equal(mutating.CreateRepo, true);
  assert.equal(mutating.UpdateRepo, true);
  assert.equal(mutating.DeleteRepo, true);
  assert.equal(mutating.ResolvedVulns, false);
});

it("gives reads no audit facts and tells the auditor nothing about them", async () => {
  const f = fixture({ deleteRepo: async () => {} });
  await f.pipeline.invoke(
    f.record(),
    f.byName.get("GetRepo")!,
    create(GetRepoRequestSchema, { uid: REPO }),
    `Bearer ${TOKEN}`,
  );
  assert.equal(f.contexts[0]?.audit, undefined);
  assert.deepEqual(f.finished, []);
});

it("skips the auditor when the handler's change wrote the record, and tells it otherwise", async () => {
  const recorded = fixture({
    deleteRepo: async (ctx) => {
      if (ctx.audit) ctx.audit.recorded = true;
    },
  });
  const request = create(DeleteRepoRequestSchema, { uid: REPO });
  await recorded.pipeline.invoke(
    recorded.record(),
    recorded.byName.get("DeleteRepo")!,
    request,
    `Bearer ${TOKEN}`,
  );
  assert.deepEqual(recorded.contexts[0]?.audit, {
    action: "platform.registry.v2.ReposService/DeleteRepo",
    requestId: "req-1",
    sourceAddress: "10.1.2.3",
    userAgent: "agent/1",
    // DeleteRepo names its repo by uid: the record names it whatever the handler changed first.
    target: { resource: REPO, group: REPO },
    recorded: true,
  });
  assert.deepEqual(recorded.finished, []);

  const nothing = fixture({ deleteRepo: async () => {} });
  await nothing.pipeline.invoke(
    nothing.record(),
    nothing.byName.get("DeleteRepo")!,
    request,
    `Bearer ${TOKEN}`,
  );
  assert.equal(nothing.finished.length, 1);
  assert.equal(nothing.finished[0]?.error, undefined);
  assert.equal(nothing.finished[0]?.resource, REPO);
  assert.equal(nothing.finished[0]?.group, REPO);
});

it("tells the auditor of refusals (with the caller when known) and of failures, even after a recorded change", async () => {
  const request = create(DeleteRepoRequestSchema, { uid: REPO });
  const denied = fixture({ deleteRepo: async () => {}, allow: false });
  await assert.rejects(
    denied.pipeline.invoke(denied.record(), denied.byName.get("DeleteRepo")!, request, `Bearer ${TOKEN}`),
  );
  assert.equal(denied.finished[0]?.error?.codeName, "PERMISSION_DENIED");
  assert.equal(denied.finished[0]?.principal?.identityUid, ORG);

  await assert.rejects(
    denied.pipeline.invoke(denied.record(), denied.byName.get("DeleteRepo")!, request, "Bearer nope"),
  );
  assert.equal(denied.finished[1]?.error?.codeName, "UNAUTHENTICATED");
  assert.equal(denied.finished[1]?.principal, undefined);

  const failed = fixture({
    deleteRepo: async (ctx) => {
      if (ctx.audit) ctx.audit.recorded = true;
      throw failedPrecondition("RESOURCE_NOT_EMPTY", "busy", REPO);
    },
  });
  await assert.rejects(
    failed.pipeline.invoke(failed.record(), failed.byName.get("DeleteRepo")!, request, `Bearer ${TOKEN}`),
  );
  assert.equal(failed.finished[0]?.error?.codeName, "FAILED_PRECONDITION");
});
