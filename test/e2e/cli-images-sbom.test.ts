// `wharf images sbom` against a real server (SQLite: the API it calls is covered on both engines by
// sbom.test.ts).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { cliChecks, cliHome } from "../support/cli-checks.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { personWithRole } from "../support/registered-person.js";
import { buildImage, pushImage } from "../support/registry-push.js";
import { attachReferrer } from "../support/sbom-referrer.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const FIXTURES = new URL("../fixtures/sbom/", import.meta.url);

describe("wharf images sbom", () => {
  let wharf: TestServer;
  let home: string;
  let env: NodeJS.ProcessEnv;
  let referrer: string;
  let digest: string;
  const { ok, json, fails, wharfCli } = cliChecks(runCliInProcess, () => env, { failurePrintsNothing: true });

  before(async () => {
    wharf = await startTestServer();
    ({ home, env } = await cliHome("wharf-cli-sbom-", wharf, wharf.adminToken));
    await ok(["iam", "orgs", "create", "acme"]);
    const token = await wharf.registryToken();
    const image = await pushImage(wharf, "acme/app", "1.0", token, buildImage("cli-sbom"));
    digest = image.digest;
    await pushImage(wharf, "acme/app", "bare", token, buildImage("cli-no-sbom"));
    referrer = await attachReferrer(
      wharf,
      "acme/app",
      token,
      image.digest,
      readFileSync(new URL("cyclonedx-1.6.intoto.json", FIXTURES)),
      {
        artifactType: "application/vnd.in-toto+json",
        layerMediaType: "application/vnd.in-toto+json",
        layerAnnotations: { "in-toto.io/predicate-type": "https://cyclonedx.org/bom" },
        subjectSize: image.manifest.length,
      },
    );
  });
  after(async () => {
    await wharf?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it("prints the packages as a table, by tag or digest, and the whole answer as JSON", async () => {
    const r = await wharfCli(["images", "sbom", "acme/app:1.0", "-o", "table"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`CycloneDX-1\\.6 SBOM from referrer ${referrer}: 5 packages`));
    assert.match(r.stdout, /NAME\W+VERSION\W+LICENSE\W+PURL/);
    assert.equal(r.stdout.split("\n").filter((l) => l.includes("pkg:")).length, 5);
    assert.match(r.stdout, /express\W+4\.21\.1\W+MIT\W+pkg:npm\/express@4\.21\.1/);
    assert.match(r.stdout, /web\W+1\.0\.0\W+MIT OR Apache-2\.0\W+pkg:npm\/web@1\.0\.0/);
    const whole = await json<{ format: string; referrer: string; packages: { name: string }[] }>([
      "images",
      "sbom",
      `acme/app@${digest}`,
    ]);
    assert.equal(whole.format, "CycloneDX-1.6");
    assert.equal(whole.referrer, referrer);
    assert.deepEqual(
      whole.packages.map((p) => p.name),
      ["web", "express", "cookie", "internal", "glibc"],
    );
  });

  it("--search filters by name or purl", async () => {
    const found = await json<{ packages: { name: string }[] }>([
      "images",
      "sbom",
      "acme/app:1.0",
      "--search",
      "NPM/COOK",
    ]);
    assert.deepEqual(
      found.packages.map((p) => p.name),
      ["cookie"],
    );
    const none = await ok(["images", "sbom", "acme/app:1.0", "--search", "nothing-like-it", "-o", "table"]);
    assert.doesNotMatch(none, /express/);
  });

  it("exits 4 for an image without an SBOM, 5 for another organization's caller", async () => {
    await fails(["images", "sbom", "acme/app:bare"], 4, /has no SBOM attached/);
    const globex = (await json<{ uid: string }>(["iam", "orgs", "create", "globex"])).uid;
    const outsider = await personWithRole(wharf, "globex-owner", globex, "owner");
    await fails(["images", "sbom", `acme/app@${digest}`], 4, /not found|permission/i, {
      WHARF_TOKEN: outsider.token,
    });
  });
});
