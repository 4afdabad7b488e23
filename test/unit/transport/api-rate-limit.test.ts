import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import type { Access } from "../../../src/core/context.js";
import { DomainError, unauthenticated } from "../../../src/core/errors.js";
import { parseRateLimit } from "../../../src/core/rate-limit-spec.js";
import { bindService } from "../../../src/core/service.js";
import { createTokenBuckets } from "../../../src/core/token-buckets.js";
import { PingRequestSchema, PingService } from "../../../src/gen/platform/ping/v2/ping_pb.js";
import { GetRepoRequestSchema, ReposService } from "../../../src/gen/platform/registry/v2/repos_pb.js";
import { createApiRateLimiter, RATE_LIMITED_REASON } from "../../../src/transport/api-rate-limit.js";
import { buildMethodTable } from "../../../src/transport/method-table.js";
import { createPipeline } from "../../../src/transport/pipeline.js";

const ALICE = "a".repeat(40);
const BOB = "b".repeat(40);
const REPO = `${ALICE}/${"c".repeat(16)}`;
const TOKENS: Readonly<Record<string, string>> = { alice: ALICE, bob: BOB };

/** A pipeline limited to `limit`, with tokens `alice` and `bob`; `handled` counts handler runs. */
function fixture(limit = "1/m,burst=2") {
  let handled = 0;
  let checked = 0;
  const access: Access = {
    has: async () => true,
    require: async () => {
      checked++;
    },
    scopesWith: async () => ({ all: true, uids: [] }),
  };
  const fail = async (): Promise<never> => {
    throw new Error("not used");
  };
  const methods = new Map(
    buildMethodTable([
      bindService(PingService, {
        ping: async () => {
          handled++;
          return { response: "pong" };
        },
      }),
      bindService(ReposService, {
        getRepo: async (r) => {
          handled++;
          return { uid: r.uid };
        },
        updateRepo: fail,
        listRepos: fail,
        createRepo: fail,
        deleteRepo: fail,
        getRepoReadme: fail,
        updateRepoReadme: fail,
      }),
    ]).map((m) => [m.method.name, m]),
  );
  const clock = { now: () => 1_700_000_000_000 };
  const pipeline = createPipeline({
    authenticator: {
      authenticate: async (token) => {
        const uid = TOKENS[token];
        if (uid === undefined) throw unauthenticated("bad token");
        return { identityUid: uid, isAdmin: false, claims: {} };
      },
    },
    accessFor: () => access,
    clock,
    logger: () => {},
    rateLimit: createApiRateLimiter(createTokenBuckets(parseRateLimit(limit), clock)),
  });
  const begin = (clientAddress: string) =>
    pipeline.begin({
      httpMethod: "GET",
      path: "/x",
      protocol: "rest",
      requestIdHeader: undefined,
      clientAddress,
    });
  const getRepo = (address: string, authorization: string | undefined) => {
    const record = begin(address);
    const done = pipeline.invoke(
      record,
      methods.get("GetRepo")!,
      create(GetRepoRequestSchema, { uid: REPO }),
      authorization,
    );
    return { record, done };
  };
  const ping = (address: string) => {
    const record = begin(address);
    return {
      record,
      done: pipeline.invoke(record, methods.get("Ping")!, create(PingRequestSchema), undefined),
    };
  };
  return { getRepo, ping, handled: () => handled, checked: () => checked };
}

async function refusal(done: Promise<unknown>): Promise<DomainError> {
  const err = await done.then(
    () => assert.fail("expected a refusal"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof DomainError, String(err));
  return err;
}

describe("the API rate limit in the pipeline", () => {
  it("charges a verified caller by identity, before the scope check and the handler", async () => {
    const f = fixture();
    for (const [address, remaining] of [
      ["10.0.0.1", "1"],
      ["10.0.0.2", "0"],
    ] as const) {
      const { record, done } = f.getRepo(address, "Bearer alice");
      await done;
      assert.equal(
        record.rateLimitHeaders?.["ratelimit-remaining"],
        remaining,
        "one bucket wherever alice calls from",
      );
    }
    const { record, done } = f.getRepo("10.0.0.3", "Bearer alice");
    const err = await refusal(done);
    assert.equal(err.code, Code.ResourceExhausted);
    assert.equal(err.details.reason, RATE_LIMITED_REASON);
    assert.match(
      err.message,
      /^Resource exhausted: rate limit of 1\/m,burst=2 per caller reached; retry in 60 s$/,
    );
    assert.equal(record.rateLimitHeaders?.["retry-after"], "60");
    assert.equal(record.code, Code.ResourceExhausted);
    assert.deepEqual([f.handled(), f.checked()], [2, 2], "the refused call reached neither");
    const bob = f.getRepo("10.0.0.3", "Bearer bob");
    await bob.done;
    assert.equal(bob.record.rateLimitHeaders?.["ratelimit-remaining"], "1", "bob is unaffected");
  });

  it("charges RPCs without IAM, and tokens that do not verify, to the client address", async () => {
    const f = fixture();
    const first = f.ping("10.0.0.9");
    await first.done;
    assert.equal(first.record.rateLimitHeaders?.["ratelimit-remaining"], "1");
    const bad = f.getRepo("10.0.0.9", "Bearer mallory");
    assert.equal((await refusal(bad.done)).code, Code.Unauthenticated, "still a 401 while tokens last");
    assert.equal(bad.record.rateLimitHeaders?.["ratelimit-remaining"], "0");
    const guessing = f.getRepo("10.0.0.9", "Bearer eve");
    assert.equal((await refusal(guessing.done)).code, Code.ResourceExhausted);
    assert.equal((await refusal(f.ping("10.0.0.9").done)).code, Code.ResourceExhausted);
    const elsewhere = f.ping("10.0.0.10");
    await elsewhere.done;
    assert.equal(elsewhere.record.rateLimitHeaders?.["ratelimit-remaining"], "1");
    const alice = f.getRepo("10.0.0.9", "Bearer alice");
    await alice.done;
    assert.equal(
      alice.record.rateLimitHeaders?.["ratelimit-remaining"],
      "1",
      "identities are not the address",
    );
  });

  it("leaves records without headers when no limiter is set", async () => {
    const pipeline = createPipeline({
      authenticator: { authenticate: async () => assert.fail("not called") },
      accessFor: () => ({}) as Access,
      clock: { now: () => 0 },
      logger: () => {},
    });
    const [entry] = buildMethodTable([
      bindService(PingService, { ping: async () => ({ response: "pong" }) }),
    ]);
    const record = pipeline.begin({
      httpMethod: "GET",
      path: "/x",
      protocol: "rest",
      requestIdHeader: undefined,
    });
    await pipeline.invoke(record, entry!, create(PingRequestSchema), undefined);
    assert.equal(record.rateLimitHeaders, undefined);
    assert.equal(record.clientAddress, undefined);
  });
});
