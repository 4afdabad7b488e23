// `wharf images signatures` and the signers line of `wharf images describe` against a real server
// (SQLite: the API they call is covered on both engines by signatures.test.ts).
import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { cliChecks, cliHome } from "../support/cli-checks.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { generateCosignKey, signImage } from "../support/cosign.js";
import { buildImage, pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

describe("wharf images signatures / describe", () => {
  let wharf: TestServer;
  let home: string;
  let env: NodeJS.ProcessEnv;
  const { ok, json, fails } = cliChecks(runCliInProcess, () => env, { failurePrintsNothing: true });
  const release = generateCosignKey("ecdsa-p256");
  const stranger = generateCosignKey("ed25519");
  const signed = buildImage("cli-signed");
  let sigReferrer: string;

  before(async () => {
    wharf = await startTestServer();
    ({ home, env } = await cliHome("wharf-cli-signatures-", wharf, wharf.adminToken));
    await ok(["iam", "orgs", "create", "acme"]);
    const token = await wharf.registryToken();
    await pushImage(wharf, "acme/app", "v1", token, signed);
    await pushImage(wharf, "acme/app", "unsigned", token, buildImage("cli-unsigned"));
    const org = await json<{ uid: string }>(["iam", "orgs", "describe", "acme"]);
    const res = await wharf.api(`/registry/v2/signingKeys/${org.uid}`, {
      method: "POST",
      token: wharf.adminToken,
      body: { name: "release", publicKeyPem: release.publicKeyPem },
    });
    assert.equal(res.status, 200, await res.text());
    sigReferrer = (
      await signImage({
        registry: wharf,
        token,
        repo: "acme/app",
        digest: signed.digest,
        key: release,
        layout: "tag",
      })
    ).referrer;
    await signImage({
      registry: wharf,
      token,
      repo: "acme/app",
      digest: signed.digest,
      key: stranger,
      layout: "referrer",
    });
  });
  after(async () => {
    await wharf?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it("lists an image's signatures, verified or not, with reasons", async () => {
    const listed = await json<
      { referrer: string; keyName?: string; verified?: boolean; reason: string; layout: string }[]
    >(["images", "signatures", "acme/app:v1"]);
    assert.equal(listed.length, 2);
    const good = listed.find((s) => s.referrer === sigReferrer);
    assert.equal(good?.verified, true);
    assert.equal(good?.keyName, "release");
    assert.equal(good?.layout, "cosign-tag");
    assert.ok(listed.some((s) => !s.verified && s.reason === "no trusted key verifies it"));
    const table = await ok(["images", "signatures", `acme/app@${signed.digest}`, "-o", "table"]);
    assert.match(table, /VERIFIED\W+KEY\W+LAYOUT\W+REFERRER\W+REASON/);
    assert.match(
      table,
      /yes\W+release\W+cosign-tag\W+sha256:[0-9a-f]{64}\W+verified by key release trusted at acme/,
    );
    assert.deepEqual(await json(["images", "signatures", "acme/app:unsigned"]), []);
  });

  it("describe says who signed, or that no trusted key did", async () => {
    const described = await ok(["images", "describe", "acme/app:v1", "-o", "table"]);
    assert.match(described, /SIGNED BY\W+release \(verified\)/);
    const unsigned = await ok(["images", "describe", "acme/app:unsigned", "-o", "table"]);
    assert.match(unsigned, /SIGNED BY\W+not signed by a trusted key/);
    const asJson = await json<{ signedBy: { keyName: string }[] }>(["images", "describe", "acme/app:v1"]);
    assert.deepEqual(
      asJson.signedBy.map((s) => s.keyName),
      ["release"],
    );
  });

  it("fails for an image that does not exist", async () => {
    await fails(["images", "signatures", "acme/app:nope"], 4, /not found/);
  });
});
