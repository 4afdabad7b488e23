import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { after, before, it } from "node:test";
import type { Clock } from "../../src/core/clock.js";
import { newChildUid } from "../../src/core/uidp.js";
import { expectJson } from "../support/api-assertions.js";
import { forEachEngine } from "../support/databases.js";
import { type BuiltImage, buildImage, pushImage } from "../support/registry-push.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { runWharf } from "../support/wharf-process.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

// THE retention test of issue 35: a policy over a repo of 300 tags of mixed ages and pulls (and two
// smaller repos in a folder). Push and pull times are set through the store (no sleeping); the
// server's clock runs two hours behind the wall clock, so that `wharf gc` (wall clock) sees every
// write as older than its one-minute grace and window. The expected preview is computed here from
// the fixture's ages, independently of the code: then the run must remove exactly that, leave the
// immutable tags, write a history record and a tag-deleted event per tag, and gc must free the
// bytes of every image no kept tag names.

const HOUR = 3_600_000;
const APP_TAGS = 300;
const TAGS_PER_IMAGE = 5;
const TOOL_TAGS = 10;
const LIB_TAGS = 4;

/** The app tag `k`'s name: three kinds of names, interleaved. */
const appTagName = (k: number) => (k % 3 === 0 ? `v1.${k}` : k % 3 === 1 ? `dev-${k}` : `pr-${k}`);
/** The app tag `k`'s age when pushed: k hours and a half (so no age sits on a rule's boundary). */
const appPushAge = (k: number) => k * HOUR + HOUR / 2;
/** Every 7th app tag was pulled, (k mod 70) half-days (and half an hour) ago. */
const appPullAge = (k: number) => (k % 7 === 0 ? (k % 70) * 12 * HOUR + HOUR / 2 : undefined);

const RULES = [
  { repoPattern: "app", tagPattern: "v1.*", keepLatest: 10 },
  { tagPattern: "dev-*", keepPushedWithin: "48h" },
  { keepPulledWithin: "720h" },
  { repoPattern: "team/t*", keepLatest: 3 },
];
/** The immutability rule on the app repo. */
const IMMUTABLE = ["pr-1[0-9]"];

/**
 * The names the policy removes, worked out from the fixture's ages without the code: per repo,
 * "repo:tag" sorted as the preview sorts (repo path, then name).
 */
function expectedRemovals(): string[] {
  const out: string[] = [];
  const v1 = [...Array(APP_TAGS).keys()].filter((k) => k % 3 === 0).slice(0, 10); // youngest 10 (age grows with k)
  for (let k = 0; k < APP_TAGS; k++) {
    const name = appTagName(k);
    const byCount = v1.includes(k);
    const byPush = name.startsWith("dev-") && appPushAge(k) <= 48 * HOUR;
    const pulled = appPullAge(k);
    const byPull = pulled !== undefined && pulled <= 720 * HOUR;
    const immutable = /^pr-1[0-9]$/.test(name);
    if (!byCount && !byPush && !byPull && !immutable) out.push(`acme/app:${name}`);
  }
  for (let i = 3; i < TOOL_TAGS; i++) out.push(`acme/team/tool:t${i}`); // the 3 youngest are kept
  for (let i = 0; i < LIB_TAGS; i++) out.push(`acme/team/lib:l${i}`); // no rule matches team/lib
  return out.sort();
}

interface RetentionTagJson {
  uid: string;
  repo: string;
  name: string;
  digest: string;
  reason: string;
}

forEachEngine("retention policies: preview, run, history, events and gc", (db) => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  let databaseUrl: string | undefined;
  let org: string;
  let policy: string;
  /** Tag uid → "repo:tag", and each tag's image. */
  const tagsByUid = new Map<string, string>();
  const imageOfTag = new Map<string, BuiltImage>();
  const repoUids = new Map<string, string>();
  const images: BuiltImage[] = [];
  /** The server's clock: two hours behind the wall clock (see the header). */
  const clock: Clock = { now: () => Date.now() - 2 * HOUR };

  before(async () => {
    databaseUrl = db.engine === "postgres" ? (await db.freshOptions()).databaseUrl : undefined;
    server = await startTestServer({
      ...(databaseUrl ? { databaseUrl } : {}),
      clock,
      config: { eventsAllowLoopback: "true" },
      events: { backoffBaseMs: 40, backoffMaxMs: 200, pollMs: 50 },
      pullEvents: { flushMs: 25, pullTimesFlushMs: 50, subscribedTtlMs: 100 },
    });
    receiver = await startWebhookReceiver();
    org = await server.create("/iam/v2/groups", { name: "acme" });
    await server.create(`/events/v2/subscriptions/${org}`, { sink: receiver.url() });
    const token = await server.registryToken();

    const t0 = clock.now();
    const repoOf = async (path: string) => {
      const known = repoUids.get(path);
      if (known) return known;
      const got = await expectJson<{ repos: { uid: string; name: string }[] }>(
        await server.api(`/registry/v2/repos?uidp.descendants_of=${org}&name=${path.split("/").at(-1)}`, {
          token: server.adminToken,
        }),
      );
      const uid = got.repos[0]?.uid as string;
      repoUids.set(path, uid);
      return uid;
    };
    /** Pushes the image by digest (no tag), then points `tag` at it with push time `t0 - age`. */
    const tagAt = async (path: string, tag: string, image: BuiltImage, age: number, pullAge?: number) => {
      const repoUid = await repoOf(path);
      const row = await server.store.tags.put({
        repoUid,
        name: tag,
        digest: image.digest,
        deprecated: false,
        newUid: newChildUid(repoUid),
        now: t0 - age,
      });
      if (pullAge !== undefined) {
        await server.store.retention.recordPulls([{ repoUid, tag, time: t0 - pullAge }]);
      }
      tagsByUid.set(row.uid, `acme/${path}:${tag}`);
      imageOfTag.set(`acme/${path}:${tag}`, image);
    };
    const push = async (path: string, seed: string) => {
      const image = await pushImage(server, `acme/${path}`, buildImage(seed).digest, token, seed);
      images.push(image);
      return image;
    };

    for (let j = 0; j < APP_TAGS / TAGS_PER_IMAGE; j++) {
      const image = await push("app", `app image ${j}`);
      for (let k = j * TAGS_PER_IMAGE; k < (j + 1) * TAGS_PER_IMAGE; k++) {
        await tagAt("app", appTagName(k), image, appPushAge(k), appPullAge(k));
      }
    }
    for (let i = 0; i < TOOL_TAGS; i++) {
      await tagAt("team/tool", `t${i}`, await push("team/tool", `tool image ${i}`), i * 24 * HOUR + HOUR / 2);
    }
    for (let i = 0; i < LIB_TAGS; i++) {
      await tagAt("team/lib", `l${i}`, await push("team/lib", `lib image ${i}`), i * 24 * HOUR + HOUR / 2);
    }
    const appRepo = repoUids.get("app") as string;
    await server.create(`/registry/v2/immutabilityRules/${appRepo}`, { tagPatterns: IMMUTABLE });

    policy = await server.create(`/registry/v2/retentionPolicies/${org}`, {
      description: "keep what matters",
      rules: RULES,
    });
  });
  after(async () => {
    await server?.close();
    await receiver?.close();
  });

  const preview = async () =>
    (
      await expectJson<{ tags?: RetentionTagJson[] }>(
        await server.api(`/registry/v2/retentionPolicies/${policy}:preview`, {
          method: "POST",
          token: server.adminToken,
          body: {},
        }),
      )
    ).tags ?? [];

  it("previews exactly the tags no rule keeps, immutable ones left out, changing nothing", async () => {
    const shown = await preview();
    const names = shown.map((t) => `${t.repo}:${t.name}`);
    assert.deepEqual(names, expectedRemovals(), "the preview, in repo then tag order");
    assert.equal(names.length, 248);
    for (const tag of shown) {
      assert.equal(tagsByUid.get(tag.uid), `${tag.repo}:${tag.name}`, "uid names the tag");
      assert.equal(tag.digest, imageOfTag.get(`${tag.repo}:${tag.name}`)?.digest);
      assert.match(tag.reason, /pushed \d{4}-\d\d-\d\dT/);
    }
    // Rule 3 (no patterns) matches every tag; team/lib's tags match it alone.
    const lib = shown.find((t) => t.name === "l0");
    assert.match(
      lib?.reason ?? "",
      /^the 1 rule matching it keeps it neither by count nor by age \(pushed .*, no pull recorded\)$/,
    );
    const dev = shown.find((t) => t.name === "dev-52");
    assert.match(dev?.reason ?? "", /^the 2 rules matching it keep it neither by count nor by age/);
    // Nothing changed: a second preview is the same, and every tag is still there.
    assert.deepEqual(await preview(), shown);
    const all = await expectJson<{ totalCount: string }>(
      await server.api(`/registry/v2/tags?uidp.descendants_of=${org}&page_size=1`, {
        token: server.adminToken,
      }),
    );
    assert.equal(all.totalCount, String(APP_TAGS + TOOL_TAGS + LIB_TAGS));
  });

  it("runs: removes exactly the previewed tags, each with a history record and a tag-deleted event", async () => {
    const previewed = await preview();
    const run = await expectJson<{
      uid: string;
      deletedTags: string;
      tags: RetentionTagJson[];
      startTime: string;
      endTime: string;
    }>(
      await server.api(`/registry/v2/retentionPolicies/${policy}:run`, {
        method: "POST",
        token: server.adminToken,
        body: {},
      }),
    );
    assert.equal(run.deletedTags, String(previewed.length));
    assert.deepEqual(
      run.tags.map((t) => t.uid),
      previewed.map((t) => t.uid),
    );
    assert.ok(run.uid.startsWith(`${policy}/`));

    const left = await expectJson<{ tags: { uid: string; name: string }[] }>(
      await server.api(`/registry/v2/tags?uidp.descendants_of=${org}&page_size=1000`, {
        token: server.adminToken,
      }),
    );
    const removed = new Set(previewed.map((t) => t.uid));
    assert.deepEqual(
      left.tags.map((t) => t.uid).sort(),
      [...tagsByUid.keys()].filter((uid) => !removed.has(uid)).sort(),
      "every other tag is still there",
    );
    for (const name of ["pr-11", "pr-17"]) {
      assert.ok(
        left.tags.some((t) => t.name === name),
        `immutable ${name} survives`,
      );
    }

    for (const tag of previewed) {
      const history = await server.store.tags.history({
        repoUid: tag.uid.slice(0, tag.uid.lastIndexOf("/")),
        tagName: tag.name,
        limit: 10,
      });
      assert.deepEqual(
        history.map((h) => h.digest),
        [tag.digest, ""],
        `${tag.repo}:${tag.name}: pushed, then deleted`,
      );
    }
    const deletedEvents = await receiver.waitFor(
      (got) =>
        got.filter((d) => d.headers["ce-type"] === "dev.wharf.api.registry.tag.deleted.v1").length >=
        previewed.length,
      30_000,
    );
    assert.deepEqual(
      deletedEvents
        .filter((d) => d.headers["ce-type"] === "dev.wharf.api.registry.tag.deleted.v1")
        .map((d) => String(d.headers["ce-subject"]))
        .sort(),
      [...removed].sort(),
    );
    assert.ok(
      receiver.received.some(
        (d) => d.headers["ce-type"] === "dev.wharf.api.registry.retention_policy.created.v1",
      ),
    );

    const got = await expectJson<{ lastRun: { uid: string; deletedTags: string; tags?: unknown[] } }>(
      await server.api(`/registry/v2/retentionPolicies/${policy}`, { token: server.adminToken }),
    );
    assert.equal(got.lastRun.uid, run.uid);
    assert.equal(got.lastRun.deletedTags, String(previewed.length));
    assert.equal(got.lastRun.tags, undefined, "the summary leaves the tags out");
    assert.deepEqual(await preview(), [], "a second preview finds nothing left to remove");
  });

  it("then `wharf gc` frees the bytes of every image no kept tag names", async () => {
    const blobFiles = async () =>
      new Set(await readdir(join(server.dataDir, "blobs", "blobs", "sha256"), { recursive: true }));
    const fileOf = (digest: string) => {
      const hex = digest.slice("sha256:".length);
      return join(hex.slice(0, 2), hex);
    };
    const before = await blobFiles();
    for (const image of images) {
      for (const digest of image.blobs.keys())
        assert.ok(before.has(fileOf(digest)), "pushed blobs are files");
    }
    const gc = await runWharf(
      ["gc", "--grace", "1m", "--window", "1m", ...(databaseUrl ? [] : ["--data-dir", server.dataDir])],
      {
        ...process.env,
        ...(databaseUrl ? { WHARF_DATABASE_URL: databaseUrl, WHARF_DATA_DIR: server.dataDir } : {}),
      },
    );
    assert.equal(gc.code, 0, gc.stderr);
    const report = JSON.parse(gc.stdout) as { manifests: number; blobs: number; bytes: number };

    const keptTags = new Set(
      (
        await expectJson<{ tags: { name: string; digest: string }[] }>(
          await server.api(`/registry/v2/tags?uidp.descendants_of=${org}&page_size=1000`, {
            token: server.adminToken,
          }),
        )
      ).tags.map((t) => t.digest),
    );
    const freed = images.filter((image) => !keptTags.has(image.digest));
    assert.ok(freed.length > 0);
    assert.equal(report.manifests, freed.length, "one dead manifest per image without a kept tag");
    assert.equal(report.blobs, freed.length * 2, "its config and its layer");
    const after = await blobFiles();
    for (const image of images) {
      for (const digest of image.blobs.keys()) {
        assert.equal(after.has(fileOf(digest)), keptTags.has(image.digest), `blob of ${image.digest}`);
      }
    }
  });

  it("records pulls by tag and by digest in batches, without a write per pull", async () => {
    const token = await server.registryToken();
    const pull = (path: string, ref: string) =>
      server.registry(`/v2/acme/${path}/manifests/${ref}`, {
        token,
        headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
      });
    const toolImage = imageOfTag.get("acme/team/tool:t1") as BuiltImage;
    const before = clock.now();
    for (let i = 0; i < 20; i++) assert.equal((await pull("app", "v1.0")).status, 200);
    assert.equal((await pull("team/tool", toolImage.digest)).status, 200);
    const pulledSince = async () => {
      const all = [
        ...(await server.store.retention.candidates(repoUids.get("app") as string)),
        ...(await server.store.retention.candidates(repoUids.get("team/tool") as string)),
      ];
      return all.filter((c) => (c.pullTime ?? 0) >= before).map((c) => c.name);
    };
    const deadline = Date.now() + 10_000;
    while ((await pulledSince()).length < 2 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 25));
    assert.deepEqual((await pulledSince()).sort(), ["t1", "v1.0"]);
  });
});
