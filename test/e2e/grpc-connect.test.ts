import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { create, createRegistry, fromBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { BadRequestSchema, ErrorInfoSchema } from "../../src/gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../src/gen/google/rpc/status_pb.js";
import { CreateIdentityRequestSchema, IdentitySchema } from "../../src/gen/platform/iam/v2/identities_pb.js";
import { PingRequestSchema, PingResponseSchema } from "../../src/gen/platform/ping/v2/ping_pb.js";
import {
  GetRepoRequestSchema,
  RepoSchema,
  ReposService,
} from "../../src/gen/platform/registry/v2/repos_pb.js";
import { grpcCall } from "../support/grpc-call.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

describe("the same services over gRPC (grpc-js), Connect and gRPC-Web", () => {
  let wharf: TestServer;
  let grpcClient: grpc.Client;
  let org: string;
  let repoUid: string;
  before(async () => {
    wharf = await startTestServer();
    org = await wharf.create("/iam/v2/groups", { name: "acme" });
    repoUid = await wharf.create(`/registry/v2/repos/${org}`, { name: "app", description: "d" });
    grpcClient = new grpc.Client(new URL(wharf.apiUrl).host, grpc.credentials.createInsecure());
  });
  after(async () => {
    grpcClient.close();
    await wharf.close();
  });

  it("grpc-js: Ping without a token, GetRepo with one", async () => {
    const ping = await grpcCall(
      grpcClient,
      "/platform.ping.v2.PingService/Ping",
      { input: PingRequestSchema, output: PingResponseSchema },
      create(PingRequestSchema),
    );
    assert.equal(ping.response?.response, "pong");
    const repo = await grpcCall(
      grpcClient,
      "/platform.registry.v2.ReposService/GetRepo",
      { input: GetRepoRequestSchema, output: RepoSchema },
      create(GetRepoRequestSchema, { uid: repoUid }),
      wharf.adminToken,
    );
    assert.equal(repo.response?.name, "app");
    assert.equal(repo.response?.uid, repoUid);
    // The line is written when the stream closes, which may be just after the client has the answer.
    const logged = () => wharf.logLines.find((l) => l.rpc === "platform.registry.v2.ReposService/GetRepo");
    for (let i = 0; i < 200 && logged() === undefined; i++) await new Promise((r) => setTimeout(r, 10));
    const line = logged();
    assert.equal(line?.protocol, "grpc", "logged as plain gRPC");
    assert.equal(line?.code, "OK", "with its outcome");
    assert.equal(line?.status, 200, "and HTTP status");
    assert.equal(typeof line?.identityUid, "string", "and the caller");
  });

  it("grpc-js: UNAUTHENTICATED without a token", async () => {
    const res = await grpcCall(
      grpcClient,
      "/platform.registry.v2.ReposService/GetRepo",
      { input: GetRepoRequestSchema, output: RepoSchema },
      create(GetRepoRequestSchema, { uid: repoUid }),
    );
    assert.equal(res.error?.code, grpc.status.UNAUTHENTICATED);
  });

  it("grpc-js: the spec's validation error with typed details in grpc-status-details-bin", async () => {
    const res = await grpcCall(
      grpcClient,
      "/platform.iam.v2.IdentitiesService/CreateIdentity",
      { input: CreateIdentityRequestSchema, output: IdentitySchema },
      create(CreateIdentityRequestSchema, { parent: org }),
      wharf.adminToken,
    );
    assert.equal(res.error?.code, grpc.status.INVALID_ARGUMENT);
    assert.equal(res.error?.details, 'Invalid argument: name: name must match "^[a-z0-9 ._-]{1,}$"');
    const raw = res.error?.metadata.get("grpc-status-details-bin")[0];
    assert.ok(raw instanceof Buffer, "grpc-status-details-bin present");
    const status = fromBinary(StatusSchema, raw);
    assert.equal(status.code, 3);
    const registry = createRegistry(ErrorInfoSchema, BadRequestSchema);
    const unpacked = status.details.map((d) => anyUnpack(d, registry));
    const info = unpacked.find((m) => m?.$typeName === "google.rpc.ErrorInfo") as
      | { reason: string; domain: string }
      | undefined;
    assert.deepEqual(
      { reason: info?.reason, domain: info?.domain },
      { reason: "INVALID_ARGUMENT", domain: "iam.wharf.dev" },
    );
    const bad = unpacked.find((m) => m?.$typeName === "google.rpc.BadRequest") as
      | { fieldViolations: Array<{ field: string }> }
      | undefined;
    assert.equal(bad?.fieldViolations[0]?.field, "name");
  });

  for (const [name, makeTransport] of [
    ["Connect over HTTP/1.1", (baseUrl: string) => createConnectTransport({ baseUrl, httpVersion: "1.1" })],
    ["Connect over h2c", (baseUrl: string) => createConnectTransport({ baseUrl, httpVersion: "2" })],
    ["gRPC (connect-node) over h2c", (baseUrl: string) => createGrpcTransport({ baseUrl })],
    ["gRPC-Web over HTTP/1.1", (baseUrl: string) => createGrpcWebTransport({ baseUrl, httpVersion: "1.1" })],
  ] as const) {
    it(`${name}: the same answers and errors as REST`, async () => {
      const client = createClient(ReposService, makeTransport(wharf.apiUrl));
      const headers = { authorization: `Bearer ${wharf.adminToken}` };
      const repo = await client.getRepo({ uid: repoUid }, { headers });
      assert.equal(repo.description, "d");
      const list = await client.listRepos({ uidp: { descendantsOf: org } }, { headers });
      assert.deepEqual(
        list.repos.map((r) => r.uid),
        [repoUid],
      );
      assert.equal(list.totalCount, 1n);
      const err = await client
        .getRepo({ uid: `${org}/${"0".repeat(16)}` }, { headers })
        .catch((e: unknown) => e);
      assert.ok(err instanceof ConnectError);
      assert.equal(err.code, Code.NotFound);
      const denied = await client.getRepo({ uid: repoUid }).catch((e: unknown) => e);
      assert.ok(denied instanceof ConnectError);
      assert.equal(denied.code, Code.Unauthenticated);
    });
  }
});
