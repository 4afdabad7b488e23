import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { BrowserContext, Page } from "playwright-core";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import { BUILT_IN_ROLE_UIDS } from "../../src/authz/built-in-roles.js";
import { newChildUid } from "../../src/core/uidp.js";
import { chromiumSkip, launchChromium } from "../support/chromium.js";
import { type OidcPeer, startOidcPeer } from "../support/oidc-peer.js";
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
  let peer: OidcPeer;
  let acme: string;
  let acmeIdp: string;
  /** Console errors and CSP violations: any is a failure. */
  const problems: string[] = [];

  before(async () => {
    wharf = await startTestServer();
    peer = await startOidcPeer({
      clients: [{ clientId: "wharf", redirectUris: [`${wharf.apiUrl}/oauth/callback`] }],
      accounts: { alice: { email: "alice@example.com", email_verified: true, name: "Alice" } },
    });
    acme = await wharf.create("/iam/v2/groups", { name: "acme" });
    acmeIdp = newChildUid(acme);
    const now = Date.now();
    await wharf.store.identityProviders.insert({
      uid: acmeIdp,
      groupUid: acme,
      name: "acme-sso",
      description: "",
      defaultRole: BUILT_IN_ROLE_UIDS.viewer,
      oidc: {
        issuer: peer.issuer,
        clientId: "wharf",
        clientSecret: "secret-wharf",
        additionalScopes: [],
        groupsClaim: "",
        correlationRule: 0,
        pkceEnabled: false,
      },
      createTime: now,
      updateTime: now,
    });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await wharf?.close();
    await peer?.close();
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
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByText("This is not a token").waitFor();

    const forged = `${wharf.adminToken.slice(0, -4)}AAAA`;
    await page.getByLabel("Token", { exact: true }).fill(forged);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    const refused = page.getByRole("alert").filter({ hasText: "UNAUTHENTICATED" });
    await refused.waitFor();

    await page.getByLabel("Token", { exact: true }).fill(`Bearer ${wharf.adminToken}`);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("heading", { name: /^Welcome/ }).waitFor();
    assert.equal(await page.getByTestId("signed-in-as").getAttribute("title"), ADMIN_IDENTITY_UID);
    assert.equal(await page.getByText("Server administrator").count(), 1);
    await screenshot(page, "home");

    await page.reload();
    await page.getByRole("heading", { name: /^Welcome/ }).waitFor();
    assert.ok(
      await page.evaluate<boolean>(`sessionStorage.getItem("wharf.console.session")?.includes(".")`),
      "the token is kept for the tab",
    );
    assert.equal(await page.evaluate<number>("localStorage.length"), 0, "and nowhere else");

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in to Wharf" }).waitFor();
    assert.equal(await page.evaluate<number>("sessionStorage.length"), 0, "sign out forgets the token");
    await page.close();
  });

  it("signs in through an organization's identity provider (PKCE) and shows the person's groups", async () => {
    const page = await open(`/orgs?identity_provider=${newChildUid(acme)}`);
    await page.getByRole("button", { name: "Continue to sign in" }).click();
    await page.getByRole("alert").filter({ hasText: "NOT_FOUND" }).waitFor();
    assert.equal(new URL(page.url()).pathname, "/orgs", "an unknown provider is refused before leaving");

    await page.getByRole("textbox", { name: /identity provider/ }).fill(acmeIdp);
    await page.getByRole("button", { name: "Continue to sign in" }).click();
    await page.waitForURL((url) => url.pathname === "/orgs", { timeout: 30_000 });
    await page.getByTestId("signed-in-as").filter({ hasText: "alice@example.com" }).waitFor();
    assert.equal(
      await page.evaluate<string | null>(`sessionStorage.getItem("wharf.console.login")`),
      null,
      "the pending login is used once",
    );
    await page.getByRole("link", { name: "Wharf" }).click();
    const row = page.getByRole("row").filter({ hasText: "acme" });
    await row.waitFor();
    assert.match((await row.textContent()) ?? "", /viewer/);
    await screenshot(page, "home-browser-login");

    // The callback again (a replayed URL): refused with a clear message, not signed in twice.
    const replay = await browser.newPage();
    await replay.goto(`${wharf.apiUrl}/login/callback?code=x&state=y`);
    await replay.getByRole("alert").filter({ hasText: "not started in this tab" }).waitFor();
    await replay.close();
    await page.close();
  });

  it("shows a not-found page for console paths that name no page", async () => {
    const page = await open("/no/such/page");
    await page.getByLabel("Token", { exact: true }).fill(wharf.adminToken);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("heading", { name: "Page not found" }).waitFor();
    await page.close();
  });

  it("logged no console error and no CSP violation", () => {
    // The browser logs each refused API call (the tests make some on purpose); anything else counts.
    const unexpected = problems.filter((p) => !/the server responded with a status of 4\d\d/.test(p));
    assert.deepEqual(unexpected, []);
  });
});
