import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import * as http2 from "node:http2";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { create, fromBinary, type MessageShape, toBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { BadRequestSchema, ErrorInfoSchema } from "../../../src/gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../../src/gen/google/rpc/status_pb.js";
import { GroupsService } from "../../../src/gen/platform/iam/v2/groups_pb.js";
import { RoleBindingsService } from "../../../src/gen/platform/iam/v2/role_bindings_pb.js";
import {
  PingRequestSchema,
  PingResponseSchema,
  PingService,
} from "../../../src/gen/platform/ping/v2/ping_pb.js";
import {
  CreateRepoRequestSchema,
  GetRepoRequestSchema,
  RepoSchema,
  ReposService,
} from "../../../src/gen/platform/registry/v2/repos_pb.js";
import { errorDetailsRegistry } from "../../../src/transport/error-mapping.js";
import {
  type ApiFixture,
  GOOD_TOKEN,
  OTHER_ORG,
  OWN_ORG,
  startApiFixture,
} from "../../support/api-test-fixture.js";
import { grpcCall } from "../../support/grpc-call.js";

const run = promisify(execFile);
const BUF = fileURLToPath(new URL("../../../node_modules/.bin/buf", import.meta.url));
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

  describe("a request message that is not valid protobuf is INVALID_ARGUMENT on every protocol", () => {
    const path = "/platform.registry.v2.ReposService/GetRepo";
    // Field 1 (uid, a string) of length 2 holding bytes that are not UTF-8; then a truncated varint.
    const malformed = [Buffer.from([0x0a, 0x02, 0xff, 0xfe]), Buffer.from([0x08, 0xff])];
    const envelope = (message: Buffer) => {
      const frame = Buffer.alloc(5 + message.length);
      frame.writeUInt32BE(message.length, 1);
      message.copy(frame, 5);
      return frame;
    };
    const post = (contentType: string, body: Buffer | string, requestId: string) =>
      fetch(`${api.baseUrl}${path}`, {
        method: "POST",
        headers: { ...headers, "content-type": contentType, "x-request-id": requestId },
        body,
      });
    const loggedCode = async (requestId: string) => {
      await new Promise((r) => setTimeout(r, 30));
      return api.logLines.find((l) => l.requestId === requestId)?.code;
    };

    it("Connect unary, binary (application/proto) and JSON: HTTP 400 invalid_argument", async () => {
      for (const [i, bytes] of malformed.entries()) {
        const res = await post("application/proto", bytes, `bad-proto-${i}`);
        const body = (await res.json()) as { code: string; message: string };
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(body.code, "invalid_argument");
        assert.match(body.message, /^Invalid argument: body: /);
        assert.equal(await loggedCode(`bad-proto-${i}`), "INVALID_ARGUMENT");
      }
      const json = await post("application/json", '{"uid": ', "bad-json");
      assert.equal(json.status, 400);
      assert.equal(((await json.json()) as { code: string }).code, "invalid_argument");
      const valid = await post(
        "application/proto",
        Buffer.from(toBinary(GetRepoRequestSchema, create(GetRepoRequestSchema, { uid: repoUid }))),
        "good-proto",
      );
      assert.equal(valid.status, 200, "a valid binary message still goes through");
      assert.equal(fromBinary(RepoSchema, Buffer.from(await valid.arrayBuffer())).uid, repoUid);
    });

    it("gRPC-Web: grpc-status 3 in the trailer frame", async () => {
      for (const [i, bytes] of malformed.entries()) {
        const res = await post("application/grpc-web+proto", envelope(bytes), `bad-grpc-web-${i}`);
        assert.equal(res.status, 200);
        const body = Buffer.from(await res.arrayBuffer());
        assert.equal(body[0], 0x80, "only the trailer frame");
        const trailer = body.subarray(5).toString();
        assert.match(trailer, /grpc-status: ?3\r\n/i);
        assert.match(decodeURIComponent(trailer), /Invalid argument: body: /);
        assert.equal(await loggedCode(`bad-grpc-web-${i}`), "INVALID_ARGUMENT");
      }
    });

    it("gRPC over HTTP/2 (the direct unary path): grpc-status 3", async () => {
      const session = http2.connect(api.baseUrl);
      try {
        for (const bytes of malformed) {
          const answer = await new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
            const stream = session.request({
              ":method": "POST",
              ":path": path,
              "content-type": "application/grpc",
              te: "trailers",
              ...headers,
            });
            let status: http2.IncomingHttpHeaders = {};
            stream.on("response", (h) => (status = h));
            stream.on("trailers", (t) => (status = { ...status, ...t }));
            stream.on("error", reject);
            stream.on("close", () => resolve(status));
            stream.resume();
            stream.end(envelope(bytes));
          });
          assert.equal(answer["grpc-status"], "3", JSON.stringify(answer));
          assert.match(String(answer["grpc-message"]), /^Invalid argument: body: /);
        }
      } finally {
        session.close();
      }
    });

    it("REST: a malformed JSON body is 400 INVALID_ARGUMENT", async () => {
      const res = await fetch(`${api.baseUrl}/registry/v2/repos/${OWN_ORG}`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: '{"name": ',
      });
      assert.equal(res.status, 400);
      assert.equal(((await res.json()) as { code: number }).code, Code.InvalidArgument);
    });
  });

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
