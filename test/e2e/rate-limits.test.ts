import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { type IncomingHttpHeaders, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { create, createRegistry, fromBinary, toBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { ErrorInfoSchema } from "../../src/gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../src/gen/google/rpc/status_pb.js";
import {
  GroupsService,
  type ListGroupsRequest,
  ListGroupsRequestSchema,
  ListGroupsResponseSchema,
} from "../../src/gen/platform/iam/v2/groups_pb.js";
import { writeImageLayout } from "../support/oci-layout.js";
import { runSkopeo, skopeoSkip } from "../support/skopeo.js";
import { runWharf } from "../support/wharf-process.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

// Limits of one request a minute: no token comes back while a test runs (it would take 60 s), so
// every count below is exact on a real clock.
const API_LIMIT = "1/m,burst=3";
const REGISTRY_LIMITS = "pull=1/m,burst=3;push=1/m,burst=2";
const LIST_GROUPS = "/platform.iam.v2.GroupsService/ListGroups";

/** A fresh identity uid: each test drains buckets of its own. */
const someone = () => randomBytes(20).toString("hex");

/** One HTTP/1.1 request from the local address `from` (any of 127.0.0.0/8): another client address. */
function httpFrom(
  from: string,
  url: string,
  init: { method?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: init.method ?? "GET",
      headers: init.headers,
      localAddress: from,
      agent: false,
    });
    req.on("error", reject);
    req.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.end();
  });
}

/** ListGroups over grpc-js: the outcome's code, and the response headers (trailers-only: the error's). */
function grpcListGroups(
  client: grpc.Client,
  token: string,
): Promise<{ code: number; metadata: grpc.Metadata }> {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${token}`);
  return new Promise((resolve) => {
    let headers = new grpc.Metadata();
    const call = client.makeUnaryRequest(
      LIST_GROUPS,
      (m: ListGroupsRequest) => Buffer.from(toBinary(ListGroupsRequestSchema, m)),
      (b: Buffer) => fromBinary(ListGroupsResponseSchema, b),
      create(ListGroupsRequestSchema),
      metadata,
      (err) => resolve(err ? { code: err.code, metadata: err.metadata } : { code: 0, metadata: headers }),
    );
    call.on("metadata", (m) => {
      headers = m;
    });
  });
}

const header = (metadata: grpc.Metadata, name: string) => String(metadata.get(name)[0] ?? "");

/** Asserts a sane Retry-After for a 1/m limit: whole seconds, 1 to 60. */
function assertRetryAfter(value: string | null | undefined): void {
  assert.match(value ?? "", /^\d+$/, `Retry-After ${value}`);
  const seconds = Number(value);
  assert.ok(seconds >= 1 && seconds <= 60, `Retry-After ${seconds} s`);
}

describe("rate limits (ADR 0043)", () => {
  describe("off by default", () => {
    let wharf: TestServer;
    before(async () => {
      wharf = await startTestServer();
    });
    after(() => wharf.close());

    it("answer a burst without RateLimit headers and without a 429, on both ports", async () => {
      const token = await wharf.tokenFor(someone());
      const registryToken = await wharf.registryToken(someone());
      const answers = await Promise.all([
        ...Array.from({ length: 20 }, () => wharf.api("/ping/v2/ping")),
        ...Array.from({ length: 20 }, () => wharf.api("/iam/v2/groups", { token })),
        ...Array.from({ length: 20 }, () => wharf.registry("/v2/", { token: registryToken })),
      ]);
      for (const res of answers) {
        assert.equal(res.status, 200, res.url);
        assert.equal(res.headers.get("ratelimit-limit"), null, res.url);
        assert.equal(res.headers.get("retry-after"), null, res.url);
        await res.body?.cancel();
      }
    });
  });

  describe("on: --rate-limit-api and --rate-limit-registry", () => {
    let wharf: TestServer;
    let grpcClient: grpc.Client;
    before(async () => {
      wharf = await startTestServer({
        config: { rateLimitApi: API_LIMIT, rateLimitRegistry: REGISTRY_LIMITS },
      });
      grpcClient = new grpc.Client(new URL(wharf.apiUrl).host, grpc.credentials.createInsecure());
    });
    after(async () => {
      grpcClient.close();
      await wharf.close();
    });

    it("REST: the headers count down, then 429 RESOURCE_EXHAUSTED; another identity is unaffected", async () => {
      const token = await wharf.tokenFor(someone());
      for (const remaining of ["2", "1", "0"]) {
        const res = await wharf.api("/iam/v2/groups", { token });
        assert.equal(res.status, 200);
        assert.equal(res.headers.get("ratelimit-limit"), "3");
        assert.equal(res.headers.get("ratelimit-remaining"), remaining);
        assert.match(res.headers.get("ratelimit-reset") ?? "", /^[1-9]\d*$/);
        assert.equal(res.headers.get("retry-after"), null, "only a refusal says when to retry");
        await res.body?.cancel();
      }
      const refused = await wharf.api("/iam/v2/groups", { token });
      assert.equal(refused.status, 429);
      assertRetryAfter(refused.headers.get("retry-after"));
      assert.equal(refused.headers.get("ratelimit-remaining"), "0");
      assert.equal(refused.headers.get("ratelimit-limit"), "3");
      const status = (await refused.json()) as {
        code: number;
        message: string;
        details: Array<{ "@type": string; reason?: string; domain?: string }>;
      };
      assert.equal(status.code, 8, "RESOURCE_EXHAUSTED");
      assert.match(
        status.message,
        /^Resource exhausted: rate limit of 1\/m,burst=3 per caller reached; retry in \d+ s$/,
      );
      assert.deepEqual(status.details[0], {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        reason: "RATE_LIMITED",
        domain: "iam.wharf.dev",
      });
      const logged = wharf.logLines.find((l) => l.status === 429 && l.path === "/iam/v2/groups");
      assert.equal(logged?.code, "RESOURCE_EXHAUSTED");

      const other = await wharf.api("/iam/v2/groups", { token: await wharf.tokenFor(someone()) });
      assert.equal(other.status, 200, "another identity has its own bucket");
      assert.equal(other.headers.get("ratelimit-remaining"), "2");
      await other.body?.cancel();
    });

    it("gRPC (grpc-js): the headers count down, then status 8 with ErrorInfo RATE_LIMITED", async () => {
      const token = await wharf.tokenFor(someone());
      for (const remaining of ["2", "1", "0"]) {
        const { code, metadata } = await grpcListGroups(grpcClient, token);
        assert.equal(code, grpc.status.OK);
        assert.equal(header(metadata, "ratelimit-limit"), "3");
        assert.equal(header(metadata, "ratelimit-remaining"), remaining);
      }
      const { code, metadata } = await grpcListGroups(grpcClient, token);
      assert.equal(code, grpc.status.RESOURCE_EXHAUSTED);
      assertRetryAfter(header(metadata, "retry-after"));
      assert.equal(header(metadata, "ratelimit-remaining"), "0");
      const raw = metadata.get("grpc-status-details-bin")[0];
      assert.ok(raw instanceof Buffer, "grpc-status-details-bin present");
      const info = anyUnpack(fromBinary(StatusSchema, raw).details[0]!, createRegistry(ErrorInfoSchema)) as
        | { reason: string }
        | undefined;
      assert.equal(info?.reason, "RATE_LIMITED");
      const other = await grpcListGroups(grpcClient, await wharf.tokenFor(someone()));
      assert.equal(other.code, grpc.status.OK, "another identity is unaffected");
    });

    it("one budget per identity across REST, gRPC and Connect; Connect answers resource_exhausted", async () => {
      const token = await wharf.tokenFor(someone());
      const rest = await wharf.api("/iam/v2/groups", { token });
      assert.equal(rest.headers.get("ratelimit-remaining"), "2");
      await rest.body?.cancel();
      assert.equal(header((await grpcListGroups(grpcClient, token)).metadata, "ratelimit-remaining"), "1");
      const connect = createClient(
        GroupsService,
        createConnectTransport({ baseUrl: wharf.apiUrl, httpVersion: "1.1" }),
      );
      const headers = { authorization: `Bearer ${token}` };
      let remaining: string | null = null;
      await connect.listGroups(
        {},
        {
          headers,
          onHeader: (h) => {
            remaining = h.get("ratelimit-remaining");
          },
        },
      );
      assert.equal(remaining, "0");
      const err = await connect.listGroups({}, { headers }).catch((e: unknown) => e);
      assert.ok(err instanceof ConnectError, String(err));
      assert.equal(err.code, Code.ResourceExhausted);
      assertRetryAfter(err.metadata.get("retry-after"));
      assert.equal(err.findDetails(ErrorInfoSchema)[0]?.reason, "RATE_LIMITED");
    });

    it("anonymous callers are keyed by client address; a token that does not verify counts there too", async () => {
      const ping = `${wharf.apiUrl}/ping/v2/ping`;
      for (const remaining of ["2", "1", "0"]) {
        const res = await httpFrom("127.0.0.3", ping);
        assert.equal(res.status, 200);
        assert.equal(res.headers["ratelimit-remaining"], remaining);
      }
      const refused = await httpFrom("127.0.0.3", ping);
      assert.equal(refused.status, 429);
      assertRetryAfter(refused.headers["retry-after"] as string);

      const elsewhere = await httpFrom("127.0.0.4", ping);
      assert.equal(elsewhere.status, 200, "another address has its own bucket");
      assert.equal(elsewhere.headers["ratelimit-remaining"], "2");
      const badToken = { authorization: "Bearer not.a.token" };
      const unauthenticated = await httpFrom("127.0.0.4", `${wharf.apiUrl}/iam/v2/groups`, {
        headers: badToken,
      });
      assert.equal(unauthenticated.status, 401);
      assert.equal(unauthenticated.headers["ratelimit-remaining"], "1", "charged to the address");
      await httpFrom("127.0.0.4", ping);
      const guessing = await httpFrom("127.0.0.4", `${wharf.apiUrl}/iam/v2/groups`, { headers: badToken });
      assert.equal(guessing.status, 429, "guessing tokens is limited as well");
    });

    it("registry: pull requests count down, then 429 TOOMANYREQUESTS; another identity is unaffected", async () => {
      const token = await wharf.registryToken(someone());
      const pulls: Array<[string, string]> = [
        ["GET", "/v2/"],
        ["GET", "/v2/acme/app/tags/list"],
        ["HEAD", "/v2/acme/app/manifests/latest"],
      ];
      for (const [i, [method, path]] of pulls.entries()) {
        const res = await wharf.registry(path, { method, token });
        assert.notEqual(res.status, 429, path);
        assert.equal(res.headers.get("ratelimit-limit"), "3", path);
        assert.equal(res.headers.get("ratelimit-remaining"), String(2 - i), path);
        await res.body?.cancel();
      }
      const refused = await wharf.registry("/v2/acme/app/manifests/latest", { token });
      assert.equal(refused.status, 429);
      assertRetryAfter(refused.headers.get("retry-after"));
      assert.equal(refused.headers.get("ratelimit-remaining"), "0");
      const body = (await refused.json()) as {
        errors: Array<{ code: string; message: string; detail: Record<string, unknown> }>;
      };
      assert.equal(body.errors[0]?.code, "TOOMANYREQUESTS");
      assert.match(
        body.errors[0]?.message ?? "",
        /^too many pull requests: the limit is 1\/m,burst=3 per caller/,
      );
      assert.equal(body.errors[0]?.detail.budget, "pull");
      const head = await wharf.registry("/v2/acme/app/manifests/latest", { method: "HEAD", token });
      assert.equal(head.status, 429, "HEAD is refused too, with the headers and no body");
      assertRetryAfter(head.headers.get("retry-after"));

      const other = await wharf.registry("/v2/", { token: await wharf.registryToken(someone()) });
      assert.equal(other.status, 200);
      assert.equal(other.headers.get("ratelimit-remaining"), "2");
      await other.body?.cancel();
    });

    it("registry: push and pull budgets are separate", async () => {
      const token = await wharf.registryToken(someone());
      for (let i = 0; i < 3; i++) await (await wharf.registry("/v2/", { token })).body?.cancel();
      const pullRefused = await wharf.registry("/v2/", { token });
      assert.equal(pullRefused.status, 429);
      await pullRefused.body?.cancel();
      // The pull budget is empty; pushes draw on their own (2 here).
      for (const remaining of ["1", "0"]) {
        const start = await wharf.registry("/v2/acme/app/blobs/uploads/", { method: "POST", token });
        assert.notEqual(start.status, 429);
        assert.equal(start.headers.get("ratelimit-limit"), "2");
        assert.equal(start.headers.get("ratelimit-remaining"), remaining);
        await start.body?.cancel();
      }
      const pushRefused = await wharf.registry("/v2/acme/app/manifests/v1", {
        method: "PUT",
        token,
        headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" },
        body: "{}",
      });
      assert.equal(pushRefused.status, 429);
      const body = (await pushRefused.json()) as {
        errors: Array<{ code: string; detail: { budget: string } }>;
      };
      assert.deepEqual([body.errors[0]?.code, body.errors[0]?.detail.budget], ["TOOMANYREQUESTS", "push"]);
      // Another identity's pushes are untouched by this one's.
      const other = await wharf.registryToken(someone());
      const theirs = await wharf.registry("/v2/acme/app/blobs/uploads/", { method: "POST", token: other });
      assert.equal(theirs.headers.get("ratelimit-remaining"), "1");
      await theirs.body?.cancel();
    });

    it("registry: anonymous callers are keyed by client address", async () => {
      const base = `${wharf.registryUrl}/v2/`;
      for (const remaining of ["2", "1", "0"]) {
        const res = await httpFrom("127.0.0.5", base);
        assert.equal(res.status, 401, "the challenge, counted");
        assert.equal(res.headers["ratelimit-remaining"], remaining);
      }
      const refused = await httpFrom("127.0.0.5", base);
      assert.equal(refused.status, 429);
      assert.equal(
        (JSON.parse(refused.body) as { errors: Array<{ code: string }> }).errors[0]?.code,
        "TOOMANYREQUESTS",
      );
      const elsewhere = await httpFrom("127.0.0.6", base);
      assert.equal(elsewhere.status, 401);
      assert.equal(elsewhere.headers["ratelimit-remaining"], "2");
    });
  });

  describe("behind a trusted proxy (--trust-proxy)", () => {
    let wharf: TestServer;
    before(async () => {
      wharf = await startTestServer({
        config: { rateLimitRegistry: REGISTRY_LIMITS, trustProxy: "127.0.0.7" },
      });
    });
    after(async () => {
      await wharf.close();
    });

    it("anonymous callers are keyed by the forwarded client address, and only from the trusted peer", async () => {
      const base = `${wharf.registryUrl}/v2/`;
      const via = (peer: string, client: string) =>
        httpFrom(peer, base, { headers: { "x-forwarded-for": client } });
      for (const remaining of ["2", "1", "0"])
        assert.equal((await via("127.0.0.7", "198.51.100.1")).headers["ratelimit-remaining"], remaining);
      assert.equal((await via("127.0.0.7", "198.51.100.1")).status, 429, "that client's budget is spent");
      const other = await via("127.0.0.7", "198.51.100.2");
      assert.equal(other.status, 401, "another client behind the same proxy is unaffected");
      assert.equal(other.headers["ratelimit-remaining"], "2");
      // From a peer that is no trusted proxy the header counts for nothing: one budget, the peer's.
      for (const [client, remaining] of [
        ["198.51.100.3", "2"],
        ["198.51.100.4", "1"],
        ["198.51.100.5", "0"],
      ] as const)
        assert.equal((await via("127.0.0.8", client)).headers["ratelimit-remaining"], remaining);
      assert.equal((await via("127.0.0.8", "198.51.100.6")).status, 429);
    });
  });

  describe("a real client (skopeo) under the registry's budgets", { skip: skopeoSkip }, () => {
    let wharf: TestServer;
    let work: string;
    before(async () => {
      // One push request, then none for a minute: the upload starts, its first chunk is refused.
      wharf = await startTestServer({ config: { rateLimitRegistry: "pull=1/m,burst=50;push=1/m,burst=1" } });
      await wharf.create("/iam/v2/groups", { name: "acme" });
      work = await mkdtemp(join(tmpdir(), "wharf-rate-limit-skopeo-"));
    });
    after(async () => {
      await wharf.close();
      await rm(work, { recursive: true, force: true });
    });

    it("shows the user TOOMANYREQUESTS and the limit; pulls still pass", async () => {
      const source = join(work, "source");
      await writeImageLayout(source, { tag: "v1", files: { "etc/version": "1\n" } });
      const host = new URL(wharf.registryUrl).host;
      const token = await wharf.registryToken();
      const push = await runSkopeo([
        "copy",
        "--dest-tls-verify=false",
        "--dest-creds",
        `_token:${token}`,
        `oci:${source}:v1`,
        `docker://${host}/acme/app:v1`,
      ]);
      assert.notEqual(push.code, 0);
      assert.match(
        push.stderr,
        /toomanyrequests: too many push requests: the limit is 1\/m,burst=1 per caller; retry in \d+ s/,
      );
      const refused = wharf.logLines.filter((l) => l.service === "registry" && l.error === "TOOMANYREQUESTS");
      assert.ok(refused.length >= 1);
      assert.ok(
        refused.every((l) => l.method !== "GET" && l.method !== "HEAD"),
        "only push requests were refused: skopeo's pulls (blob checks, /token) have their own budget",
      );
      const pull = await wharf.registry("/v2/", { token });
      assert.equal(pull.status, 200);
      await pull.body?.cancel();
    });
  });

  it("wharf serve refuses a bad limit with a clear message (exit 2)", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "wharf-rate-limit-"));
    try {
      const api = await runWharf(["serve", "--data-dir", dataDir, "--rate-limit-api", "fast"], {
        PATH: process.env.PATH,
      });
      assert.equal(api.code, 2);
      assert.match(
        api.stderr,
        /--rate-limit-api: "fast" is not a rate: write <requests>\/<s\|m\|h>\[,burst=<n>\]/,
      );
      const registry = await runWharf(["serve", "--data-dir", dataDir], {
        PATH: process.env.PATH,
        WHARF_RATE_LIMIT_REGISTRY: "pull=50/s;pull=10/s",
      });
      assert.equal(registry.code, 2);
      assert.match(registry.stderr, /--rate-limit-registry: the pull budget is given twice/);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
