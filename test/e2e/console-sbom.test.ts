// The image page's SBOM section in headless Chromium against a real server (SQLite: GetSbom is
// covered on both engines by sbom.test.ts).
import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { BrowserContext, Page } from "playwright-core";
import { expectJson } from "../support/api-assertions.js";
import { chromiumSkip, launchChromium } from "../support/chromium.js";
import { type BuiltImage, buildImage, pushImage } from "../support/registry-push.js";
import { attachReferrer } from "../support/sbom-referrer.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

/** Where each page's screenshot goes (git-ignored); CI keeps it as an artifact. */
const ARTIFACTS = join(new URL("../..", import.meta.url).pathname, "test-artifacts", "console");

describe("the image page's SBOM in headless Chromium", { skip: chromiumSkip }, () => {
  let wharf: TestServer;
  let browser: BrowserContext;
  let repoUid: string;
  let withSbom: BuiltImage;
  let without: BuiltImage;
  /** Console errors and CSP violations: any is a failure. */
  const problems: string[] = [];

  before(async () => {
    wharf = await startTestServer();
    const acme = await wharf.create("/iam/v2/groups", { name: "acme" });
    const token = await wharf.registryToken();
    withSbom = await pushImage(wharf, "acme/web", "1.0", token, buildImage("console-sbom"));
    without = await pushImage(wharf, "acme/web", "bare", token, buildImage("console-no-sbom"));
    await attachReferrer(
      wharf,
      "acme/web",
      token,
      withSbom.digest,
      readFileSync(new URL("../fixtures/sbom/spdx-2.3.dsse.json", import.meta.url)),
      {
        artifactType: "application/vnd.dsse.envelope.v1+json",
        layerMediaType: "application/vnd.dsse.envelope.v1+json",
        manifestAnnotations: { "in-toto.io/predicate-type": "https://spdx.dev/Document" },
        subjectSize: withSbom.manifest.length,
      },
    );
    const repos = await expectJson<{ repos: { uid: string }[] }>(
      await wharf.api(`/registry/v2/repos?uidp.descendants_of=${acme}&name=web`, { token: wharf.adminToken }),
    );
    repoUid = repos.repos[0]?.uid as string;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await wharf?.close();
  });

  async function imagePage(digest: string): Promise<Page> {
    const path = `/images/${digest}/${repoUid.split("/").map(encodeURIComponent).join("/")}`;
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

  it("lists the SBOM's packages and filters them with the search box", async () => {
    const page = await imagePage(withSbom.digest);
    const rows = page.getByTestId("sbom-packages").locator("tbody tr");
    await rows.first().waitFor();
    assert.equal(await rows.count(), 5);
    await page.getByText(/SPDX-2\.3, 5 packages, from referrer/).waitFor();
    assert.match(
      (await rows.nth(1).textContent()) ?? "",
      /libssl33\.3\.2-r0Apache-2\.0pkg:apk\/alpine\/libssl3/,
    );
    await page.getByLabel("Search packages").fill("GPL");
    await page.waitForFunction(
      `document.querySelectorAll('[data-testid="sbom-packages"] tbody tr').length === 2`,
    );
    assert.deepEqual(await rows.locator("td:first-child").allTextContents(), [
      "alpine-baselayout",
      "busybox",
    ]);
    await page.getByLabel("Search packages").fill("no-such-package");
    await page.getByText("No package matches the search.").waitFor();
    await page.getByLabel("Search packages").fill("");
    await page.waitForFunction(
      `document.querySelectorAll('[data-testid="sbom-packages"] tbody tr').length === 5`,
    );
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "image-sbom.png"), fullPage: true });
    await page.close();
  });

  it("says 'No SBOM attached' for an image without one", async () => {
    const page = await imagePage(without.digest);
    await page.getByRole("heading", { name: "No SBOM attached" }).waitFor();
    assert.equal(await page.getByTestId("sbom-packages").count(), 0);
    await page.close();
  });

  it("logged no console error and no CSP violation", () => {
    // A NOT_FOUND answer (no SBOM, no report) is logged by the browser as a failed request: not a problem.
    const real = problems.filter((p) => !/the server responded with a status of 404/.test(p));
    assert.deepEqual(real, []);
  });
});
