// The console's search box in headless Chromium against a real server: keyboard only (Tab or "/",
// arrows, Enter, Escape), repos, tags, digest prefixes and advisory ids, "No results", errors,
// debounced requests, axe with the list open in both themes.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { BrowserContext, Locator, Page } from "playwright-core";
import { assertAccessible } from "../support/axe.js";
import { chromiumSkip, launchChromium } from "../support/chromium.js";
import { buildImage, pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

/** Where each page's screenshot goes (git-ignored); CI keeps it as an artifact. */
const ARTIFACTS = join(new URL("../..", import.meta.url).pathname, "test-artifacts", "console");
const ADVISORY_ID = "CGA-7q2x-2345-6789";

describe("the console's search box", { skip: chromiumSkip }, () => {
  let wharf: TestServer;
  let browser: BrowserContext;
  let webUid: string;
  const image = buildImage("console-search");
  const problems: string[] = [];

  before(async () => {
    wharf = await startTestServer();
    const org = await wharf.create("/iam/v2/groups", { name: "acme" });
    const shop = await wharf.create(`/iam/v2/groups/${org}`, { name: "shop" });
    webUid = await wharf.create(`/registry/v2/repos/${shop}`, { name: "web" });
    await wharf.create(`/registry/v2/repos/${org}`, { name: "web-legacy" });
    const token = await wharf.registryToken();
    await pushImage(wharf, "acme/shop/web", "release-2026", token, image);
    await pushImage(wharf, "acme/shop/web", "latest", token, "console-search-latest");
    const now = Date.now();
    await wharf.store.advisories.upsert({
      ...{ uid: "7".repeat(40), advisoryId: ADVISORY_ID, legacyAdvisoryId: "", author: "test" },
      ...{ artifactName: "openssl", artifactType: "apk", artifactArchitecture: "", componentName: "" },
      ...{ componentType: "", componentLocation: "", originPackage: "openssl", packageNamespace: "wolfi" },
      ...{
        aliases: ["CVE-2026-31337"],
        events: [],
        severities: [],
        findings: "",
        createTime: now,
        updateTime: now,
      },
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

  const box = (page: Page) => page.getByRole("combobox", { name: /Search repositories/ });
  /** The role (else tag name) of the focused element. */
  const focused = (page: Page) =>
    page.evaluate<string | undefined>(
      "document.activeElement?.getAttribute('role') ?? document.activeElement?.tagName",
    );

  /** Presses ArrowDown until `option` is the active one (at most `limit` times). */
  async function arrowTo(page: Page, option: Locator, limit = 10): Promise<void> {
    const id = await option.getAttribute("id");
    for (let i = 0; i < limit; i++) {
      await page.keyboard.press("ArrowDown");
      if ((await box(page).getAttribute("aria-activedescendant")) === id) return;
    }
    assert.fail(`ArrowDown never made ${id} active`);
  }

  it('"/" focuses the box; arrows and Enter open a tag: the repo page with that tag selected', async () => {
    const page = await open("/");
    await page.getByRole("heading", { level: 1 }).first().waitFor();
    await page.keyboard.press("/");
    assert.equal(await focused(page), "combobox");
    await page.keyboard.type("release");
    const listbox = page.getByRole("listbox", { name: "Search results" });
    const tag = listbox
      .getByRole("group", { name: "Tags" })
      .getByRole("option", { name: /acme\/shop\/web:release-2026/ });
    await tag.waitFor();
    assert.equal(await box(page).getAttribute("aria-expanded"), "true");
    await page
      .getByRole("status")
      .filter({ hasText: /^1 result$/ })
      .waitFor();
    await arrowTo(page, tag);
    assert.equal(await tag.getAttribute("aria-selected"), "true");
    assert.equal(await focused(page), "combobox", "focus stays in the field");
    await assertAccessible(page, "search box with its list open");
    await screenshot(page, "search");
    await page.emulateMedia({ colorScheme: "dark" });
    await assertAccessible(page, "search box with its list open (dark)");
    await page.emulateMedia({ colorScheme: "light" });

    await page.keyboard.press("Enter");
    await page.waitForURL((url) => url.pathname === `/repos/${webUid}` && url.search === "?tag=release-2026");
    await page.getByRole("heading", { name: "History of release-2026" }).waitFor();
    const current = page.locator('tr[aria-current="true"]');
    await current.filter({ hasText: "release-2026" }).waitFor();
    assert.equal(await box(page).inputValue(), "", "the box is cleared once a result is opened");
    assert.equal(await box(page).getAttribute("aria-expanded"), "false");
    await page.close();
  });

  it("Tab reaches the box; a digest prefix finds the image and Enter opens its page", async () => {
    const page = await open("/orgs");
    await page.getByRole("heading", { level: 1 }).first().waitFor();
    for (let i = 0; i < 20 && (await focused(page)) !== "combobox"; i++) await page.keyboard.press("Tab");
    assert.equal(await focused(page), "combobox", "Tab reaches the search box");
    const hex = image.digest.slice("sha256:".length, "sha256:".length + 10);
    await page.keyboard.type(hex);
    const option = page
      .getByRole("group", { name: "Images" })
      .getByRole("option", { name: new RegExp(`acme/shop/web@sha256:${hex}`) });
    await option.waitFor();
    assert.match((await option.textContent()) ?? "", /release-2026/, "the image's tags are shown");
    await arrowTo(page, option);
    await page.keyboard.press("Enter");
    await page.waitForURL((url) => decodeURIComponent(url.pathname) === `/images/${image.digest}/${webUid}`);
    await page.getByRole("heading", { name: "Architectures" }).waitFor();
    await page.close();
  });

  it("an advisory id finds the advisory; Enter opens the advisories page filtered to it", async () => {
    const page = await open("/");
    await page.keyboard.press("/");
    await page.keyboard.type(ADVISORY_ID.toUpperCase());
    const option = page
      .getByRole("group", { name: "Advisories" })
      .getByRole("option", { name: new RegExp(ADVISORY_ID) });
    await option.waitFor();
    assert.match((await option.textContent()) ?? "", /openssl.*CVE-2026-31337/);
    await arrowTo(page, option);
    await page.keyboard.press("Enter");
    await page.waitForURL(
      (url) => url.pathname === "/advisories" && url.searchParams.get("id") === ADVISORY_ID,
    );
    await page.getByText("1 advisories").waitFor();
    assert.match((await page.locator("table tbody tr").first().textContent()) ?? "", new RegExp(ADVISORY_ID));
    assert.equal(await page.getByLabel("Advisory id (CGA-…)").inputValue(), ADVISORY_ID);
    await page.close();
  });

  it("Escape closes the list with focus kept, a second Escape clears; no results and errors are shown", async () => {
    const page = await open("/");
    let searches = 0;
    page.on("request", (r) => {
      if (r.url().includes("SearchService/Search")) searches += 1;
    });
    await page.keyboard.press("/");
    const typed = "acme/shop/we";
    await page.keyboard.type(typed);
    const listbox = page.getByRole("listbox", { name: "Search results" });
    await listbox
      .getByRole("option", { name: /^acme\/shop\/web/ })
      .first()
      .waitFor();
    assert.ok(searches < typed.length, `typing is debounced: ${searches} requests for ${typed.length} keys`);
    await page.keyboard.press("Escape");
    await listbox.waitFor({ state: "hidden" });
    assert.equal(await box(page).getAttribute("aria-expanded"), "false");
    assert.equal(await focused(page), "combobox");
    assert.equal(await box(page).inputValue(), typed, "the first Escape keeps the text");
    await page.keyboard.press("ArrowDown");
    await listbox.waitFor();
    assert.equal(await box(page).getAttribute("aria-expanded"), "true", "ArrowDown opens it again");
    await page.keyboard.press("Escape");
    await page.keyboard.press("Escape");
    assert.equal(await box(page).inputValue(), "");

    await page.keyboard.type("no-such-thing-here");
    await page.locator(".site-search-popup").getByText("No results").waitFor();
    await page.getByRole("status").filter({ hasText: "No results" }).waitFor();
    assert.equal(await box(page).getAttribute("aria-expanded"), "false");

    await box(page).fill("x".repeat(256));
    const alert = page.locator(".site-search-popup").getByRole("alert");
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? "", /query: must be at most 255 characters/);
    await page.close();
    assert.deepEqual(
      problems.filter((p) => !/the server responded with a status of (400|404)/.test(p)),
      [],
    );
  });
});
