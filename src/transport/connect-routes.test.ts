import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { create, fromBinary, type MessageShape } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { grpcCall } from "../../test/support/grpc-call.js";
import { BadRequestSchema, ErrorInfoSchema } from "../gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../gen/google/rpc/status_pb.js";
import { GroupsService } from "../gen/platform/iam/v2/groups_pb.js";
import { RoleBindingsService } from "../gen/platform/iam/v2/role_bindings_pb.js";
import { PingRequestSchema, PingResponseSchema, PingService } from "../gen/platform/ping/v2/ping_pb.js";
import {
  CreateRepoRequestSchema,
  GetRepoRequestSchema,
  RepoSchema,
  ReposService,
} from "../gen/platform/registry/v2/repos_pb.js";
import { type ApiFixture, GOOD_TOKEN, OTHER_ORG, OWN_ORG, startApiFixture } from "./api-test-fixture.js";
import { errorDetailsRegistry } from "./error-mapping.js";

const run = promisify(execFile);
const BUF = fileURLToPath(new URL("../../node_modules/.bin/buf", import.meta.url));
const headers = { authorization: `Bearer ${GOOD_TOKEN}` };

describe("Connect, gRPC, gRPC-Web and reflection on the same port", () => {
  let api: ApiFixture;
  let grpcClient: grpc.Client;
  let repoUid: string;

  before(async () => {
    api = await startApiFixture();
    grpcClient = new grpc.Client(`127.0.0.1:${api.server.address.port}`, grpc.credentials.createInsecure());
    const client = createClient(
      ReposService,
      createConnectTransport({ baseUrl: api.baseUrl, httpVersion: "1.1" }),
    );
    repoUid = (await client.createRepo({ parent: OWN_ORG, repo: { name: "app" } }, { headers })).uid;
  });
  after(async () => {
    grpcClient.close();
    await api.close();
  });

  it("grpc-js: Ping anonymously, GetRepo with a token, UNAUTHENTICATED without", async () => {
    const ping = await grpcCall(
      grpcClient,
      "/platform.ping.v2.PingService/Ping",
      {
        input: PingRequestSchema,
        output: PingResponseSchema,
      },
      create(PingRequestSchema),
    );
    assert.equal(ping.response?.response, "pong");
    const schemas = { input: GetRepoRequestSchema, output: RepoSchema };
    const path = "/platform.registry.v2.ReposService/GetRepo";
    const repo = await grpcCall(
      grpcClient,
      path,
      schemas,
      create(GetRepoRequestSchema, { uid: repoUid }),
      GOOD_TOKEN,
    );
    assert.equal(repo.response?.name, "app");
    const anonymous = await grpcCall(
      grpcClient,
      path,
      schemas,
      create(GetRepoRequestSchema, { uid: repoUid }),
    );
    assert.equal(anonymous.error?.code, grpc.status.UNAUTHENTICATED);
    const denied = await grpcCall(
      grpcClient,
      path,
      schemas,
      create(GetRepoRequestSchema, { uid: `${OTHER_ORG}/${"a".repeat(16)}` }),
      GOOD_TOKEN,
    );
    assert.equal(denied.error?.code, grpc.status.PERMISSION_DENIED);
  });

  it("grpc-js: the exact message and typed details in grpc-status-details-bin", async () => {
    const res = await grpcCall(
      grpcClient,
      "/platform.registry.v2.ReposService/CreateRepo",
      { input: CreateRepoRequestSchema, output: RepoSchema },
      create(CreateRepoRequestSchema, { parent: OWN_ORG }),
      GOOD_TOKEN,
    );
    assert.equal(res.error?.code, grpc.status.INVALID_ARGUMENT);
    assert.equal(res.error?.details, 'Invalid argument: name: name must match "^[a-z0-9 ._-]{1,}$"');
    const raw = res.error?.metadata.get("grpc-status-details-bin")[0];
    assert.ok(raw instanceof Buffer);
    const status = fromBinary(StatusSchema, raw);
    assert.equal(status.code, Code.InvalidArgument);
    const details = status.details.map((d) => anyUnpack(d, errorDetailsRegistry));
    assert.deepEqual(
      details.map((d) => d?.$typeName),
      ["google.rpc.ErrorInfo", "google.rpc.BadRequest"],
    );
    const info = details[0] as MessageShape<typeof ErrorInfoSchema>;
    assert.deepEqual([info.reason, info.domain], ["INVALID_ARGUMENT", "registry.wharf.dev"]);
    assert.equal((details[1] as MessageShape<typeof BadRequestSchema>).fieldViolations[0]?.field, "name");
  });

  const transports: Array<[string, () => Transport]> = [
    [
      "Connect JSON over HTTP/1.1",
      () => createConnectTransport({ baseUrl: api.baseUrl, httpVersion: "1.1" }),
    ],
    [
      "Connect binary over h2c",
      () => createConnectTransport({ baseUrl: api.baseUrl, httpVersion: "2", useBinaryFormat: true }),
    ],
    ["gRPC (connect-node) over h2c", () => createGrpcTransport({ baseUrl: api.baseUrl })],
    ["gRPC-Web over HTTP/1.1", () => createGrpcWebTransport({ baseUrl: api.baseUrl, httpVersion: "1.1" })],
  ];
  for (const [name, transport] of transports) {
    it(`${name}: answers, typed errors and the request id`, async () => {
      const client = createClient(ReposService, transport());
      let requestId: string | null = null;
      const repo = await client.getRepo(
        { uid: repoUid },
        {
          headers: { ...headers, "x-request-id": `rid-${name.length}` },
          onHeader: (h) => (requestId = h.get("x-request-id")),
        },
      );
      assert.equal(repo.uid, repoUid);
      assert.equal(requestId, `rid-${name.length}`);
      assert.equal((await createClient(PingService, transport()).ping({})).response, "pong");

      const invalid = await client.createRepo({ parent: OWN_ORG }, { headers }).catch((e: unknown) => e);
      assert.ok(invalid instanceof ConnectError);
      assert.equal(invalid.code, Code.InvalidArgument);
      assert.equal(invalid.rawMessage, 'Invalid argument: name: name must match "^[a-z0-9 ._-]{1,}$"');
      assert.equal(invalid.findDetails(BadRequestSchema)[0]?.fieldViolations[0]?.field, "name");
      assert.equal(invalid.findDetails(ErrorInfoSchema)[0]?.domain, "registry.wharf.dev");

      const missing = await client
        .getRepo({ uid: `${OWN_ORG}/${"0".repeat(16)}` }, { headers })
        .catch((e) => e);
      assert.equal((missing as ConnectError).code, Code.NotFound);
      const anonymous = await client.getRepo({ uid: repoUid }).catch((e: unknown) => e);
      assert.equal((anonymous as ConnectError).code, Code.Unauthenticated);
      const internal = await client.listRepos({ name: "boom" }, { headers }).catch((e: unknown) => e);
      assert.equal((internal as ConnectError).code, Code.Internal);
      assert.doesNotMatch((internal as ConnectError).rawMessage, /10\.0\.0\.7/);
    });
  }

  it("logs one line per RPC with its protocol and code", async () => {
    const client = createClient(PingService, createGrpcTransport({ baseUrl: api.baseUrl }));
    await client.ping({}, { headers: { "x-request-id": "rpc-log-1" } });
    await new Promise((r) => setTimeout(r, 50));
    const lines = api.logLines.filter((l) => l.requestId === "rpc-log-1");
    assert.equal(lines.length, 1);
    assert.equal(lines[0]?.protocol, "grpc");
    assert.equal(lines[0]?.rpc, "platform.ping.v2.PingService/Ping");
    assert.equal(lines[0]?.code, "OK");
  });

  it("buf curl lists every method by reflection and calls Ping", async () => {
    const url = api.baseUrl;
    const listed = await run(BUF, [
      "curl",
      "--protocol",
      "grpc",
      "--http2-prior-knowledge",
      "--list-methods",
      url,
    ]);
    const methods = listed.stdout.trim().split("\n").sort();
    const expected = [ReposService, PingService, GroupsService, RoleBindingsService]
      .flatMap((s) => s.methods.map((m) => `${s.typeName}/${m.name}`))
      .concat([
        "grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        "grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
      ])
      .sort();
    assert.deepEqual(methods, expected);

    const v1alpha = await run(BUF, [
      "curl",
      "--protocol",
      "grpc",
      "--http2-prior-knowledge",
      "--reflect-protocol",
      "grpc-v1alpha",
      "--list-services",
      url,
    ]);
    assert.match(v1alpha.stdout, /platform\.registry\.v2\.ReposService/);

    const ping = await run(BUF, [
      "curl",
      "--protocol",
      "grpc",
      "--http2-prior-knowledge",
      "-d",
      "{}",
      `${url}/platform.ping.v2.PingService/Ping`,
    ]);
    assert.deepEqual(JSON.parse(ping.stdout), { response: "pong" });

    const repo = await run(BUF, [
      "curl",
      "--protocol",
      "connect",
      "-H",
      `Authorization: Bearer ${GOOD_TOKEN}`,
      "-d",
      JSON.stringify({ uid: repoUid }),
      `${url}/platform.registry.v2.ReposService/GetRepo`,
    ]);
    assert.equal((JSON.parse(repo.stdout) as { name: string }).name, "app");
  });
});
