import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, createFileRegistry } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, file_google_protobuf_empty } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { clientCancelled, deadlineExceeded } from "../../../src/core/cancellation.js";
import type { Access, Principal, RequestContext } from "../../../src/core/context.js";
import { DomainError, permissionDenied, unauthenticated } from "../../../src/core/errors.js";
import { bindService, type ServiceBinding } from "../../../src/core/service.js";
import { Capability } from "../../../src/gen/platform/capabilities/capabilities_pb.js";
import { PingRequestSchema, PingService } from "../../../src/gen/platform/ping/v2/ping_pb.js";
import {
  GetRepoRequestSchema,
  ReposService,
  UpdateRepoRequestSchema,
} from "../../../src/gen/platform/registry/v2/repos_pb.js";
import { buildMethodTable, type MethodEntry } from "../../../src/transport/method-table.js";
import { bearerToken, createPipeline } from "../../../src/transport/pipeline.js";

const ORG = "a".repeat(40);
const REPO = `${ORG}/${"b".repeat(16)}`;
const TOKEN = "header.payload.signature";

function fixture(opts: { allow?: boolean } = {}) {
  const lines: Record<string, unknown>[] = [];
  const required: Array<[string, readonly Capability[]]> = [];
  const seenContexts: RequestContext[] = [];
  const accessFor = (principal: Principal | undefined): Access => ({
    has: async () => principal !== undefined,
    require: async (scope, caps) => {
      required.push([scope, caps]);
      if (!opts.allow) throw permissionDenied("no");
    },
    scopesWith: async () => ({ all: false, uids: [] }),
  });
  const fail = async (): Promise<never> => {
    throw new Error("secret database detail");
  };
  const bindings: ServiceBinding[] = [
    bindService(PingService, {
      ping: async (_r, ctx) => {
        seenContexts.push(ctx);
        return { response: "pong" };
      },
    }),
    bindService(ReposService, {
      getRepo: async (r, ctx) => {
        seenContexts.push(ctx);
        return { uid: r.uid };
      },
      updateRepo: async (r) => ({ uid: r.repo?.uid }),
      listRepos: fail,
      createRepo: fail,
      deleteRepo: fail,
      getRepoReadme: fail,
      updateRepoReadme: fail,
    }),
  ];
  const methods = new Map(buildMethodTable(bindings).map((m) => [m.method.name, m]));
  const pipeline = createPipeline({
    authenticator: {
      authenticate: async (token) => {
        if (token !== TOKEN) throw unauthenticated("bad token");
        return { identityUid: ORG, isAdmin: false, claims: {} };
      },
    },
    accessFor,
    clock: { now: () => 1_700_000_000_000 },
    logger: (line) => lines.push(line),
  });
  const entry = (name: string): MethodEntry => methods.get(name)!;
  const begin = (requestIdHeader?: string | string[]) =>
    pipeline.begin({ httpMethod: "GET", path: "/x", protocol: "rest", requestIdHeader });
  return { pipeline, entry, begin, lines, required, seenContexts };
}

async function rejects(promise: Promise<unknown>, code: Code): Promise<DomainError> {
  const err = await promise.then(
    () => assert.fail("expected a rejection"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof DomainError, String(err));
  assert.equal(err.code, code, err.message);
  return err;
}

describe("pipeline", () => {
  it("honours a sane x-request-id and replaces anything else", () => {
    const { begin } = fixture();
    assert.equal(begin("req-123_abc.def").requestId, "req-123_abc.def");
    assert.equal(begin(["first", "second"]).requestId, "first");
    for (const bad of ["", "has space", "x".repeat(129), "new\nline", undefined]) {
      assert.match(begin(bad).requestId, /^[0-9a-f-]{36}$/);
    }
  });

  it("runs an IAM-disabled RPC anonymously", async () => {
    const { pipeline, entry, begin, seenContexts } = fixture();
    const record = begin("r1");
    const out = await pipeline.invoke(record, entry("Ping"), create(PingRequestSchema), undefined);
    assert.deepEqual(out, { response: "pong" });
    assert.equal(seenContexts[0]?.principal, undefined);
    assert.equal(seenContexts[0]?.requestId, "r1");
    assert.equal(record.code, 0);
  });

  it("requires a well-formed bearer token otherwise", async () => {
    const { pipeline, entry, begin } = fixture({ allow: true });
    const request = create(GetRepoRequestSchema, { uid: REPO });
    for (const header of [undefined, "", "Basic abc", "Bearer", "Bearer a b", TOKEN, "Bearer wrong"]) {
      await rejects(pipeline.invoke(begin(), entry("GetRepo"), request, header), Code.Unauthenticated);
    }
    assert.equal(bearerToken(`bearer  ${TOKEN}`), TOKEN);
  });

  it("says the token is missing for no header and for a bare Bearer", () => {
    for (const header of [undefined, "", "Bearer", "bearer", "Bearer  "]) {
      assert.throws(
        () => bearerToken(header),
        (err: unknown) =>
          err instanceof DomainError &&
          err.code === Code.Unauthenticated &&
          /^Unauthenticated: missing bearer token/.test(err.message),
        String(header),
      );
    }
    assert.throws(() => bearerToken("Basic abc"), /malformed Authorization header/);
  });

  it("checks the scoped capability on the scope field before the handler", async () => {
    const { pipeline, entry, begin, required, seenContexts } = fixture({ allow: true });
    const record = begin();
    await pipeline.invoke(
      record,
      entry("GetRepo"),
      create(GetRepoRequestSchema, { uid: REPO }),
      `Bearer ${TOKEN}`,
    );
    assert.deepEqual(required, [[REPO, [Capability.CAP_REPO_LIST]]]);
    assert.equal(seenContexts[0]?.principal?.identityUid, ORG);
    assert.equal(record.identityUid, ORG);
    const update = create(UpdateRepoRequestSchema, { repo: { uid: REPO } });
    await pipeline.invoke(begin(), entry("UpdateRepo"), update, `Bearer ${TOKEN}`);
    assert.deepEqual(required[1], [REPO, [Capability.CAP_REPO_UPDATE]]);
  });

  it("refuses a denied scope with PERMISSION_DENIED and never runs the handler", async () => {
    const { pipeline, entry, begin, seenContexts } = fixture({ allow: false });
    const request = create(GetRepoRequestSchema, { uid: REPO });
    await rejects(
      pipeline.invoke(begin(), entry("GetRepo"), request, `Bearer ${TOKEN}`),
      Code.PermissionDenied,
    );
    assert.equal(seenContexts.length, 0);
  });

  it("names the scope field when its uid is empty or malformed", async () => {
    const { pipeline, entry, begin } = fixture({ allow: true });
    const empty = await rejects(
      pipeline.invoke(begin(), entry("UpdateRepo"), create(UpdateRepoRequestSchema), `Bearer ${TOKEN}`),
      Code.InvalidArgument,
    );
    assert.equal(empty.details.fieldViolations?.[0]?.field, "repo.uid");
    const bad = await rejects(
      pipeline.invoke(
        begin(),
        entry("GetRepo"),
        create(GetRepoRequestSchema, { uid: "nope" }),
        `Bearer ${TOKEN}`,
      ),
      Code.InvalidArgument,
    );
    assert.equal(bad.details.fieldViolations?.[0]?.field, "uid");
  });

  it("hides unexpected errors behind INTERNAL and logs them once, without the token", async () => {
    const { pipeline, entry, begin, lines } = fixture({ allow: true });
    const record = begin("rid");
    const err = await rejects(
      pipeline.invoke(record, entry("ListRepos"), create(GetRepoRequestSchema), `Bearer ${TOKEN}`),
      Code.Internal,
    );
    assert.doesNotMatch(err.message, /secret/);
    pipeline.finish(record, 500);
    pipeline.finish(record, 500);
    assert.equal(lines.length, 1);
    const line = lines[0]!;
    assert.equal(line.requestId, "rid");
    assert.equal(line.code, "INTERNAL");
    assert.equal(line.status, 500);
    assert.equal(line.level, "error");
    assert.equal(line.rpc, "platform.registry.v2.ReposService/ListRepos");
    assert.equal(line.identityUid, ORG);
    assert.equal(typeof line.durationMs, "number");
    assert.match(JSON.stringify(line.error), /secret database detail/);
    assert.doesNotMatch(JSON.stringify(line), new RegExp(TOKEN));
  });

  it("a call given up on before it runs never reaches its handler and ends with the reason", async () => {
    const { pipeline, entry, begin, seenContexts } = fixture();
    const record = begin();
    const reason = deadlineExceeded();
    record.cancellation.abort(reason);
    const err = await rejects(
      pipeline.invoke(record, entry("Ping"), create(PingRequestSchema), undefined),
      Code.DeadlineExceeded,
    );
    assert.equal(err, reason);
    assert.equal(seenContexts.length, 0, "the handler did not run");
    assert.equal(record.code, Code.DeadlineExceeded);
    assert.equal(pipeline.fail(record, new Error("thrown later")), reason, "the reason stays the outcome");
    assert.equal(record.cause, undefined, "and what was thrown later is no cause to log");
  });

  it("the handler's signal follows the call's cancellation", async () => {
    const { pipeline, entry, begin, seenContexts } = fixture();
    const record = begin();
    assert.deepEqual(await pipeline.invoke(record, entry("Ping"), create(PingRequestSchema), undefined), {
      response: "pong",
    });
    const signal = seenContexts[0]!.signal;
    assert.equal(signal.aborted, false);
    const reason = clientCancelled();
    record.cancellation.abort(reason);
    assert.equal(signal.reason, reason, "the signal fired with the reason");
  });

  it("a call given up on while it authenticates goes no further", async () => {
    const { pipeline, entry, begin, seenContexts } = fixture({ allow: true });
    const record = begin();
    const invoked = pipeline.invoke(
      record,
      entry("GetRepo"),
      create(GetRepoRequestSchema, { uid: REPO }),
      `Bearer ${TOKEN}`,
    );
    record.cancellation.abort(clientCancelled());
    await rejects(invoked, Code.Canceled);
    assert.equal(seenContexts.length, 0, "the handler did not run");
    assert.equal(record.code, Code.Canceled);
  });
});

describe("buildMethodTable", () => {
  it("reads the IAM annotation once per method", () => {
    const { entry } = fixture();
    assert.deepEqual(entry("Ping").auth, { kind: "disabled" });
    assert.equal(entry("ListRepos").auth.kind, "unscoped");
    const update = entry("UpdateRepo").auth;
    assert.ok(update.kind === "scoped");
    assert.equal(update.scopeField, "repo.uid");
    assert.equal(update.scopeOf(create(UpdateRepoRequestSchema, { repo: { uid: "u" } })), "u");
    assert.equal(update.scopeOf(create(UpdateRepoRequestSchema)), "");
    assert.equal(entry("GetRepo").domain, "registry.wharf.dev");
    assert.equal(entry("GetRepo").rpcPath, "/platform.registry.v2.ReposService/GetRepo");
  });

  it("refuses a binding without a handler or without an IAM annotation", () => {
    const partial = { service: PingService, handlers: {} } as unknown as ServiceBinding;
    assert.throws(() => buildMethodTable([partial]), /no handler bound/);

    const fdp = create(FileDescriptorProtoSchema, {
      name: "test/bare.proto",
      package: "test",
      syntax: "proto3",
      dependency: ["google/protobuf/empty.proto"],
      service: [
        {
          name: "Bare",
          method: [
            { name: "Call", inputType: ".google.protobuf.Empty", outputType: ".google.protobuf.Empty" },
          ],
        },
      ],
    });
    const bare = createFileRegistry(fdp, () => file_google_protobuf_empty).getService("test.Bare")!;
    const binding = { service: bare, handlers: { call: async () => ({}) } } as unknown as ServiceBinding;
    assert.throws(() => buildMethodTable([binding]), /missing \(platform\.annotations\.iam\)/);
  });
});
