import assert from "node:assert/strict";
import { after, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { createIssuer } from "../../../src/auth/issuer.js";
import { TOKEN_ACCEPTANCE_HORIZON_MS } from "../../../src/auth/token-limits.js";
import {
  type RevocationWatch,
  revokeTokens,
  watchTokenRevocations,
} from "../../../src/auth/token-revocations.js";
import { createTokenVerifier } from "../../../src/auth/token-verifier.js";
import { DomainError } from "../../../src/core/errors.js";
import { newRootUid } from "../../../src/core/uidp.js";
import { forEachEngine } from "../../support/databases.js";

const T0 = Date.parse("2026-01-28T12:00:00.250Z");
const API = "http://127.0.0.1:8080";
const HOUR = 3600_000;

function steppingClock() {
  let t = T0;
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

function rejectsInvalid(promise: Promise<unknown>, message: RegExp): Promise<void> {
  return assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof DomainError, String(err));
    assert.equal(err.code, Code.InvalidArgument);
    assert.match(err.message, message);
    return true;
  });
}

forEachEngine("token revocations", (db) => {
  const watches: RevocationWatch[] = [];
  after(() => {
    for (const w of watches) w.close();
  });
  const watch = (
    revocations: Parameters<typeof watchTokenRevocations>[0]["revocations"],
    clock = steppingClock(),
  ) => {
    const w = watchTokenRevocations({ revocations, clock, pollIntervalMs: 60_000 });
    watches.push(w);
    return w;
  };

  it("a subject's revocation covers its tokens up to the end of the revocation's second, no one else's", async () => {
    const options = await db.freshOptions();
    const store = await db.open(options);
    const other = await db.openFresh(); // an unrelated database: must see nothing
    const alice = newRootUid();
    const bob = newRootUid();
    const row = await revokeTokens(
      store.tokenRevocations,
      { subject: alice },
      { now: T0, acceptedForMs: HOUR },
    );
    const endOfSecond = Date.parse("2026-01-28T12:00:01.000Z");
    assert.equal(row.issuedBefore, endOfSecond);
    assert.equal(row.expireTime, endOfSecond + HOUR);
    assert.equal(row.subject, alice);

    // Another process: its own handle and watch on the same database.
    const w = watch((await db.open(options)).tokenRevocations);
    await w.refresh();
    assert.equal(w.isRevoked(alice, T0 - 1000), true, "issued before");
    assert.equal(w.isRevoked(alice, endOfSecond - 1000), true, "issued in the revocation's second");
    assert.equal(w.isRevoked(alice, endOfSecond), false, "issued from the next second on");
    assert.equal(w.isRevoked(bob, T0 - 1000), false, "another subject");
    const elsewhere = watch(other.tokenRevocations);
    await elsewhere.refresh();
    assert.equal(elsewhere.isRevoked(alice, T0 - 1000), false);
  });

  it("--issued-before revokes every subject's older tokens; a later subject revocation raises one cutoff", async () => {
    const store = await db.openFresh();
    const w = watch(store.tokenRevocations);
    const alice = newRootUid();
    const cutoff = T0 - HOUR;
    await revokeTokens(
      store.tokenRevocations,
      { issuedBefore: cutoff },
      { now: T0, acceptedForMs: 2 * HOUR },
    );
    assert.equal(w.isRevoked(alice, cutoff - 1000), false, "not read yet: the watch polls");
    await w.refresh();
    assert.equal(w.isRevoked(alice, cutoff - 1000), true);
    assert.equal(w.isRevoked("anonymous", cutoff - 1), true, "every subject");
    assert.equal(w.isRevoked(alice, cutoff), false, "iat < TIME only");
    await revokeTokens(
      store.tokenRevocations,
      { subject: alice, issuedBefore: T0 },
      { now: T0, acceptedForMs: HOUR },
    );
    await w.refresh();
    assert.equal(w.isRevoked(alice, T0 - 1000), true);
    assert.equal(w.isRevoked(newRootUid(), T0 - 1000), false);
  });

  it("refuses nothing-at-all, an empty subject and a future cutoff, storing nothing", async () => {
    const store = await db.openFresh();
    const opts = { now: T0, acceptedForMs: HOUR };
    await rejectsInvalid(revokeTokens(store.tokenRevocations, {}, opts), /give a subject/);
    await rejectsInvalid(revokeTokens(store.tokenRevocations, { subject: " " }, opts), /must not be empty/);
    await rejectsInvalid(
      revokeTokens(store.tokenRevocations, { issuedBefore: T0 + 5000 }, opts),
      /must not be in the future/,
    );
    assert.deepEqual(await store.tokenRevocations.listLive(0), []);
  });

  it("version changes on every insert and prune; expired rows are pruned by the next revocation", async () => {
    const store = await db.openFresh();
    const r = store.tokenRevocations;
    const empty = await r.version();
    const first = await revokeTokens(r, { issuedBefore: T0 - 1000 }, { now: T0, acceptedForMs: HOUR });
    const one = await r.version();
    assert.notEqual(one, empty);
    await revokeTokens(r, { subject: "x" }, { now: T0 + 2 * HOUR, acceptedForMs: HOUR });
    const remaining = await r.listLive(0);
    assert.equal(remaining.length, 1, "the first expired and was pruned");
    assert.notEqual(remaining[0]?.id, first.id);
    assert.ok((remaining[0]?.id ?? 0) > first.id, "ids only grow");
    assert.notEqual(await r.version(), one);
    assert.deepEqual(await r.listLive(T0 + 10 * HOUR), [], "listLive leaves out expired rows");
  });

  it("the verifier refuses revoked tokens, cached or not, and accepts tokens minted afterwards", async () => {
    const store = await db.openFresh();
    const clock = steppingClock();
    const issuer = createIssuer({ store, issuerUrl: API, clock });
    const revocations = watch(store.tokenRevocations, clock);
    const verifier = createTokenVerifier({ issuer, audience: API, clock, revocations });
    const alice = newRootUid();
    const mint = () => issuer.mint({ subject: alice, audience: API, ttlSeconds: 600 });
    const cached = await mint();
    await verifier.authenticate(cached);
    const uncached = await mint();
    await revokeTokens(
      store.tokenRevocations,
      { subject: alice },
      { now: clock.now(), acceptedForMs: TOKEN_ACCEPTANCE_HORIZON_MS },
    );
    await revocations.refresh();
    await assert.rejects(verifier.authenticate(cached), /Unauthenticated: token has been revoked/);
    await assert.rejects(verifier.authenticate(uncached), /token has been revoked/);
    assert.equal(verifier.stats().cacheHits, 1, "the cached one was refused from the cache");
    clock.advance(1000);
    const fresh = await mint();
    assert.equal((await verifier.authenticate(fresh)).identityUid, alice);
  });

  it("a verifier refuses a clock tolerance beyond the acceptance bound", () => {
    assert.throws(
      () =>
        createTokenVerifier({
          keys: {} as never,
          issuerUrl: API,
          audience: API,
          clock: steppingClock(),
          clockToleranceSeconds: 86_401,
        }),
      /clockToleranceSeconds must be 0 to 86400/,
    );
  });
});

it("close waits for a poll in flight: the store is read no more once it resolves", async () => {
  const reads: string[] = [];
  let answerVersion: () => void = () => {};
  const versionAnswered = new Promise<void>((resolve) => {
    answerVersion = resolve;
  });
  const w = watchTokenRevocations({
    revocations: {
      insert: () => Promise.reject(new Error("not used")),
      prune: async () => 0,
      async version() {
        reads.push("version");
        await versionAnswered;
        return "changed";
      },
      async listLive() {
        reads.push("listLive");
        return [];
      },
    },
    clock: steppingClock(),
    pollIntervalMs: 60_000,
  });
  const polled = w.refresh();
  const closed = (async () => {
    await w.close();
    reads.push("closed");
  })();
  answerVersion();
  await Promise.all([polled, closed]);
  // The poll's second read (the rows, the version having changed) comes before close resolves,
  // not after (when the server has closed the store).
  assert.deepEqual(reads, ["version", "listLive", "closed"]);
});
