import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { BrowserContext, Page } from "playwright-core";
import openApiDocument from "../../src/gen/openapi.json" with { type: "json" };
import { chromiumSkip, launchChromium } from "../support/chromium.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

// /docs as a person sees it: the server's real page, CSP and Redoc bundle in headless Chromium.
// A CSP that blocks Redoc's styles, worker or the document fetch shows up as a violation event or
// a console error, and an empty page has no operation titles.

/**
 * The few browser globals the page scripts below use (the tests compile without the DOM library;
 * these functions run in the page).
 */
interface PageGlobals {
  document: {
    addEventListener(
      type: string,
      listener: (event: { violatedDirective: string; blockedURI: string }) => void,
    ): void;
    querySelector(selector: string): unknown;
    createElement(tag: string): { textContent: string };
    body: { append(node: unknown): void };
  };
  reportCspViolation(text: string): void;
  inlineRan?: boolean;
}

/** What the page reported while it loaded: CSP violations, console errors, failed requests. */
interface PageTrouble {
  violations: string[];
  consoleErrors: string[];
  failedRequests: string[];
}

/** Listens to `page` for everything that says the reference did not render cleanly. */
async function watch(page: Page): Promise<PageTrouble> {
  const trouble: PageTrouble = { violations: [], consoleErrors: [], failedRequests: [] };
  page.on("console", (message) => {
    if (message.type() === "error") trouble.consoleErrors.push(message.text());
  });
  page.on("pageerror", (error) => trouble.consoleErrors.push(`uncaught: ${error.message}`));
  page.on("requestfailed", (request) => trouble.failedRequests.push(request.url()));
  // Reported by the page itself: playwright sees blocked loads only as console text.
  await page.exposeFunction("reportCspViolation", (text: string) => trouble.violations.push(text));
  await page.addInitScript(() => {
    const page = globalThis as unknown as PageGlobals;
    page.document.addEventListener("securitypolicyviolation", (event) => {
      page.reportCspViolation(`${event.violatedDirective} blocked ${event.blockedURI || "inline"}`);
    });
  });
  return trouble;
}

describe("/docs in a real browser", { skip: chromiumSkip }, () => {
  let wharf: TestServer;
  let browser: BrowserContext;
  before(async () => {
    wharf = await startTestServer();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await wharf?.close();
  });

  it("Redoc renders every operation of the document under the server's CSP, with no violation", async () => {
    const page = await browser.newPage();
    const trouble = await watch(page);
    const response = await page.goto(`${wharf.apiUrl}/docs`, { waitUntil: "load" });
    assert.equal(response?.status(), 200);
    assert.match(response?.headers()["content-security-policy"] ?? "", /default-src 'none'/);

    // The API's title and a known operation, as Redoc writes them (a heading per operation).
    await page
      .getByRole("heading", { name: openApiDocument.info.title })
      .first()
      .waitFor({ timeout: 30_000 });
    const operation = page.locator('[id="operation/events_v2_SubscriptionsService_ListSubscriptions"] h2');
    await operation.waitFor({ timeout: 30_000 });
    assert.equal((await operation.textContent())?.trim(), "ListSubscriptions");
    await operation.scrollIntoViewIfNeeded();
    assert.ok(await operation.isVisible(), "a known operation's title is visible");

    // Every operation of the document has its section (Redoc ids them by operationId).
    const operationIds = Object.values(
      openApiDocument.paths as Record<string, Record<string, { operationId: string }>>,
    ).flatMap((ops) => Object.values(ops).map((op) => op.operationId));
    const rendered = await page.evaluate(
      (ids) =>
        ids.filter(
          (id) => (globalThis as unknown as PageGlobals).document.querySelector(`[id$="/${id}"]`) === null,
        ),
      operationIds,
    );
    assert.deepEqual(rendered, [], "operations without a section on the page");

    // Redoc's search runs in a blob: worker; typing into it exercises worker-src.
    await page.getByPlaceholder("Search...").fill("Subscription");
    await page.locator("[role=search] li, [data-role='search:result']").first().waitFor({ timeout: 15_000 });

    assert.deepEqual(trouble.violations, [], "CSP violations");
    assert.deepEqual(trouble.consoleErrors, [], "console errors");
    assert.deepEqual(trouble.failedRequests, [], "failed requests");
    await page.close();
  });

  it("an inline script is refused by the page's CSP (the policy the test watches is really applied)", async () => {
    const page = await browser.newPage();
    const trouble = await watch(page);
    await page.goto(`${wharf.apiUrl}/docs`, { waitUntil: "load" });
    await page.evaluate(() => {
      const { document } = globalThis as unknown as PageGlobals;
      const script = document.createElement("script");
      script.textContent = "window.inlineRan = true";
      document.body.append(script);
    });
    const ran = await page.evaluate(() => (globalThis as unknown as PageGlobals).inlineRan === true);
    assert.equal(ran, false, "an inline script does not run");
    await page.waitForTimeout(200);
    assert.ok(
      trouble.violations.some((v) => v.startsWith("script-src")),
      `a script-src violation is reported: ${JSON.stringify(trouble.violations)}`,
    );
    await page.close();
  });
});
