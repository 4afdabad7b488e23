import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { expectError, expectJson } from "../support/api-assertions.js";
import { forEachEngine } from "../support/databases.js";
import { personWithRole } from "../support/registered-person.js";
import { type BuiltImage, buildImage, pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

interface SearchAnswer {
  repos: { repo: { uid: string; name: string }; repoPath: string }[];
  tags: { tag: { name: string; digest: string }; repoUid: string; repoPath: string }[];
  images: { digest: string; repoUid: string; repoPath: string; tags: string[] }[];
  truncated?: boolean;
}

forEachEngine("search: SearchService.Search over REST (repos, tags, digest prefixes)", (db) => {
  let wharf: TestServer;
  let acme: string;
  let webApp: string;
  let globexApp: string;
  let ownerA: string;
  let ownerB: string;
  let image: BuiltImage;

  const search = async (query: string, token = wharf.adminToken, pageSize?: number) => {
    const params = new URLSearchParams({ query });
    if (pageSize !== undefined) params.set("page_size", String(pageSize));
    const answer = await expectJson<Partial<SearchAnswer>>(
      await wharf.api(`/registry/v2/search?${params}`, { token }),
    );
    // proto3 JSON leaves out empty lists and false.
    return { repos: [], tags: [], images: [], truncated: false, ...answer } as SearchAnswer;
  };
  const repoPaths = (a: SearchAnswer) => a.repos.map((r) => r.repoPath);
  const tagRefs = (a: SearchAnswer) => a.tags.map((t) => `${t.repoPath}:${t.tag.name}`);

  before(async () => {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    wharf = await startTestServer(databaseUrl ? { databaseUrl } : {});
    acme = await wharf.create("/iam/v2/groups", { name: "acme" });
    const team = await wharf.create(`/iam/v2/groups/${acme}`, { name: "team" });
    webApp = await wharf.create(`/registry/v2/repos/${team}`, { name: "web-app" });
    await wharf.create(`/registry/v2/repos/${acme}`, { name: "ab_cd" });
    await wharf.create(`/registry/v2/repos/${acme}`, { name: "abxcd" });
    const globex = await wharf.create("/iam/v2/groups", { name: "globex" });
    globexApp = await wharf.create(`/registry/v2/repos/${globex}`, { name: "web-app" });
    ownerA = (await personWithRole(wharf, "alice", acme, "owner")).token;
    ownerB = (await personWithRole(wharf, "bob", globex, "owner")).token;

    const push = await wharf.registryToken();
    image = buildImage("search-image");
    for (const tag of ["v1.0", "rel_1", "Latest"])
      await pushImage(wharf, "acme/team/web-app", tag, push, image);
    await pushImage(wharf, "acme/team/web-app", "relx1", push, "another-image");
    await pushImage(wharf, "globex/web-app", "v1.0", push, image);
  });
  after(() => wharf?.close());

  it("finds repos by a case-insensitive substring of their image path, folders included", async () => {
    assert.deepEqual(repoPaths(await search("TEAM/WEB")), ["acme/team/web-app"]);
    const answer = await search("web-app");
    assert.deepEqual(repoPaths(answer), ["acme/team/web-app", "globex/web-app"]);
    assert.equal(answer.repos[0]?.repo.uid, webApp);
    assert.equal(answer.repos[0]?.repo.name, "web-app");
  });

  it("finds tags by name across repos, with their repo's uid and path", async () => {
    const answer = await search("V1.");
    assert.deepEqual(tagRefs(answer), ["acme/team/web-app:v1.0", "globex/web-app:v1.0"]);
    assert.equal(answer.tags[0]?.repoUid, webApp);
    assert.equal(answer.tags[0]?.tag.digest, image.digest);
    assert.deepEqual(tagRefs(await search("latest")), ["acme/team/web-app:Latest"]);
  });

  it("finds images by a digest prefix of at least 4 hex digits, with or without sha256:, any case", async () => {
    const hex = image.digest.slice("sha256:".length);
    for (const query of [
      hex.slice(0, 12),
      `sha256:${hex.slice(0, 12)}`,
      hex.slice(0, 12).toUpperCase(),
      image.digest,
    ]) {
      const answer = await search(query);
      assert.deepEqual(
        answer.images.map((i) => [i.digest, i.repoPath, i.tags]),
        [
          [image.digest, "acme/team/web-app", ["Latest", "rel_1", "v1.0"]],
          [image.digest, "globex/web-app", ["v1.0"]],
        ],
        query,
      );
      assert.equal(answer.images[0]?.repoUid, webApp);
    }
    assert.deepEqual((await search(hex.slice(0, 3))).images, [], "3 hex digits are not a digest prefix");
    assert.deepEqual((await search("sha256:zzzz")).images, []);
  });

  it("matches %, _ and \\ literally", async () => {
    assert.deepEqual(repoPaths(await search("b_c")), ["acme/ab_cd"]);
    assert.deepEqual(tagRefs(await search("l_1")), ["acme/team/web-app:rel_1"]);
    for (const query of ["%", "_%", "\\"]) {
      const answer = await search(query);
      assert.deepEqual([repoPaths(answer), tagRefs(answer)], [[], []], query);
    }
    // `_` alone matches the names that hold one, not every name.
    assert.deepEqual(repoPaths(await search("_")), ["acme/ab_cd"]);
    assert.deepEqual(tagRefs(await search("_")), ["acme/team/web-app:rel_1"]);
  });

  it("answers only repos the caller may list: another organization's are never returned", async () => {
    const hex = image.digest.slice("sha256:".length, "sha256:".length + 10);
    const asA = await search("web-app", ownerA);
    assert.deepEqual(repoPaths(asA), ["acme/team/web-app"]);
    assert.deepEqual(tagRefs(await search("v1.0", ownerA)), ["acme/team/web-app:v1.0"]);
    assert.deepEqual(
      (await search(hex, ownerA)).images.map((i) => i.repoUid),
      [webApp],
    );
    const asB = await search("web-app", ownerB);
    assert.deepEqual(repoPaths(asB), ["globex/web-app"]);
    assert.deepEqual(
      (await search(hex, ownerB)).images.map((i) => i.repoUid),
      [globexApp],
    );
    assert.deepEqual(repoPaths(await search("acme", ownerB)), []);
    assert.deepEqual(tagRefs(await search("rel", ownerB)), []);
  });

  it("refuses an unauthenticated caller", async () => {
    await expectError(await wharf.api("/registry/v2/search?query=web"), { status: 401, code: 16 });
  });

  it("refuses an empty or too long query naming query, and a negative page_size", async () => {
    for (const query of ["", "   "]) {
      await expectError(
        await wharf.api(`/registry/v2/search?query=${encodeURIComponent(query)}`, {
          token: wharf.adminToken,
        }),
        { status: 400, code: 3, reason: "INVALID_ARGUMENT", field: "query" },
      );
    }
    await expectError(await wharf.api("/registry/v2/search", { token: wharf.adminToken }), {
      status: 400,
      code: 3,
      field: "query",
    });
    await expectError(
      await wharf.api(`/registry/v2/search?query=${"a".repeat(256)}`, { token: wharf.adminToken }),
      { status: 400, code: 3, reason: "INVALID_ARGUMENT", field: "query" },
    );
    await expectError(
      await wharf.api("/registry/v2/search?query=web&page_size=-1", { token: wharf.adminToken }),
      { status: 400, code: 3, field: "page_size" },
    );
  });

  it("bounds each kind by page_size (default 10, at most 50) and says when it cut", async () => {
    const bulk = await wharf.create(`/iam/v2/groups/${acme}`, { name: "bulk" });
    for (let i = 0; i < 52; i++) {
      await wharf.create(`/registry/v2/repos/${bulk}`, { name: `svc-${String(i).padStart(2, "0")}` });
    }
    const first = await search("bulk/svc-");
    assert.equal(first.repos.length, 10);
    assert.equal(first.truncated, true);
    assert.deepEqual(repoPaths(await search("bulk/svc-", undefined, 3)), [
      "acme/bulk/svc-00",
      "acme/bulk/svc-01",
      "acme/bulk/svc-02",
    ]);
    const most = await search("bulk/svc-", undefined, 500);
    assert.equal(most.repos.length, 50);
    assert.equal(most.repos[49]?.repoPath, "acme/bulk/svc-49");
    const exact = await search("bulk/svc-0", undefined, 10);
    assert.equal(exact.repos.length, 10);
    assert.equal(exact.truncated, false, "exactly page_size matches: nothing was cut");
  });
});
