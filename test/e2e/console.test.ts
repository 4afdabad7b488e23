import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { BrowserContext, Page } from "playwright-core";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import { BUILT_IN_ROLE_UIDS } from "../../src/authz/built-in-roles.js";
import { newChildUid } from "../../src/core/uidp.js";
import { chromiumSkip, launchChromium } from "../support/chromium.js";
import { type ImageLayoutResult, writeImageLayout } from "../support/oci-layout.js";
import { type OidcPeer, startOidcPeer } from "../support/oidc-peer.js";
import { runSkopeo, skopeoSkip } from "../support/skopeo.js";
import { WHARF } from "../support/wharf-process.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const run = promisify(execFile);

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
    browser = await launchChromium({ clipboard: true });
    work = await mkdtemp(join(tmpdir(), "wharf-console-test-"));
  });
  after(async () => {
    await browser?.close();
    await wharf?.close();
    await peer?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  let work: string;

  /** Signs `page` in with the administrator's token through the form. */
  async function signIn(page: Page): Promise<void> {
    await page.getByLabel("Token", { exact: true }).fill(wharf.adminToken);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByTestId("signed-in-as").filter({ hasText: "admin" }).waitFor();
  }

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

  it("signs the tab out when the pasted token expires", async () => {
    const page = await open("/");
    await page.getByLabel("Token", { exact: true }).fill(await wharf.tokenFor(ADMIN_IDENTITY_UID, 4));
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("heading", { name: /^Welcome/ }).waitFor();
    await page.getByRole("heading", { name: "Sign in to Wharf" }).waitFor({ timeout: 15_000 });
    assert.equal(await page.evaluate<number>("sessionStorage.length"), 0);
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

  // Flows 2–5 share one organization, repository and images, in order.
  let repoPath: string;
  let repoUid: string;
  let v1: ImageLayoutResult;
  let v2: ImageLayoutResult;
  const registryHost = () => new URL(wharf.registryUrl).host;

  it("flow 2: creates an organization (a bad name is refused beside the field), a folder it deletes, and a repository", async () => {
    const page = await open("/orgs");
    await signIn(page);
    await page.getByRole("heading", { name: "Organizations" }).waitFor();
    await page.getByRole("link", { name: "acme", exact: true }).waitFor();

    const orgName = page.getByRole("textbox", { name: "New organization" });
    await orgName.fill("Bad Name");
    await page.getByRole("button", { name: "Create organization" }).click();
    await page.locator("input[aria-invalid=true]").waitFor();
    const describedBy = (await orgName.getAttribute("aria-describedby")) ?? "";
    const beside = page.locator(`[id="${describedBy.split(" ").at(-1)}"]`);
    assert.ok(
      ((await beside.textContent()) ?? "").length > 0,
      "the server's violation is shown beside the field",
    );
    assert.match((await page.getByRole("alert").textContent()) ?? "", /INVALID_ARGUMENT/);

    await orgName.fill("shop");
    await page.getByRole("button", { name: "Create organization" }).click();
    await page.getByRole("link", { name: "shop", exact: true }).waitFor();

    await page.getByRole("button", { name: "New folder in shop" }).click();
    await page.getByRole("textbox", { name: "New folder in shop" }).fill("tmp");
    await page.getByRole("button", { name: "Create folder" }).click();
    await page.getByRole("link", { name: "tmp", exact: true }).waitFor();
    await screenshot(page, "orgs");
    await page.getByRole("button", { name: "Delete tmp" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete tmp?" });
    await dialog.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("link", { name: "tmp", exact: true }).waitFor({ state: "detached" });

    await page.getByRole("link", { name: "shop", exact: true }).click();
    await page.getByRole("heading", { name: "Repositories of shop" }).waitFor();
    await page.getByText("No repositories yet").waitFor();
    assert.match(
      (await page.locator("pre.command").textContent()) ?? "",
      new RegExp(`${registryHost()}/shop/app`),
    );
    await screenshot(page, "group-empty");
    await page.getByRole("textbox", { name: "New repository" }).fill("web");
    await page.getByRole("button", { name: "Create repository" }).click();
    await page.getByRole("heading", { name: `${registryHost()}/shop/web` }).waitFor();
    await page.getByText("No tags yet").waitFor();
    repoPath = new URL(page.url()).pathname;
    repoUid = repoPath.slice("/repos/".length).split("/").map(decodeURIComponent).join("/");
    await page.goBack();
    await page.getByRole("link", { name: "web", exact: true }).waitFor();
    await screenshot(page, "group");
    await page.close();
  });

  it("lists a group's repositories with name search, sort and pages", async () => {
    assert.ok(repoUid, "flow 2 created the repository");
    const shop = repoUid.split("/").slice(0, -1).join("/");
    for (const name of ["api", "web-admin", "docs"])
      await wharf.create(`/registry/v2/repos/${shop}`, { name });
    const page = await open(`/groups/${shop}`);
    await signIn(page);
    const names = async () =>
      (await page.locator("table tbody tr td:first-child").allTextContents()).join(",");
    await page.getByRole("link", { name: "web-admin" }).waitFor();
    assert.equal(await names(), "api,docs,web,web-admin");
    await page.getByLabel("Sort").selectOption("name desc");
    await page.waitForURL(/sort=name\+desc/);
    await page.getByRole("row").nth(1).filter({ hasText: "web-admin" }).waitFor();
    assert.equal(await names(), "web-admin,web,docs,api");
    await page.getByRole("searchbox", { name: "Search by name" }).fill("WEB");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.waitForURL(/q=WEB/);
    await page.getByText("Page 1 of 1 (2 repositories)").waitFor();
    assert.equal(await names(), "web-admin,web");
    await page.getByRole("searchbox", { name: "Search by name" }).fill("nothing-like-it");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.getByText(/No repository name contains/).waitFor();
    await page.close();
  });

  it("flow 3: two images pushed to one tag with skopeo are both on the timeline, newest first", {
    skip: skopeoSkip,
  }, async () => {
    assert.ok(repoUid, "flow 2 created the repository");
    const source = join(work, "source");
    v1 = await writeImageLayout(source, { tag: "v1", files: { "etc/version": "1\n" } });
    v2 = await writeImageLayout(source, { tag: "v2", files: { "etc/version": "2\n" }, layers: 2 });
    const creds = `_token:${await wharf.registryToken()}`;
    for (const tag of ["v1", "v2"]) {
      const pushed = await runSkopeo([
        "copy",
        "--dest-tls-verify=false",
        "--dest-creds",
        creds,
        `oci:${source}:${tag}`,
        `docker://${registryHost()}/shop/web:latest`,
      ]);
      assert.equal(pushed.code, 0, pushed.stderr);
    }
    const eol = await wharf.api(`/registry/v2/tags/${repoUid}`, {
      method: "POST",
      token: wharf.adminToken,
      body: { name: "old", digest: v1.manifestDigest, deprecated: true },
    });
    assert.equal(eol.status, 200, await eol.text());
    const page = await open(repoPath);
    await signIn(page);
    await page.getByRole("heading", { name: "History of latest" }).waitFor();
    await page.getByRole("row").filter({ hasText: "old" }).getByText("deprecated (EOL)").waitFor();
    assert.equal(
      await page.getByText("deprecated (EOL)").count(),
      1,
      "only the deprecated tag has the badge",
    );
    const records = page.getByTestId("history-record");
    await records.nth(1).waitFor();
    assert.equal(await records.count(), 2);
    const [newest, oldest] = [records.nth(0), records.nth(1)];
    assert.match((await newest.textContent()) ?? "", new RegExp(v2.manifestDigest.slice(0, 19)));
    assert.match((await newest.textContent()) ?? "", /current/);
    assert.match((await oldest.textContent()) ?? "", new RegExp(v1.manifestDigest.slice(0, 19)));
    await oldest.getByTestId("architectures").filter({ hasText: "amd64" }).waitFor();
    assert.match((await oldest.textContent()) ?? "", /\d+(\.\d)? (B|KiB)/, "a size");
    assert.match((await page.getByRole("row").filter({ hasText: "latest" }).textContent()) ?? "", /ago/);
    assert.match(
      (await page.locator("pre.command").first().textContent()) ?? "",
      /docker pull .*\/shop\/web:latest/,
    );
    // A signature tag is hidden until "Also show" asks for it.
    const sigTag = `sha256-${v1.manifestDigest.slice("sha256:".length)}.sig`;
    const sig = await wharf.api(`/registry/v2/tags/${repoUid}`, {
      method: "POST",
      token: wharf.adminToken,
      body: { name: sigTag, digest: v1.manifestDigest },
    });
    const sigBody = await sig.text();
    assert.equal(sig.status, 200, sigBody);
    const sigUid = (JSON.parse(sigBody) as { uid: string }).uid;
    await page.reload();
    await page.getByRole("heading", { name: "History of latest" }).waitFor();
    assert.equal(await page.getByRole("row").filter({ hasText: sigTag }).count(), 0, "hidden by default");
    await page.getByRole("checkbox", { name: /signature and referrer tags/ }).check();
    await page.getByRole("row").filter({ hasText: sigTag }).waitFor();
    await screenshot(page, "repo");
    await page.close();
    await wharf.api(`/registry/v2/tags/${sigUid}`, { method: "DELETE", token: wharf.adminToken });
  });

  it("flow 4: the older record's pinned reference, copied, pulls that image with skopeo", {
    skip: skopeoSkip,
  }, async () => {
    assert.ok(v1, "flow 3 pushed the images");
    const page = await open(repoPath);
    await signIn(page);
    const oldest = page.getByTestId("history-record").nth(1);
    await oldest.waitFor();
    await oldest.getByRole("button", { name: /^Copy pinned reference/ }).click();
    await oldest
      .getByRole("button", { name: /^Copy pinned reference/ })
      .filter({ hasText: "Copied" })
      .waitFor();
    const pinned = await page.evaluate<string>("navigator.clipboard.readText()");
    assert.equal(pinned, `${registryHost()}/shop/web@${v1.manifestDigest}`);
    const creds = `_token:${await wharf.registryToken()}`;
    const out = join(work, "pulled");
    const pulled = await runSkopeo([
      "copy",
      "--src-tls-verify=false",
      "--src-creds",
      creds,
      `docker://${pinned}`,
      `oci:${out}:old`,
    ]);
    assert.equal(pulled.code, 0, pulled.stderr);
    const index = JSON.parse(readFileSync(join(out, "index.json"), "utf8")) as {
      manifests: { digest: string }[];
    };
    assert.equal(index.manifests[0]?.digest, v1.manifestDigest, "the older image, not what latest is now");
    await page.close();
  });

  it("flow 5: an uploaded vulnerability report shows its counts on the timeline and on the digest page", {
    skip: skopeoSkip,
  }, async () => {
    assert.ok(v1, "flow 3 pushed the images");
    const report = readFileSync(new URL("../fixtures/vulnreports/grype.json", import.meta.url));
    const uploaded = await fetch(
      `${wharf.apiUrl}/registry/v1/vuln_reports/${repoUid}?digest=${v1.manifestDigest}`,
      {
        method: "POST",
        headers: { authorization: `Bearer ${wharf.adminToken}`, "content-type": "application/json" },
        body: report,
      },
    );
    assert.equal(uploaded.status, 200, await uploaded.text());

    const page = await open(repoPath);
    await signIn(page);
    const [newest, oldest] = [
      page.getByTestId("history-record").nth(0),
      page.getByTestId("history-record").nth(1),
    ];
    const counts = oldest.getByTestId("severity-counts");
    await counts.waitFor();
    assert.equal(await counts.textContent(), "1 critical1 high1 medium1 low");
    await newest.getByText("no vulnerability report").waitFor();

    await oldest.getByRole("link", { name: v1.manifestDigest.slice(0, 19) }).click();
    await page.getByRole("heading", { name: v1.manifestDigest.slice(0, 19) }).waitFor();
    const summary = page.getByTestId("severity-summary");
    await summary.waitFor();
    assert.match(
      (await summary.getByRole("row").filter({ hasText: "critical" }).textContent()) ?? "",
      /^critical1\d$/,
    );
    const matches = page.getByTestId("matches").locator("tbody tr");
    assert.equal(await matches.count(), 4);
    assert.ok(
      (await page.getByRole("link", { name: "CVE-2026-10003" }).getAttribute("href"))?.startsWith("https://"),
      "each vulnerability links to its description",
    );
    await page.getByLabel("Fixable only").check();
    assert.equal(await matches.count(), 2, "two matches have a fix");
    await page.getByLabel("Fixable only").uncheck();
    await page.getByLabel("Minimum severity").selectOption("high");
    assert.equal(await matches.count(), 2, "critical and high");
    await page.getByRole("cell", { name: "amd64" }).waitFor();
    await page.getByText("No signatures, SBOMs or attestations").waitFor();
    await screenshot(page, "image");
    await page.close();
  });

  it("renders the readme safely: marks and links, hostile HTML as text, no script or image", {
    skip: skopeoSkip,
  }, async () => {
    assert.ok(repoUid, "flow 2 created the repository");
    const readme = [
      "# Shop web",
      "Run **it** with `docker run`; see [the docs](https://example.com/docs).",
      '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">',
      "[bad](javascript:window.pwned=3)",
    ].join("\n\n");
    // The API refuses such a readme; one already stored (older server, direct import) must stay inert.
    const refused = await wharf.api(`/registry/v2/repos/${repoUid}/readme`, {
      method: "PATCH",
      token: wharf.adminToken,
      body: { content: readme },
    });
    assert.equal(refused.status, 400);
    const row = await wharf.store.repos.get(repoUid);
    assert.ok(row);
    await wharf.store.repos.update({ ...row, readme });
    const page = await open(repoPath);
    await signIn(page);
    const rendered = page.locator(".readme");
    await rendered.getByRole("heading", { name: "Shop web" }).waitFor();
    assert.equal(await rendered.locator("strong").textContent(), "it");
    assert.equal(
      await rendered.getByRole("link", { name: "the docs" }).getAttribute("href"),
      "https://example.com/docs",
    );
    assert.equal(await rendered.locator("script, img, [onerror]").count(), 0);
    assert.match((await rendered.textContent()) ?? "", /<script>window\.pwned = 1<\/script>/);
    await rendered.getByText("bad", { exact: true }).click();
    assert.equal(await page.evaluate<unknown>("window.pwned"), undefined, "nothing in the readme ran");
    await page.close();
  });

  it("keeps another organization's member out: the repository page shows PERMISSION_DENIED", {
    skip: skopeoSkip,
  }, async () => {
    assert.ok(repoPath, "flow 2 created the repository");
    const outsider = await wharf.create(`/iam/v2/identities/${acme}`, {
      name: "outsider",
      claimMatch: { issuer: "https://ci.example", subject: "outsider" },
    });
    await wharf.create(`/iam/v2/roleBindings/${acme}`, {
      identityUid: outsider,
      roleUid: BUILT_IN_ROLE_UIDS.owner,
    });
    const page = await open(repoPath);
    await page.getByLabel("Token", { exact: true }).fill(await wharf.tokenFor(outsider));
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("alert").filter({ hasText: "PERMISSION_DENIED" }).first().waitFor();
    assert.equal(await page.getByTestId("history-record").count(), 0, "no history of shop/web");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Organizations" }).click();
    await page.getByRole("link", { name: "acme", exact: true }).waitFor();
    assert.equal(
      await page.getByRole("link", { name: "shop", exact: true }).count(),
      0,
      "shop is not listed",
    );
    await page.close();
  });

  it("is usable at a phone's width (390 px): no sideways scrolling, navigation reachable", {
    skip: skopeoSkip,
  }, async () => {
    assert.ok(v1, "flow 3 pushed the images");
    const page = await open(repoPath);
    await page.setViewportSize({ width: 390, height: 844 });
    await signIn(page);
    await page.getByTestId("history-record").nth(1).waitFor();
    const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth");
    assert.ok(overflow <= 0, `the page is ${overflow} px wider than the screen`);
    await page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Organizations" })
      .waitFor();
    await screenshot(page, "repo-phone");
    await page.close();
  });

  it("is keyboard-usable: the first Tab reaches 'Skip to content', which moves focus to the page", async () => {
    const page = await open("/advisories");
    await signIn(page);
    await page.getByRole("heading", { name: "Security advisories" }).waitFor();
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate<string>("document.activeElement?.textContent ?? ''"), "Skip to content");
    await page.keyboard.press("Enter");
    assert.equal(new URL(page.url()).hash, "#main");
    await page.getByText("No advisory matches").waitFor();
    await screenshot(page, "advisories-empty");
    await page.getByRole("link", { name: "Libraries" }).click();
    await page.getByRole("tab", { name: /Java/ }).first().waitFor();
    await page.getByText("No library matches").waitFor();
    await screenshot(page, "libraries-empty");
    await page.close();
  });

  it("searches advisories by alias and browses libraries by ecosystem, with versions", async () => {
    const imported = await run(process.execPath, [
      WHARF,
      "import",
      "libraries",
      fileURLToPath(new URL("../fixtures/libraries/catalogue.jsonl", import.meta.url)),
      "--data-dir",
      wharf.dataDir,
    ]);
    assert.match(imported.stderr, /created 21/);
    const now = Date.now();
    for (const [i, name, alias] of [
      [1, "openssl", "CVE-2026-10003"],
      [2, "curl", "CVE-2026-20001"],
    ] as const) {
      await wharf.store.advisories.upsert({
        ...{
          uid: String(i).repeat(40),
          advisoryId: `CGA-000${i}-0000-0000`,
          legacyAdvisoryId: "",
          author: "test",
        },
        ...{ artifactName: name, artifactType: "apk", artifactArchitecture: "", componentName: "" },
        ...{ componentType: "", componentLocation: "", originPackage: name, packageNamespace: "wolfi" },
        ...{ aliases: [alias], events: [], severities: [], findings: "", createTime: now, updateTime: now },
      });
    }
    const page = await open("/advisories");
    await signIn(page);
    const rows = page.locator("table tbody tr");
    await rows.nth(1).waitFor();
    assert.equal(await rows.count(), 2);
    await page.getByLabel("Alias (CVE-…, GHSA-…)").fill("CVE-2026-20001");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.getByText("1 advisories").waitFor();
    assert.match((await rows.first().textContent()) ?? "", /CGA-0002-0000-0000.*curl/);
    await screenshot(page, "advisories");

    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Libraries" }).click();
    const java = page.getByRole("tab", { name: /^Java \(\d+\)$/ });
    await java.waitFor();
    assert.equal(await java.getAttribute("aria-selected"), "true");
    await page.getByRole("button", { name: "org.springframework:spring-core" }).click();
    const versions = page.locator("table.versions tbody tr");
    await versions.first().waitFor();
    assert.match((await versions.first().textContent()) ?? "", /^6\.1\.5/, "newest version first");
    await page.getByRole("tab", { name: /^Python/ }).click();
    await page.getByRole("button", { name: "Flask-Admin" }).waitFor();
    await page.getByLabel("Name contains").fill("flask");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.getByRole("button", { name: "Flask-Admin" }).waitFor();
    await screenshot(page, "libraries");
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
