// The console's signature badges (tag list, image page) in headless Chromium, against a real
// server with cosign-format signatures pushed over HTTP.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { BrowserContext, Page } from "playwright-core";
import { chromiumSkip, launchChromium } from "../support/chromium.js";
import { generateCosignKey, signImage } from "../support/cosign.js";
import { buildImage, pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

/** Where each page's screenshot goes (git-ignored); CI keeps it as an artifact. */
const ARTIFACTS = join(new URL("../..", import.meta.url).pathname, "test-artifacts", "console");

describe("the console shows who signed an image", { skip: chromiumSkip }, () => {
  let wharf: TestServer;
  let browser: BrowserContext;
  let repoUid: string;
  const signed = buildImage("console-signed");
  const unsigned = buildImage("console-unsigned");
  const problems: string[] = [];

  before(async () => {
    wharf = await startTestServer();
    const org = await wharf.create("/iam/v2/groups", { name: "acme" });
    const token = await wharf.registryToken();
    await pushImage(wharf, "acme/web", "release", token, signed);
    await pushImage(wharf, "acme/web", "dev", token, unsigned);
    const repos = await wharf.api(`/registry/v2/repos?uidp.children_of=${org}&name=web`, {
      token: wharf.adminToken,
    });
    repoUid = ((await repos.json()) as { repos: { uid: string }[] }).repos[0]?.uid as string;
    const key = generateCosignKey("ecdsa-p256");
    await wharf.create(`/registry/v2/signingKeys/${org}`, {
      name: "release-key",
      publicKeyPem: key.publicKeyPem,
    });
    await signImage({
      registry: wharf,
      token,
      repo: "acme/web",
      digest: signed.digest,
      key,
      layout: "referrer",
    });
    const stranger = generateCosignKey("ed25519");
    await signImage({
      registry: wharf,
      token,
      repo: "acme/web",
      digest: unsigned.digest,
      key: stranger,
      layout: "tag",
    });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await wharf?.close();
  });

  async function open(path: string): Promise<Page> {
    const page = await browser.newPage();
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(`${path}: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`${path}: ${e.message}`));
    await page.goto(`${wharf.apiUrl}${path}`);
    await page.getByLabel("Token", { exact: true }).fill(wharf.adminToken);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByTestId("signed-in-as").filter({ hasText: "admin" }).waitFor();
    return page;
  }

  async function screenshot(page: Page, name: string): Promise<void> {
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  }

  it("badges each tag signed by a trusted key, or unsigned", async () => {
    const page = await open(`/repos/${repoUid}`);
    const release = page.getByRole("row").filter({ hasText: "release" }).getByTestId("signature-badge");
    await release.filter({ hasText: "signed · release-key" }).waitFor();
    const dev = page.getByRole("row").filter({ hasText: "dev" }).getByTestId("signature-badge");
    await dev.filter({ hasText: "unsigned" }).waitFor();
    await screenshot(page, "repo-signatures");
    await page.close();
  });

  it("lists an image's signatures with reasons on its page", async () => {
    const page = await open(`/images/${encodeURIComponent(unsigned.digest)}/${repoUid}`);
    await page.getByRole("heading", { name: "Signatures" }).waitFor();
    await page.getByTestId("signature-badge").filter({ hasText: "unsigned" }).waitFor();
    await page.getByTestId("signatures").getByText("no trusted key verifies it").waitFor();
    await page.close();
    const signedPage = await open(`/images/${encodeURIComponent(signed.digest)}/${repoUid}`);
    await signedPage.getByTestId("signature-badge").filter({ hasText: "signed · release-key" }).waitFor();
    await signedPage
      .getByTestId("signatures")
      .getByText("verified by key release-key trusted at acme")
      .waitFor();
    await screenshot(signedPage, "image-signatures");
    await signedPage.close();
    // Expected 404s (no readme, no vulnerability report) show as failed loads; nothing else may.
    assert.deepEqual(
      problems.filter((p) => !/the server responded with a status of 404/.test(p)),
      [],
    );
  });
});
