import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { buffer } from "node:stream/consumers";
import { beforeEach, describe, it } from "node:test";
import { newChildUid } from "../../../../src/core/uidp.js";
import { parseDigest } from "../../../../src/registry/digest.js";
import { RemoteError } from "../../../../src/registry/remote/remote-registry.js";
import type { ReplicationRuleConfig } from "../../../../src/registry/replication/replication-contract.js";
import {
  createReplicationCopier,
  ReplicationHaltedError,
} from "../../../../src/registry/replication/replication-copier.js";
import { createMemoryBlobDriver } from "../../../../src/storage/blobs/memory/memory-blob-driver.js";
import type { GroupRow } from "../../../../src/storage/iam-store.js";
import { onOneEngine } from "../../../support/databases.js";
import { buildImage } from "../../../support/registry-push.js";
import {
  asManifest,
  blobBytes,
  buildIndex,
  buildSignature,
  COSIGN_SIGNATURE,
} from "../../../support/replication-images.js";
import { type LocalWharf, localWharf, progressSink } from "../../../support/replication-world.js";
import { FakeRemote } from "./fake-remote.js";

// The copier against an in-memory remote: what a run copies where, what it skips, how it retries,
// and when it stops. The real remotes (docker-registry, a second Wharf) are in
// test/e2e/replication-copy.test.ts.

const FAST = { attempts: 3, delaysMs: [5, 10], maxRetryAfterMs: 2000 };

onOneEngine("replication copier", (db) => {
  let wharf: LocalWharf;
  let org: GroupRow;
  let remote: FakeRemote;

  beforeEach(async () => {
    wharf = localWharf(await db.openFresh(), createMemoryBlobDriver());
    org = await wharf.organization("acme");
    remote = new FakeRemote();
  });

  const rule = (over: Partial<ReplicationRuleConfig> = {}): ReplicationRuleConfig => ({
    uid: newChildUid(org.uid),
    orgUid: org.uid,
    orgName: org.name,
    name: "to-mirror",
    direction: "PUSH",
    remote: { url: remote.url, username: "u", password: "p" },
    repoPattern: "",
    tagPattern: "",
    destination: "mirror",
    ...over,
  });

  async function run(r: ReplicationRuleConfig, signal = new AbortController().signal) {
    const progress = progressSink();
    const copier = createReplicationCopier({ ...wharf, remoteFor: () => remote, retry: FAST });
    await copier.run(r, progress, signal);
    return progress;
  }

  describe("PUSH", () => {
    it("copies every repo's tags, an index with its children and a signature, to <destination>/<path>", async () => {
      const a = asManifest(buildImage("a"));
      const index = buildIndex("multi", ["linux/amd64", "linux/arm64"]);
      const signature = buildSignature(a);
      const b = asManifest(buildImage("b"));
      await wharf.push("acme/app1", "v1", a);
      await wharf.push("acme/app1", "v2", index);
      await wharf.push("acme/app1", signature.digest, signature);
      await wharf.push("acme/team/app2", "latest", b);

      const progress = await run(rule());
      assert.deepEqual(progress.failures, []);
      const app1 = remote.repos.get("mirror/app1");
      assert.deepEqual([...(app1?.tags ?? [])].sort(), [
        ["v1", a.digest],
        ["v2", index.digest],
      ]);
      for (const child of index.children) assert.ok(app1?.manifests.has(child.digest), "index child copied");
      assert.equal(
        app1?.manifests.get(signature.digest)?.subject,
        a.digest,
        "signature copied with its subject",
      );
      assert.equal(remote.repos.get("mirror/team/app2")?.tags.get("latest"), b.digest);
      assert.equal(remote.repos.size, 2);
      assert.deepEqual(progress.counters, {
        copiedManifests: 6, // a, the index and its 2 children, the signature, b
        copiedBlobs: [a, index, signature].reduce((n, m) => n + m.blobs.size, 0) + b.blobs.size,
        copiedBytes: blobBytes(a, index, signature) + blobBytes(b),
        skippedBlobs: 0,
      });
      // Children before the index, blobs before their manifest, the tag last.
      const puts = remote.calls.filter((c) => c.startsWith("putManifest mirror/app1"));
      assert.ok(
        puts.indexOf(`putManifest mirror/app1 ${index.children[0]?.digest}`) <
          puts.indexOf("putManifest mirror/app1 v2"),
      );
      assert.ok(remote.closed >= 1, "the remote client is closed after the run");

      // A second run copies nothing: each tag is seen in place, with its referrers.
      remote.calls.length = 0;
      const again = await run(rule());
      assert.deepEqual(again.failures, []);
      assert.deepEqual(
        { ...again.counters, skippedBlobs: 0 },
        { copiedManifests: 0, copiedBlobs: 0, copiedBytes: 0, skippedBlobs: 0 },
      );
      assert.equal(remote.count("pushBlob") + remote.count("putManifest") + remote.count("mountBlob"), 0);
    });

    it("sends a blob a second repo shares once, mounting it from the repo this run filled", async () => {
      const shared = "a big shared base layer";
      const one = asManifest(buildImage("one", [shared, "one's own"]));
      const two = asManifest(buildImage("two", [shared, "two's own"]));
      await wharf.push("acme/one", "v1", one);
      await wharf.push("acme/two", "v1", two);
      const sharedDigest = buildImage("x", [shared]).layerDigests[0] as string;

      const progress = await run(rule());
      assert.deepEqual(progress.failures, []);
      assert.equal(
        remote.calls.filter((c) => c.startsWith("pushBlob") && c.endsWith(sharedDigest)).length,
        1,
      );
      const mounts = remote.calls.filter((c) => c.startsWith("mountBlob"));
      assert.equal(mounts.length, 1);
      assert.match(mounts[0] as string, new RegExp(`${sharedDigest} from mirror/(one|two)$`));
      assert.equal(
        progress.counters.copiedBytes,
        blobBytes(one, two),
        "the shared layer's bytes are sent once",
      );
      assert.equal(progress.counters.copiedBlobs, one.blobs.size + two.blobs.size);

      // A remote that does not mount gets the bytes again.
      remote = new FakeRemote();
      remote.mounts = false;
      const unmounted = await run(rule());
      assert.equal(
        remote.calls.filter((c) => c.startsWith("pushBlob") && c.endsWith(sharedDigest)).length,
        2,
      );
      assert.equal(unmounted.counters.copiedBytes, blobBytes(one) + blobBytes(two));
    });

    it("asks before sending: a blob the remote holds is skipped, not sent", async () => {
      const image = asManifest(buildImage("held", ["layer the remote has", "layer it lacks"]));
      await wharf.push("acme/app", "v1", image);
      const held = [...image.blobs.entries()].find(([, b]) => b.toString() === "layer the remote has");
      remote.seed("mirror/app", "old", {
        ...asManifest(buildImage("old", ["layer the remote has"])),
      });
      const progress = await run(rule());
      assert.deepEqual(progress.failures, []);
      assert.equal(progress.counters.skippedBlobs, 1);
      assert.equal(progress.counters.copiedBlobs, image.blobs.size - 1);
      assert.ok(!remote.calls.includes(`pushBlob mirror/app ${held?.[0]}`));
    });

    it("copies only the repos and tags the patterns match, never another organization's", async () => {
      const other = await wharf.organization("evil");
      await wharf.push("acme/team/a", "v1", asManifest(buildImage("ta1")));
      await wharf.push("acme/team/a", "latest", asManifest(buildImage("ta2")));
      await wharf.push("acme/team/deep/b", "v2", asManifest(buildImage("tb")));
      await wharf.push("acme/solo", "v1", asManifest(buildImage("solo")));
      await wharf.push(`${other.name}/team/a`, "v9", asManifest(buildImage("evil")));

      const progress = await run(rule({ repoPattern: "team/*", tagPattern: "v*", destination: "" }));
      assert.deepEqual(progress.failures, []);
      assert.deepEqual([...remote.repos.keys()], ["team/a"]);
      assert.deepEqual([...(remote.repos.get("team/a")?.tags.keys() ?? [])], ["v1"]);

      remote = new FakeRemote();
      await run(rule({ repoPattern: "team/**", destination: "/mirror/" }));
      assert.deepEqual([...remote.repos.keys()].sort(), ["mirror/team/a", "mirror/team/deep/b"]);
    });

    it("keeps the referrers fallback tag on a remote without the referrers API", async () => {
      const image = asManifest(buildImage("signed"));
      const first = buildSignature(image, "alice");
      const second = buildSignature(image, "bob");
      await wharf.push("acme/app", "v1", image);
      await wharf.push("acme/app", first.digest, first);
      remote.referrersApi = false;
      assert.deepEqual((await run(rule())).failures, []);
      const tag = `sha256-${image.digest.slice("sha256:".length)}`;
      const listed = async () =>
        (await remote.referrers("mirror/app", image.digest)).map((d) => d.digest).sort();
      assert.deepEqual(await listed(), [first.digest]);
      const descriptor = (await remote.referrers("mirror/app", image.digest))[0];
      assert.equal(descriptor?.artifactType, COSIGN_SIGNATURE);
      assert.ok(remote.repos.get("mirror/app")?.tags.has(tag));

      // A second signature joins the index; a run with nothing new leaves it alone.
      await wharf.push("acme/app", second.digest, second);
      assert.deepEqual((await run(rule())).failures, []);
      assert.deepEqual(await listed(), [first.digest, second.digest].sort());
      remote.calls.length = 0;
      await run(rule());
      assert.equal(remote.count("putManifest"), 0);
    });

    it("finishes a fallback tag a cut-off run left out, without sending the referrer again", async () => {
      const image = asManifest(buildImage("cut"));
      const signature = buildSignature(image);
      await wharf.push("acme/app", "v1", image);
      await wharf.push("acme/app", signature.digest, signature);
      remote.referrersApi = false;
      remote.seed("mirror/app", "v1", image);
      remote.seed("mirror/app", signature.digest, signature); // stored, but no fallback tag yet
      const progress = await run(rule());
      assert.deepEqual(progress.failures, []);
      assert.deepEqual(
        remote.calls.filter((c) => c.startsWith("putManifest") || c.startsWith("pushBlob")),
        [`putManifest mirror/app sha256-${image.digest.slice(7)}`],
      );
      assert.deepEqual(
        (await remote.referrers("mirror/app", image.digest)).map((d) => d.digest),
        [signature.digest],
      );
      assert.equal(progress.counters.copiedManifests, 0);
    });

    it("moves a tag the remote has at another digest", async () => {
      const now = asManifest(buildImage("now"));
      await wharf.push("acme/app", "v1", now);
      remote.seed("mirror/app", "v1", asManifest(buildImage("before")));
      const progress = await run(rule());
      assert.deepEqual(progress.failures, []);
      assert.equal(remote.repos.get("mirror/app")?.tags.get("v1"), now.digest);
      assert.equal(progress.counters.copiedManifests, 1);
    });
  });

  describe("PULL", () => {
    it("mirrors a literal remote path into <org>/<destination>/<path>, recorded like a push", async () => {
      const single = asManifest(buildImage("alpine-3.19"));
      const index = buildIndex("alpine-3.20", ["linux/amd64", "linux/arm64"], "shared base");
      const signature = buildSignature(single);
      remote.seed("library/alpine", "3.19", single);
      remote.seed("library/alpine", "3.20", index);
      remote.seed("library/alpine", signature.digest, signature);
      const r = rule({ direction: "PULL", repoPattern: "library/alpine", destination: "hub" });

      const progress = await run(r);
      assert.deepEqual(progress.failures, []);
      assert.equal(remote.count("catalog"), 0, "a literal path needs no catalog");
      const resolved = await wharf.resolver.resolve("acme/hub/library/alpine");
      const repo = resolved.repo ?? assert.fail("repo not created");
      assert.equal(await wharf.content.tagDigest(repo.uid, "3.19"), single.digest);
      assert.equal(await wharf.content.tagDigest(repo.uid, "3.20"), index.digest);
      for (const child of index.children) assert.ok(await wharf.store.manifests.has(repo.uid, child.digest));
      const referrers = await wharf.content.referrers(repo.uid, single.digest, undefined);
      assert.deepEqual(
        referrers.map((x) => [x.digest, x.artifactType]),
        [[signature.digest, COSIGN_SIGNATURE]],
      );
      // The bytes are there and right.
      for (const [digest, bytes] of single.blobs) {
        const sink = new PassThrough();
        const read = buffer(sink);
        await wharf.content.pipeBlob(parseDigest(digest), sink);
        assert.deepEqual(await read, bytes);
      }
      // Tag history, push events and the created folders name the rule.
      const history = await wharf.store.tags.history({ repoUid: repo.uid, tagName: "3.20", limit: 10 });
      assert.deepEqual(
        history.map((h) => h.digest),
        [index.digest],
      );
      const tagged = wharf.pushes.filter((p) => p.body.tag !== undefined);
      assert.deepEqual(tagged.map((p) => `${p.body.repository}:${p.body.tag}`).sort(), [
        "acme/hub/library/alpine:3.19",
        "acme/hub/library/alpine:3.20",
      ]);
      for (const p of wharf.pushes) {
        assert.equal(p.actor.subject, r.uid);
        assert.match(String(p.body.user_agent), /^wharf-replication/);
      }
      assert.deepEqual(
        wharf.changes.map((c) => `${c.resource}.${c.verb} by ${c.actor === r.uid ? "rule" : c.actor}`),
        ["group.created by rule", "group.created by rule", "repo.created by rule"],
      );
      assert.equal(progress.counters.copiedManifests, 5);
      assert.equal(progress.counters.copiedBytes, blobBytes(single, index, signature));

      // The remote moves 3.19; the next run moves the tag, and the history has both.
      const moved = asManifest(buildImage("alpine-3.19.1"));
      remote.seed("library/alpine", "3.19", moved);
      const second = await run(r);
      assert.deepEqual(second.failures, []);
      assert.equal(second.counters.copiedManifests, 1);
      const history319 = await wharf.store.tags.history({ repoUid: repo.uid, tagName: "3.19", limit: 10 });
      assert.deepEqual(
        history319.map((h) => h.digest),
        [single.digest, moved.digest],
      );
      const third = await run(r);
      assert.deepEqual(third.counters, {
        copiedManifests: 0,
        copiedBlobs: 0,
        copiedBytes: 0,
        skippedBlobs: 0,
      });
    });

    it("matches a glob against the remote's catalog", async () => {
      remote.seed("team/a", "v1", asManifest(buildImage("a")));
      remote.seed("team/b", "v1", asManifest(buildImage("b")));
      remote.seed("other/c", "v1", asManifest(buildImage("c")));
      const progress = await run(rule({ direction: "PULL", repoPattern: "team/*", destination: "" }));
      assert.deepEqual(progress.failures, []);
      assert.equal(remote.count("catalog"), 1);
      assert.ok((await wharf.resolver.resolve("acme/team/a")).repo);
      assert.ok((await wharf.resolver.resolve("acme/team/b")).repo);
      assert.equal((await wharf.resolver.resolve("acme/other/c")).repo, undefined);
    });

    it("stops with one failure when the remote offers no catalog for a glob", async () => {
      remote.catalogOffered = false;
      remote.seed("team/a", "v1", asManifest(buildImage("a")));
      const progress = progressSink();
      const copier = createReplicationCopier({ ...wharf, remoteFor: () => remote, retry: FAST });
      await assert.rejects(
        copier.run(
          rule({ direction: "PULL", repoPattern: "team/*" }),
          progress,
          new AbortController().signal,
        ),
        ReplicationHaltedError,
      );
      assert.deepEqual(progress.failures, [
        { reference: remote.url, message: "https://remote.test: catalog access denied" },
      ]);
      assert.equal(remote.count("catalog"), 1, "a refusal is not retried");
    });

    it("records a remote path that cannot be a Wharf repository, and copies the rest", async () => {
      remote.seed("Bad_Upper/x", "v1", asManifest(buildImage("bad")));
      remote.seed("good/x", "v1", asManifest(buildImage("good")));
      const progress = await run(rule({ direction: "PULL", repoPattern: "*/x", destination: "" }));
      assert.deepEqual(
        progress.failures.map((f) => f.reference),
        ["Bad_Upper/x:v1"],
      );
      assert.match(progress.failures[0]?.message ?? "", /not a repository path/);
      assert.ok((await wharf.resolver.resolve("acme/good/x")).repo);
    });

    it("writes nowhere but under the rule's own organization, whatever its name says", async () => {
      const evil = await wharf.organization("evil");
      remote.seed("x/app", "v1", asManifest(buildImage("foreign")));
      // A rule of `evil` that names acme (a renamed or forged config) cannot write into acme.
      const progress = await run({ ...rule({ direction: "PULL", repoPattern: "x/app" }), orgUid: evil.uid });
      assert.deepEqual(progress.failures, [
        { reference: "x/app:v1", message: "acme/mirror/x/app is not under organization acme" },
      ]);
      assert.equal((await wharf.resolver.resolve("acme/mirror/x/app")).repo, undefined);
      // Nor read from it: a PUSH of `evil` named acme sees none of acme's repos.
      await wharf.push("acme/secret", "v1", asManifest(buildImage("secret")));
      await wharf.push("evil/secret", "v1", asManifest(buildImage("evil's own")));
      const pushed = await run({ ...rule(), orgUid: evil.uid });
      assert.deepEqual(pushed.failures, []);
      assert.equal(remote.repos.has("mirror/secret"), false);
    });

    it("does not write into an upstream's namespace (the pull-through cache's)", async () => {
      remote.seed("x/app", "v1", asManifest(buildImage("cached")));
      const progress = progressSink();
      const copier = createReplicationCopier({
        ...wharf,
        upstreams: {
          lookup: async (name) =>
            name.startsWith("acme/hub/")
              ? {
                  upstream: {
                    ...{ uid: "u", orgUid: org.uid, orgName: "acme", name: "hub", url: "https://hub.test" },
                    ...{ username: "", password: "", tagTtlMs: 1, updateTime: 1 },
                  },
                  path: name.slice("acme/hub/".length),
                }
              : undefined,
        },
        remoteFor: () => remote,
        retry: FAST,
      });
      await copier.run(
        rule({ direction: "PULL", repoPattern: "x/app", destination: "hub" }),
        progress,
        new AbortController().signal,
      );
      assert.deepEqual(progress.failures, [
        {
          reference: "x/app:v1",
          message: "acme/hub/x/app is in the namespace of upstream hub, which only its cache writes",
        },
      ]);
      assert.equal((await wharf.resolver.resolve("acme/hub/x/app")).repo, undefined);
    });
  });

  describe("failures", () => {
    it("retries a transient failure and succeeds", async () => {
      await wharf.push("acme/app", "v1", asManifest(buildImage("flaky")));
      let failures = 2;
      remote.failWith = (op) =>
        op === "pushBlob" && failures-- > 0 ? new RemoteError("unreachable", "connection reset") : undefined;
      const progress = await run(rule());
      assert.deepEqual(progress.failures, []);
      assert.ok(remote.repos.get("mirror/app")?.tags.has("v1"));
    });

    it("waits a rate limit's Retry-After before the next attempt", async () => {
      await wharf.push("acme/app", "v1", asManifest(buildImage("limited")));
      const times: number[] = [];
      remote.failWith = (op) => {
        if (op !== "putManifest") return undefined;
        times.push(performance.now());
        return times.length === 1 ? new RemoteError("rate-limited", "slow down", 429, 300) : undefined;
      };
      const progress = await run(rule());
      assert.deepEqual(progress.failures, []);
      assert.equal(times.length, 2);
      assert.ok(
        (times[1] as number) - (times[0] as number) >= 290,
        `retried after ${(times[1] as number) - (times[0] as number)} ms`,
      );
    });

    it("records a tag that keeps failing with the remote's message, and goes on with the others", async () => {
      await wharf.push("acme/app", "v1", asManifest(buildImage("refused")));
      await wharf.push("acme/app", "v2", asManifest(buildImage("fine")));
      await wharf.push("acme/down", "v1", asManifest(buildImage("down")));
      remote.failWith = (op, repo, ref) => {
        if (op === "putManifest" && ref === "v1" && repo === "mirror/app") {
          return new RemoteError(
            "denied",
            "https://remote.test: denied: quota exceeded for organization",
            403,
          );
        }
        if (op === "hasBlob" && repo === "mirror/down")
          return new RemoteError("unreachable", "https://remote.test: timeout");
        return undefined;
      };
      const progress = await run(rule());
      assert.deepEqual(
        progress.failures.sort((x, y) => x.reference.localeCompare(y.reference)),
        [
          {
            reference: "acme/app:v1",
            message: "https://remote.test: denied: quota exceeded for organization",
          },
          { reference: "acme/down:v1", message: "https://remote.test: timeout" },
        ],
      );
      assert.equal(
        remote.calls.filter((c) => c === "putManifest mirror/app v1").length,
        1,
        "a refusal is not retried",
      );
      const heads = remote.calls.filter((c) => c.startsWith("hasBlob mirror/down"));
      for (const head of new Set(heads)) {
        assert.equal(heads.filter((h) => h === head).length, 3, "a transient failure is tried 3 times");
      }
      assert.equal(remote.repos.get("mirror/app")?.tags.has("v2"), true);
    });

    it("stops at a refused first request with one failure, without trying every tag", async () => {
      for (const tag of ["v1", "v2", "v3"]) await wharf.push("acme/app", tag, asManifest(buildImage(tag)));
      remote.failWith = () =>
        new RemoteError("unauthorized", "https://remote.test: unauthorized: bad credentials", 401);
      const progress = progressSink();
      const copier = createReplicationCopier({ ...wharf, remoteFor: () => remote, retry: FAST });
      await assert.rejects(copier.run(rule(), progress, new AbortController().signal), (err: unknown) => {
        assert.ok(err instanceof ReplicationHaltedError);
        assert.equal(err.recorded, true);
        return true;
      });
      assert.deepEqual(progress.failures, [
        { reference: remote.url, message: "https://remote.test: unauthorized: bad credentials" },
      ]);
      assert.equal(remote.calls.length, 1);
      assert.equal(remote.closed, 1);
    });

    it("stops after the first tag when the remote cannot be reached at all", async () => {
      for (const tag of ["v1", "v2", "v3"]) await wharf.push("acme/app", tag, asManifest(buildImage(tag)));
      remote.failWith = () => new RemoteError("unreachable", "https://remote.test: connection refused");
      const progress = progressSink();
      const copier = createReplicationCopier({ ...wharf, remoteFor: () => remote, retry: FAST });
      await assert.rejects(
        copier.run(rule(), progress, new AbortController().signal),
        ReplicationHaltedError,
      );
      assert.deepEqual(progress.failures, [
        { reference: remote.url, message: "https://remote.test: connection refused" },
      ]);
      assert.equal(remote.calls.length, 3, "the first tag's 3 attempts, then nothing");
    });

    it("a run cut off midway is finished by the next one without sending again what was sent", async () => {
      const images = ["v1", "v2", "v3"].map((tag) =>
        asManifest(buildImage(`resume-${tag}`, [`layer ${tag}`, "common"])),
      );
      for (const [i, image] of images.entries()) await wharf.push("acme/app", `v${i + 1}`, image);
      const controller = new AbortController();
      let pushes = 0;
      remote.failWith = (op) => {
        if (op === "pushBlob" && ++pushes === 4) controller.abort(new Error("killed"));
        return undefined;
      };
      const copier = createReplicationCopier({ ...wharf, remoteFor: () => remote, retry: FAST });
      await assert.rejects(copier.run(rule(), progressSink(), controller.signal), /killed/);
      // What the remote holds; a transfer the abort cut off is not there, and is sent again.
      const sentBefore = new Set(remote.repos.get("mirror/app")?.blobs);
      assert.ok(sentBefore.size >= 2, `${sentBefore.size} blobs stored before the cut`);

      remote.failWith = undefined;
      remote.calls.length = 0;
      const progress = await run(rule());
      assert.deepEqual(progress.failures, []);
      const sentAfter = remote.calls
        .filter((c) => c.startsWith("pushBlob"))
        .map((c) => c.split(" ")[2] ?? "");
      for (const digest of sentAfter) assert.ok(!sentBefore.has(digest), `${digest} sent twice`);
      for (const [i, image] of images.entries()) {
        assert.equal(remote.repos.get("mirror/app")?.tags.get(`v${i + 1}`), image.digest);
      }
      assert.ok(progress.counters.skippedBlobs >= sentBefore.size - 1);
    });

    it("aborts promptly with the signal's reason, recording nothing", async () => {
      for (const tag of ["v1", "v2"]) await wharf.push("acme/app", tag, asManifest(buildImage(tag)));
      const controller = new AbortController();
      const reason = new Error("run cancelled");
      remote.failWith = (op) => {
        if (op === "pushBlob") controller.abort(reason);
        return op === "pushBlob" ? new RemoteError("unreachable", "cut") : undefined;
      };
      const progress = progressSink();
      const copier = createReplicationCopier({
        ...wharf,
        remoteFor: () => remote,
        retry: { ...FAST, delaysMs: [60_000] },
      });
      const started = performance.now();
      await assert.rejects(copier.run(rule(), progress, controller.signal), (err) => err === reason);
      assert.ok(performance.now() - started < 5000);
      assert.deepEqual(progress.failures, []);
      assert.equal(remote.count("putManifest"), 0);
    });
  });
});
