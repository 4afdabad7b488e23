import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { newChildUid } from "../../src/core/uidp.js";
import { expectJson } from "../support/api-assertions.js";
import { type BuiltImage, buildImage, ociErrorOf, pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

interface HistoryRecord {
  updateTimestamp: string;
  digest: string;
  deleted?: boolean;
}

interface ApiTag {
  uid: string;
  name: string;
  digest: string;
}

const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("Tag History API", () => {
  let wharf: TestServer;
  let token: string;
  let repoUid: string;
  let v1: BuiltImage;
  let v2: BuiltImage;
  let v3: BuiltImage;

  async function history(name: string, tag: string, query = ""): Promise<HistoryRecord[]> {
    const res = await wharf.registry(`/v2/${name}/_service/history/${tag}${query}`, { token });
    assert.equal(res.headers.get("content-type"), "application/json");
    const body = await expectJson<{ history: HistoryRecord[] }>(res);
    assert.deepEqual(Object.keys(body), ["history"]);
    return body.history;
  }

  async function apiTags(repo: string): Promise<ApiTag[]> {
    const body = await expectJson<{ tags?: ApiTag[] }>(
      await wharf.api(`/registry/v2/tags?uidp.children_of=${repo}`, { token: wharf.adminToken }),
    );
    return body.tags ?? [];
  }

  before(async () => {
    wharf = await startTestServer();
    token = await wharf.registryToken();
    const acme = await wharf.create("/iam/v2/groups", { name: "acme" });
    v1 = buildImage("history-v1");
    v2 = buildImage("history-v2");
    v3 = buildImage("history-v3");
    await pushImage(wharf, "acme/app", "seed", token, v1);
    const repos = await expectJson<{ repos: { uid: string }[] }>(
      await wharf.api(`/registry/v2/repos?uidp.descendants_of=${acme}&name=app`, { token: wharf.adminToken }),
    );
    repoUid = repos.repos[0]?.uid as string;
    assert.ok(repoUid, "repo acme/app created by the push");
  });
  after(() => wharf.close());

  it("records each push by tag, oldest first, and nothing for a push of the same digest", async () => {
    const before = Date.now();
    await pushImage(wharf, "acme/app", "latest", token, v1);
    await pause(5);
    await pushImage(wharf, "acme/app", "latest", token, v2);
    const records = await history("acme/app", "latest");
    assert.deepEqual(
      records.map((r) => r.digest),
      [v1.digest, v2.digest],
    );
    for (const r of records) {
      assert.match(r.updateTimestamp, RFC3339_MS);
      assert.deepEqual(Object.keys(r).sort(), ["digest", "updateTimestamp"]);
      const t = Date.parse(r.updateTimestamp);
      assert.ok(t >= before - 1000 && t <= Date.now() + 1000, `${r.updateTimestamp} is about now`);
    }
    assert.ok(records[0]!.updateTimestamp < records[1]!.updateTimestamp, "oldest first");

    await pushImage(wharf, "acme/app", "latest", token, v2);
    assert.deepEqual(await history("acme/app", "latest"), records, "same digest again: no record");
  });

  it("records a move through the API's tag create, and the Tags list follows registry pushes", async () => {
    const moved = await expectJson<ApiTag>(
      await wharf.api(`/registry/v2/tags/${repoUid}`, {
        method: "POST",
        token: wharf.adminToken,
        body: { name: "latest", digest: v1.digest },
      }),
    );
    assert.equal(moved.digest, v1.digest);
    assert.deepEqual(
      (await history("acme/app", "latest")).map((r) => r.digest),
      [v1.digest, v2.digest, v1.digest],
    );
    // Same digest through the API: nothing appended.
    await expectJson(
      await wharf.api(`/registry/v2/tags/${repoUid}`, {
        method: "POST",
        token: wharf.adminToken,
        body: { name: "latest", digest: v1.digest },
      }),
    );
    assert.equal((await history("acme/app", "latest")).length, 3);
    // Deprecating without moving: still nothing appended.
    const deprecated = await expectJson<ApiTag & { deprecated?: boolean }>(
      await wharf.api(`/registry/v2/tags/${repoUid}`, {
        method: "POST",
        token: wharf.adminToken,
        body: { name: "latest", digest: v1.digest, deprecated: true },
      }),
    );
    assert.equal(deprecated.deprecated, true);
    assert.equal((await history("acme/app", "latest")).length, 3);
    assert.equal((await apiTags(repoUid)).find((t) => t.name === "latest")?.digest, v1.digest);

    await pushImage(wharf, "acme/app", "latest", token, v3);
    const latest = (await apiTags(repoUid)).find((t) => t.name === "latest");
    assert.equal(latest?.digest, v3.digest, "Tags list shows the pushed digest");
    assert.equal(latest?.uid, moved.uid, "the tag was moved, not recreated");
    assert.deepEqual(
      (await history("acme/app", "latest")).map((r) => r.digest),
      [v1.digest, v2.digest, v1.digest, v3.digest],
    );
  });

  it("records a registry tag delete as a deleted record, and an API delete too", async () => {
    await pushImage(wharf, "acme/app", "gone", token, v1);
    const del = await wharf.registry("/v2/acme/app/manifests/gone", { method: "DELETE", token });
    assert.equal(del.status, 202);
    await del.arrayBuffer();
    const records = await history("acme/app", "gone");
    assert.equal(records.length, 2);
    assert.equal(records[0]?.digest, v1.digest);
    assert.equal(records[1]?.digest, "");
    assert.equal(records[1]?.deleted, true);
    assert.match(records[1]?.updateTimestamp ?? "", RFC3339_MS);
    const manifest = await wharf.registry("/v2/acme/app/manifests/gone", { token });
    assert.equal(manifest.status, 404);
    assert.equal((await ociErrorOf(manifest)).code, "MANIFEST_UNKNOWN");
    assert.equal(
      (await apiTags(repoUid)).find((t) => t.name === "gone"),
      undefined,
    );
    // The manifest itself is still there by digest: only the tag went.
    const byDigest = await wharf.registry(`/v2/acme/app/manifests/${v1.digest}`, { token });
    assert.equal(byDigest.status, 200);
    await byDigest.arrayBuffer();

    // Pushed again, then deleted through the API.
    await pushImage(wharf, "acme/app", "gone", token, v2);
    const tag = (await apiTags(repoUid)).find((t) => t.name === "gone");
    assert.ok(tag, "tag gone listed again");
    await expectJson(
      await wharf.api(`/registry/v2/tags/${tag.uid}`, { method: "DELETE", token: wharf.adminToken }),
    );
    assert.deepEqual(
      (await history("acme/app", "gone")).map((r) => [r.digest, r.deleted ?? false]),
      [
        [v1.digest, false],
        ["", true],
        [v2.digest, false],
        ["", true],
      ],
    );
  });

  it("records a delete for every tag of a manifest deleted by digest", async () => {
    const image = buildImage("deleted-by-digest");
    await pushImage(wharf, "acme/app", "a", token, image);
    await pushImage(wharf, "acme/app", "b", token, image);
    const del = await wharf.registry(`/v2/acme/app/manifests/${image.digest}`, { method: "DELETE", token });
    assert.equal(del.status, 202);
    await del.arrayBuffer();
    for (const tag of ["a", "b"]) {
      assert.deepEqual(
        (await history("acme/app", tag)).map((r) => r.digest),
        [image.digest, ""],
        tag,
      );
    }
  });

  it("restricts records to [start, end)", async () => {
    for (const image of [v1, v2, v3]) {
      await pushImage(wharf, "acme/app", "window", token, image);
      await pause(5);
    }
    const all = await history("acme/app", "window");
    assert.equal(all.length, 3);
    const [t0, t1, t2] = all.map((r) => r.updateTimestamp) as [string, string, string];
    assert.ok(t0 < t1 && t1 < t2, "distinct timestamps");
    const digests = (records: HistoryRecord[]) => records.map((r) => r.digest);

    assert.deepEqual(digests(await history("acme/app", "window", `?start=${t1}`)), [v2.digest, v3.digest]);
    assert.deepEqual(digests(await history("acme/app", "window", `?start=${t2}`)), [v3.digest]);
    assert.deepEqual(digests(await history("acme/app", "window", `?end=${t1}`)), [v1.digest]);
    assert.deepEqual(digests(await history("acme/app", "window", `?start=${t0}&end=${t2}`)), [
      v1.digest,
      v2.digest,
    ]);
    assert.deepEqual(digests(await history("acme/app", "window", `?start=${t1}&end=${t1}`)), []);
    const afterAll = new Date(Date.parse(t2) + 1).toISOString();
    assert.deepEqual(await history("acme/app", "window", `?start=${afterAll}`), []);
    // The same instant written with an offset.
    const t1Offset = new Date(Date.parse(t1) + 3_600_000).toISOString().replace("Z", "+01:00");
    assert.deepEqual(digests(await history("acme/app", "window", `?start=${encodeURIComponent(t1Offset)}`)), [
      v2.digest,
      v3.digest,
    ]);
  });

  it("rejects a malformed start or end with 400 INVALID_ARGUMENT naming the parameter", async () => {
    for (const [param, value] of [
      ["start", "yesterday"],
      ["start", "2024-13-45"],
      ["end", "1700000000"],
    ] as const) {
      const res = await wharf.registry(`/v2/acme/app/_service/history/latest?${param}=${value}`, { token });
      assert.equal(res.status, 400, `${param}=${value}`);
      assert.equal(res.headers.get("content-type"), "application/json");
      const error = await ociErrorOf(res);
      assert.equal(error.code, "INVALID_ARGUMENT");
      assert.match(error.message, new RegExp(`\\b${param}\\b`));
    }
  });

  it("rejects calendar dates that do not exist", async () => {
    for (const value of ["2024-02-30T00:00:00Z", "2023-02-29T00:00:00Z", "2024-01-01T24:00:00Z"]) {
      const res = await wharf.registry(`/v2/acme/app/_service/history/latest?start=${value}`, { token });
      assert.equal(res.status, 400, value);
      assert.equal((await ociErrorOf(res)).code, "INVALID_ARGUMENT");
    }
  });

  it("answers 404 MANIFEST_UNKNOWN for an unknown tag and NAME_UNKNOWN for an unknown repo", async () => {
    const tag = await wharf.registry("/v2/acme/app/_service/history/never", { token });
    assert.equal(tag.status, 404);
    assert.equal((await ociErrorOf(tag)).code, "MANIFEST_UNKNOWN");
    const repo = await wharf.registry("/v2/acme/nope/_service/history/latest", { token });
    assert.equal(repo.status, 404);
    assert.equal((await ociErrorOf(repo)).code, "NAME_UNKNOWN");
  });

  it("needs a token whose scope names the repository", async () => {
    const unauthenticated = await wharf.registry("/v2/acme/app/_service/history/latest");
    assert.equal(unauthenticated.status, 401);
    assert.match(unauthenticated.headers.get("www-authenticate") ?? "", /scope="repository:acme\/app:pull"/);
    await unauthenticated.arrayBuffer();
    const scoped = await expectJson<{ token: string }>(
      await wharf.registry("/token?scope=repository:acme/app:pull", { token }),
    );
    const ok = await wharf.registry("/v2/acme/app/_service/history/latest", { token: scoped.token });
    assert.equal(ok.status, 200);
    await ok.arrayBuffer();
    await pushImage(wharf, "acme/other", "latest", token, v1);
    const other = await wharf.registry("/v2/acme/other/_service/history/latest", { token: scoped.token });
    assert.equal(other.status, 401);
    await other.arrayBuffer();
  });

  it("returns at most 1000 records, oldest first; moving start reaches the rest", async () => {
    const base = Date.UTC(2024, 0, 1);
    const total = 1005;
    for (let i = 0; i < total; i++) {
      await wharf.store.tags.put({
        repoUid,
        name: "bulk",
        digest: i % 2 === 0 ? v1.digest : v2.digest,
        deprecated: false,
        newUid: newChildUid(repoUid),
        now: base + i * 1000,
      });
    }
    const first = await history("acme/app", "bulk");
    assert.equal(first.length, 1000);
    first.forEach((r, i) => {
      assert.equal(r.updateTimestamp, new Date(base + i * 1000).toISOString(), `record ${i}`);
      assert.equal(r.digest, i % 2 === 0 ? v1.digest : v2.digest);
    });
    const last = first.at(-1)?.updateTimestamp as string;
    const next = new Date(Date.parse(last) + 1).toISOString();
    const rest = await history("acme/app", "bulk", `?start=${next}`);
    assert.deepEqual(
      rest.map((r) => r.updateTimestamp),
      [1000, 1001, 1002, 1003, 1004].map((i) => new Date(base + i * 1000).toISOString()),
    );
    // A window closing before the cap is reached is not cut.
    const windowed = await history("acme/app", "bulk", `?end=${new Date(base + 10_000).toISOString()}`);
    assert.equal(windowed.length, 10);
  });
});
