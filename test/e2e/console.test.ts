import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { BrowserContext, Page } from "playwright-core";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import { chromiumSkip, launchChromium } from "../support/chromium.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

/** Where each page's screenshot goes (git-ignored); CI keeps it as an artifact. */
const ARTIFACTS = join(new URL("../..", import.meta.url).pathname, "test-artifacts", "console");

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

describe("the web console in headless Chromium", { skip: chromiumSkip }, () => {
  let wharf: TestServer;
  let browser: BrowserContext;
  /** Console errors and CSP violations: any is a failure. */
  const problems: string[] = [];

  before(async () => {
    wharf = await startTestServer();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await wharf?.close();
  });

  async function open(path = "/"): Promise<Page> {
    const page = await browser.newPage();
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(`${path}: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`${path}: ${e.message}`));
    await page.goto(`${wharf.apiUrl}${path}`);
    return page;
  }

  it("flow 1: signs in with a pasted token, shows who is signed in, and signs out", async () => {
    const page = await open("/");
    await page.getByRole("heading", { name: "Sign in to Wharf" }).waitFor();
    await screenshot(page, "sign-in");

    await page.getByLabel("Token", { exact: true }).fill("not-a-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("This is not a token").waitFor();

    const forged = `${wharf.adminToken.slice(0, -4)}AAAA`;
    await page.getByLabel("Token", { exact: true }).fill(forged);
    await page.getByRole("button", { name: "Sign in" }).click();
    const refused = page.getByRole("alert").filter({ hasText: "UNAUTHENTICATED" });
    await refused.waitFor();

    await page.getByLabel("Token", { exact: true }).fill(`Bearer ${wharf.adminToken}`);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: /^Welcome/ }).waitFor();
    assert.equal(await page.getByTestId("signed-in-as").getAttribute("title"), ADMIN_IDENTITY_UID);
    assert.equal(await page.getByText("Server administrator").count(), 1);
    await screenshot(page, "home");

    await page.reload();
    await page.getByRole("heading", { name: /^Welcome/ }).waitFor();
    assert.ok(
      await page.evaluate(() => window.sessionStorage.getItem("wharf.console.session")?.includes(".")),
      "the token is kept for the tab",
    );
    assert.equal(await page.evaluate(() => window.localStorage.length), 0, "and nowhere else");

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in to Wharf" }).waitFor();
    assert.equal(await page.evaluate(() => window.sessionStorage.length), 0, "sign out forgets the token");
    await page.close();
  });

  it("shows a not-found page for console paths that name no page", async () => {
    const page = await open("/no/such/page");
    await page.getByLabel("Token", { exact: true }).fill(wharf.adminToken);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Page not found" }).waitFor();
    await page.close();
  });

  it("logged no console error and no CSP violation", () => {
    const unexpected = problems.filter((p) => !/401 \(Unauthorized\)/.test(p));
    assert.deepEqual(unexpected, []);
  });
});
