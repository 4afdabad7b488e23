import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { newChildUid } from "../../../src/core/uidp.js";
import type { RepoRow } from "../../../src/storage/registry-store.js";
import type { SearchHits, SearchQuery } from "../../../src/storage/search-store.js";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import { groupRow, repoRow, T0 } from "./fixtures.js";

const digest = (hex: string) => `sha256:${hex.padEnd(64, "0")}`;

/** SearchStore: substrings of paths and tag names (wildcards literal), digest prefixes, scopes, limits. */
export function searchCases(db: TestDatabase): void {
  describe("search", () => {
    let store: Store;
    let org: string;
    let other: string;
    let app: RepoRow;
    let underscore: RepoRow;
    let foreign: RepoRow;
    const find = (text: string, more: Partial<SearchQuery> = {}): Promise<SearchHits> =>
      store.search.search({ text, limit: 10, within: { all: true }, ...more });
    const paths = (hits: SearchHits) => hits.repos.map((h) => h.path);
    const tagRefs = (hits: SearchHits) => hits.tags.map((h) => `${h.repoPath}:${h.tag.name}`);

    const putTag = (repo: RepoRow, name: string, at: string) =>
      store.tags.put({
        repoUid: repo.uid,
        name,
        digest: at,
        deprecated: false,
        newUid: newChildUid(repo.uid),
        now: T0,
      });
    const putManifest = (repo: RepoRow, at: string) =>
      store.manifests.put(
        {
          repoUid: repo.uid,
          digest: at,
          mediaType: "application/vnd.oci.image.manifest.v1+json",
          content: Buffer.from(at),
          createTime: T0,
        },
        [],
      );

    before(async () => {
      store = await db.openFresh();
      const o = groupRow("", "srch");
      const team = groupRow(o.uid, "Team-folder");
      const x = groupRow("", "elsewhere");
      for (const g of [o, team, x]) await store.groups.insert(g);
      org = o.uid;
      other = x.uid;
      app = repoRow(team.uid, "app");
      underscore = repoRow(org, "a_b");
      const plain = repoRow(org, "axb");
      foreign = repoRow(other, "app");
      for (const r of [app, underscore, plain, foreign]) await store.repos.insert(r);
      await putManifest(app, digest("abcd1"));
      await putManifest(app, digest("abcd2"));
      await putManifest(foreign, digest("abcd1"));
      await putTag(app, "v1_0", digest("abcd1"));
      await putTag(app, "V1x0", digest("abcd1"));
      await putTag(app, `sha256-${"ab".repeat(32)}.sig`, digest("abcd2"));
      await putTag(foreign, "v1_0", digest("abcd1"));
    });

    it("finds repos by a case-insensitive substring of the path from the organization down", async () => {
      assert.deepEqual(paths(await find("team-FOLDER/ap")), ["srch/Team-folder/app"]);
      const hits = await find("app");
      assert.deepEqual(paths(hits), ["elsewhere/app", "srch/Team-folder/app"]);
      assert.equal(hits.repos[1]?.repo.uid, app.uid);
      assert.equal(hits.repos[1]?.repo.groupUid, app.groupUid);
      assert.equal(hits.truncated, false);
    });

    it("finds tags by name in path then name order, leaving out referrer tags", async () => {
      assert.deepEqual(tagRefs(await find("v1")), [
        "elsewhere/app:v1_0",
        "srch/Team-folder/app:V1x0",
        "srch/Team-folder/app:v1_0",
      ]);
      assert.deepEqual(tagRefs(await find("sha256-")), []);
      const [hit] = (await find("V1X")).tags;
      assert.equal(hit?.tag.repoUid, app.uid);
      assert.equal(hit?.tag.digest, digest("abcd1"));
    });

    it("matches %, _ and \\ literally", async () => {
      assert.deepEqual(paths(await find("a_b")), ["srch/a_b"]);
      assert.deepEqual(tagRefs(await find("1_0")), ["elsewhere/app:v1_0", "srch/Team-folder/app:v1_0"]);
      for (const text of ["%", "\\", "a%b"]) {
        const hits = await find(text);
        assert.deepEqual([paths(hits), tagRefs(hits)], [[], []], text);
      }
    });

    it("finds images by digest prefix with the tags pointing at them, only when asked", async () => {
      const hits = await find("abcd", { digestPrefix: "sha256:abcd" });
      assert.deepEqual(
        hits.images.map((i) => [i.digest, i.repoPath, i.tags]),
        [
          [digest("abcd1"), "elsewhere/app", ["v1_0"]],
          [digest("abcd1"), "srch/Team-folder/app", ["V1x0", "v1_0"]],
          [digest("abcd2"), "srch/Team-folder/app", [`sha256-${"ab".repeat(32)}.sig`]],
        ],
      );
      assert.deepEqual((await find("abcd")).images, []);
      assert.deepEqual(
        (await find("x", { digestPrefix: "sha256:abcd%" })).images,
        [],
        "a wildcard in the prefix is literal",
      );
    });

    it("answers only within the scopes", async () => {
      const within = { all: false as const, uids: [org] };
      assert.deepEqual(paths(await find("app", { within })), ["srch/Team-folder/app"]);
      const images = (await find("abcd", { within, digestPrefix: "sha256:abcd1" })).images;
      assert.deepEqual(
        images.map((i) => i.repoUid),
        [app.uid],
      );
      const none = await find("app", { within: { all: false, uids: [] }, digestPrefix: "sha256:abcd" });
      assert.deepEqual([none.repos, none.tags, none.images], [[], [], []]);
    });

    it("cuts each kind at the limit and says so", async () => {
      const hits = await find("a", { limit: 1, digestPrefix: "sha256:abcd" });
      assert.deepEqual(paths(hits), ["elsewhere/app"]);
      assert.equal(hits.images.length, 1);
      assert.equal(hits.truncated, true);
      assert.equal((await find("a_b", { limit: 1 })).truncated, false);
    });
  });
}
