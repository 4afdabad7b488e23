import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { expectError, expectJson } from "../support/api-assertions.js";
import { seedManifests } from "../support/seed-manifests.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const digest = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;

interface RepoList {
  repos: Array<{ uid: string; name: string }>;
  nextPageToken?: string;
  totalCount: string;
  skipped?: number;
}

describe("Registry v2 over REST", () => {
  let wharf: TestServer;
  let org: string;
  let sub: string;
  const repos = new Map<string, string>();
  before(async () => {
    wharf = await startTestServer();
    org = await wharf.create("/iam/v2/groups", { name: "acme" });
    sub = await wharf.create(`/iam/v2/groups/${org}`, { name: "team" });
    for (const [parent, name] of [
      [org, "alpine"],
      [org, "nginx"],
      [sub, "redis"],
      [org, "busybox"],
      [sub, "postgres"],
    ] as const) {
      const repo = await expectJson<{ uid: string }>(
        await wharf.api(`/registry/v2/repos/${parent}`, {
          method: "POST",
          token: wharf.adminToken,
          body: { name, description: `${name} image` },
        }),
      );
      repos.set(name, repo.uid);
    }
  });
  after(() => wharf.close());

  it("pages descendants in name desc order with tokens, totalCount and skip", async () => {
    const seen: string[] = [];
    let token = "";
    let pages = 0;
    do {
      const query = `uidp.descendants_of=${org}&page_size=2&order_by=name%20desc${token ? `&page_token=${token}` : ""}`;
      const page = await expectJson<RepoList>(
        await wharf.api(`/registry/v2/repos?${query}`, { token: wharf.adminToken }),
      );
      assert.equal(page.totalCount, "5");
      assert.ok(page.repos.length <= 2);
      seen.push(...page.repos.map((r) => r.name));
      token = page.nextPageToken ?? "";
      pages++;
    } while (token !== "");
    assert.equal(pages, 3);
    assert.deepEqual(seen, ["redis", "postgres", "nginx", "busybox", "alpine"]);

    const skipped = await expectJson<RepoList>(
      await wharf.api(`/registry/v2/repos?uidp.descendantsOf=${org}&pageSize=2&orderBy=name&skip=3`, {
        token: wharf.adminToken,
      }),
    );
    assert.deepEqual(
      skipped.repos.map((r) => r.name),
      ["postgres", "redis"],
    );
    assert.equal(skipped.skipped, 3);
  });

  it("filters by exact name and by children_of", async () => {
    const byName = await expectJson<RepoList>(
      await wharf.api(`/registry/v2/repos?uidp.descendants_of=${org}&name=redis`, {
        token: wharf.adminToken,
      }),
    );
    assert.deepEqual(
      byName.repos.map((r) => r.uid),
      [repos.get("redis")],
    );
    const children = await expectJson<RepoList>(
      await wharf.api(`/registry/v2/repos?uidp.children_of=${sub}&order_by=name`, {
        token: wharf.adminToken,
      }),
    );
    assert.deepEqual(
      children.repos.map((r) => r.name),
      ["postgres", "redis"],
    );
  });

  it("PATCHes with and without updateMask, ignoring output-only fields", async () => {
    const uid = repos.get("nginx")!;
    const before = await expectJson<Record<string, string>>(
      await wharf.api(`/registry/v2/repos/${uid}`, { token: wharf.adminToken }),
    );
    const noMask = await expectJson<Record<string, string>>(
      await wharf.api(`/registry/v2/repos/${uid}`, {
        method: "PATCH",
        token: wharf.adminToken,
        body: { description: "web server", createTime: "2001-01-01T00:00:00Z" },
      }),
    );
    assert.equal(noMask.description, "web server");
    assert.equal(noMask.name, "nginx");
    assert.equal(noMask.createTime, before.createTime, "output-only createTime ignored");

    const masked = await expectJson<Record<string, string>>(
      await wharf.api(`/registry/v2/repos/${uid}?updateMask=name`, {
        method: "PATCH",
        token: wharf.adminToken,
        body: { name: "nginx", description: "ignored because not in the mask" },
      }),
    );
    assert.equal(masked.description, "web server");

    const cleared = await expectJson<Record<string, string>>(
      await wharf.api(`/registry/v2/repos/${uid}?update_mask=*`, {
        method: "PATCH",
        token: wharf.adminToken,
        body: { name: "nginx" },
      }),
    );
    assert.equal(cleared.description, undefined, "* replaces every updatable field");

    await expectError(
      await wharf.api(`/registry/v2/repos/${uid}?updateMask=nope`, {
        method: "PATCH",
        token: wharf.adminToken,
        body: {},
      }),
      { status: 400, code: 3, field: "update_mask" },
    );
    await expectError(
      await wharf.api(`/registry/v2/repos/${uid}`, {
        method: "PATCH",
        token: wharf.adminToken,
        body: { name: "renamed" },
      }),
      { status: 400, code: 3, field: "name" },
    );
  });

  it("reads and writes a readme, refusing unsafe HTML", async () => {
    const uid = repos.get("alpine")!;
    const written = await expectJson<Record<string, string>>(
      await wharf.api(`/registry/v2/repos/${uid}/readme`, {
        method: "PATCH",
        token: wharf.adminToken,
        body: { content: "# Alpine\n\nSmall." },
      }),
    );
    assert.deepEqual(written, { uid, content: "# Alpine\n\nSmall." });
    const read = await expectJson<Record<string, string>>(
      await wharf.api(`/registry/v2/repos/${uid}/readme`, { token: wharf.adminToken }),
    );
    assert.equal(read.content, "# Alpine\n\nSmall.");
    const body = await expectError(
      await wharf.api(`/registry/v2/repos/${uid}/readme`, {
        method: "PATCH",
        token: wharf.adminToken,
        body: { content: "<script>alert(1)</script>" },
      }),
      { status: 400, code: 3, field: "content" },
    );
    assert.match(body.message, /unsafe html/);
    const still = await expectJson<Record<string, string>>(
      await wharf.api(`/registry/v2/repos/${uid}/readme`, { token: wharf.adminToken }),
    );
    assert.equal(still.content, "# Alpine\n\nSmall.", "the refused write changed nothing");
  });

  it("ListTags hides referrer, dated and epoch tags unless asked (include_*); an exact name finds one", async () => {
    const repo = repos.get("postgres")!;
    await seedManifests(wharf.store, repo, [digest(4)]);
    const sig = `sha256-${"cd".repeat(32)}.sig`;
    for (const name of ["kinds", sig, "kinds-20260101", "kinds-r3"]) {
      await expectJson(
        await wharf.api(`/registry/v2/tags/${repo}`, {
          method: "POST",
          token: wharf.adminToken,
          body: { name, digest: digest(4) },
        }),
      );
    }
    const names = async (query: string) => {
      const page = await expectJson<{ tags?: Array<{ name: string }>; totalCount: string }>(
        await wharf.api(`/registry/v2/tags?uidp.children_of=${repo}&digest=${digest(4)}${query}`, {
          token: wharf.adminToken,
        }),
      );
      assert.equal(page.totalCount, String(page.tags?.length ?? 0), "totalCount counts what is listed");
      return (page.tags ?? []).map((t) => t.name).sort();
    };
    assert.deepEqual(await names(""), ["kinds"]);
    assert.deepEqual(await names("&include_referrers=true"), ["kinds", sig].sort());
    assert.deepEqual(await names("&includeDates=true"), ["kinds", "kinds-20260101"]);
    assert.deepEqual(await names("&include_epochs=true"), ["kinds", "kinds-r3"]);
    assert.deepEqual(
      await names("&include_referrers=true&include_dates=true&include_epochs=true"),
      ["kinds", "kinds-20260101", "kinds-r3", sig].sort(),
    );
    assert.deepEqual(await names(`&name=${sig}`), [sig], "an exact name is found");
    // v1 keeps its exclude_* flags (everything shown unless excluded).
    const v1 = await expectJson<{ items: Array<{ name: string }> }>(
      await wharf.api(`/registry/v1/tags?uidp.children_of=${repo}&digest=${digest(4)}&excludeDates=true`, {
        token: wharf.adminToken,
      }),
    );
    assert.deepEqual(v1.items.map((t) => t.name).sort(), ["kinds", "kinds-r3", sig].sort());
  });

  it("creates, moves, filters, deprecates and deletes tags, recording every digest change", async () => {
    const repo = repos.get("busybox")!;
    await seedManifests(wharf.store, repo, [digest(1), digest(2), digest(3)]);
    const create = (name: string, d: string, deprecated = false) =>
      wharf.api(`/registry/v2/tags/${repo}`, {
        method: "POST",
        token: wharf.adminToken,
        body: { name, digest: d, deprecated },
      });
    const latest = await expectJson<{ uid: string; digest: string }>(await create("latest", digest(1)));
    assert.match(latest.uid, new RegExp(`^${repo}/[0-9a-f]{16}$`));
    await expectJson(await create("1.36", digest(1)));
    const moved = await expectJson<{ uid: string; digest: string }>(await create("latest", digest(2)));
    assert.equal(moved.uid, latest.uid, "moving keeps the tag");
    assert.equal(moved.digest, digest(2));
    await expectJson(await create("latest", digest(2))); // unchanged digest: no history row
    await expectJson(await create("1.35", digest(3), true));

    const all = await expectJson<{ tags: Array<{ name: string; deprecated?: boolean }>; totalCount: string }>(
      await wharf.api(`/registry/v2/tags?uidp.children_of=${repo}&order_by=name`, {
        token: wharf.adminToken,
      }),
    );
    assert.deepEqual(
      all.tags.map((t) => [t.name, t.deprecated ?? false]),
      [
        ["1.35", true],
        ["1.36", false],
        ["latest", false],
      ],
    );
    const byDigest = await expectJson<{ tags: Array<{ name: string }> }>(
      await wharf.api(`/registry/v2/tags?uidp.children_of=${repo}&digest=${digest(2)}`, {
        token: wharf.adminToken,
      }),
    );
    assert.deepEqual(
      byDigest.tags.map((t) => t.name),
      ["latest"],
    );
    let history = await wharf.store.tags.history({ repoUid: repo, tagName: "latest", limit: 1000 });
    assert.deepEqual(
      history.map((h) => h.digest),
      [digest(1), digest(2)],
    );

    await expectError(await create("bad tag", digest(1)), { status: 400, code: 3, field: "name" });
    await expectError(await create("ok", "sha256:xyz"), { status: 400, code: 3, field: "digest" });
    const missing = await expectError(await create("ok", digest(9)), { status: 400, code: 9 });
    assert.match(missing.message, /no manifest sha256:0+9; push the image first/);
    await expectJson(
      await wharf.api(`/registry/v2/tags/${latest.uid}`, { method: "DELETE", token: wharf.adminToken }),
    );
    await expectError(await wharf.api(`/registry/v2/tags/${latest.uid}`, { token: wharf.adminToken }), {
      status: 404,
      code: 5,
    });
    history = await wharf.store.tags.history({ repoUid: repo, tagName: "latest", limit: 1000 });
    assert.deepEqual(
      history.map((h) => h.digest),
      [digest(1), digest(2), ""],
      "the delete is recorded",
    );
  });

  it("answers NOT_FOUND for image metadata of a manifest the repo does not hold", async () => {
    const repo = repos.get("busybox")!;
    await expectError(
      await wharf.api(`/registry/v2/repos/${repo}/digests/${digest(99)}/architectures`, {
        token: wharf.adminToken,
      }),
      { status: 404, code: 5 },
    );
    await expectError(
      await wharf.api(`/registry/v2/repos/${repo}/digests/not-a-digest/size`, { token: wharf.adminToken }),
      { status: 400, code: 3, field: "digest" },
    );
  });

  it("answers Ping without authentication", async () => {
    const res = await wharf.api("/ping/v2/ping");
    assert.deepEqual(await expectJson(res), { response: "pong" });
  });
});
