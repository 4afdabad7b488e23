// `wharf images immutability …` and `wharf images tags restore` against a real server, in this
// process through runCli (the parser bin/wharf.js runs). One engine: the API they call is covered on
// both engines by immutable-tags.test.ts and tag-restore.test.ts. The command lines are the ones
// docs/guide/governance-tags.md shows.
import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { cliChecks, cliHome } from "../support/cli-checks.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { type BuiltImage, pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

interface RuleJson {
  uid: string;
  tagPatterns: string[];
  description?: string;
}
interface TagJson {
  uid: string;
  name: string;
  digest: string;
}

describe("wharf images immutability and wharf images tags restore", () => {
  let wharf: TestServer;
  let home: string;
  let env: NodeJS.ProcessEnv;
  let v1: BuiltImage;
  let v2: BuiltImage;
  const { ok, json, fails } = cliChecks(runCliInProcess, () => env, { failurePrintsNothing: true });

  before(async () => {
    wharf = await startTestServer();
    ({ home, env } = await cliHome("wharf-cli-tags-", wharf, wharf.adminToken));
    await ok(["iam", "orgs", "create", "acme"]);
    const token = await wharf.registryToken();
    v1 = await pushImage(wharf, "acme/app", "latest", token, "cli-v1");
    v2 = await pushImage(wharf, "acme/app", "latest", token, "cli-v2");
    await pushImage(wharf, "acme/app", "v1.0", token, v1);
  });
  after(async () => {
    await wharf?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it("creates, lists, describes, updates and deletes a rule; a protected tag refuses to move", async () => {
    const rule = await json<RuleJson>([
      ...["images", "immutability", "create", "acme"],
      ...["--pattern", "v*", "--pattern", "!latest", "--description", "release tags"],
    ]);
    assert.deepEqual(rule.tagPatterns, ["v*", "!latest"]);
    assert.equal(rule.description, "release tags");
    const atRepo = await json<RuleJson>([
      "images",
      "immutability",
      "create",
      "acme/app",
      "--pattern",
      "stable",
    ]);
    assert.match(atRepo?.uid ?? "", /\//);

    const listed = await json<RuleJson[]>(["images", "immutability", "list", "--parent", "acme"]);
    assert.deepEqual(
      listed.map((r) => r.uid),
      [rule.uid, atRepo?.uid],
    );
    assert.match(
      await ok(["images", "immutability", "list", "--parent", "acme", "-o", "table"]),
      /│ v\* !latest │ release tags │/,
    );
    const described = await json<RuleJson>(["images", "immutability", "describe", rule.uid]);
    assert.equal(described?.uid, rule.uid);

    await fails(
      ["images", "tags", "create", "acme/app:v1.0", "--digest", v2.digest],
      1,
      new RegExp(`tag v1\\.0 is immutable \\(rule ${rule.uid}\\)`),
    );
    await fails(["images", "tags", "delete", "acme/app:v1.0"], 1, /TAG_IMMUTABLE|is immutable/);
    await fails(["images", "immutability", "create", "acme", "--pattern", "v[1"], 1, /tag_patterns\[0\]/);
    await fails(["images", "immutability", "update", rule.uid], 2, /give --pattern or --description/);

    const updated = await json<RuleJson>([
      ...["images", "immutability", "update", rule.uid, "--pattern", "release-*"],
    ]);
    assert.deepEqual(updated?.tagPatterns, ["release-*"]);
    assert.equal(updated?.description, "release tags");
    await ok(["images", "tags", "create", "acme/app:v1.0", "--digest", v2.digest]);
    for (const uid of [rule.uid, atRepo?.uid as string]) await ok(["images", "immutability", "delete", uid]);
    assert.deepEqual(await json<RuleJson[]>(["images", "immutability", "list", "--parent", "acme"]), []);
  });

  it("restores a tag by digest and by time, and a deleted tag by its uid", async () => {
    const byDigest = await json<TagJson>([
      "images",
      "tags",
      "restore",
      "acme/app:latest",
      "--digest",
      v1.digest,
    ]);
    assert.equal(byDigest?.digest, v1.digest);
    const byTime = await json<TagJson>([
      ...["images", "tags", "restore", "acme/app:latest", "--at", new Date().toISOString()],
    ]);
    assert.equal(byTime?.digest, v1.digest, "now it names v1: nothing to do");
    await fails(
      ["images", "tags", "restore", "acme/app:latest", "--digest", v1.digest, "--at", "2026-01-01T00:00:00Z"],
      2,
      /either --digest or --at/,
    );
    await fails(
      ["images", "tags", "restore", "acme/app:latest", "--at", "last week"],
      2,
      /--at must be a time/,
    );
    await fails(
      ["images", "tags", "restore", "acme/app:latest", "--at", "2000-01-01T00:00:00Z"],
      1,
      /no history at or before/,
    );

    await ok(["images", "tags", "delete", "acme/app:latest"]);
    await fails(["images", "tags", "restore", "acme/app:latest", "--digest", v2.digest], 2, /give its uid/);
    const back = await json<TagJson>([
      "images",
      "tags",
      "restore",
      byDigest?.uid as string,
      "--digest",
      v2.digest,
    ]);
    assert.equal(back?.uid, byDigest?.uid);
    assert.equal(back?.digest, v2.digest);
  });
});
