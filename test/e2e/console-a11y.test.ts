// The console's accessibility in headless Chromium against a real server (SQLite: nothing here
// depends on the storage engine): axe on every page with realistic data, in the light and the dark
// theme, and the keyboard-only flows (sign in, skip link, delete with a confirmation).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { BrowserContext, Locator, Page } from "playwright-core";
import { builtInRoleUid } from "../../src/authz/built-in-roles.js";
import { expectJson } from "../support/api-assertions.js";
import { assertAccessible } from "../support/axe.js";
import { chromiumSkip, launchChromium } from "../support/chromium.js";
import { type BuiltImage, buildImage, pushImage } from "../support/registry-push.js";
import { attachReferrer } from "../support/sbom-referrer.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { WHARF } from "../support/wharf-process.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const run = promisify(execFile);

/** Where screenshots go (git-ignored); CI keeps them as artifacts. */
const ARTIFACTS = join(new URL("../..", import.meta.url).pathname, "test-artifacts", "console");

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** One console page to check: where it is and what shows that its data has rendered. */
interface PageCheck {
  label: string;
  path: () => string;
  ready: (page: Page) => Locator;
  /** Optional: opens what the page shows on demand (a library's versions…) before the check. */
  expand?: (page: Page) => Promise<void>;
}

describe("the console's accessibility in headless Chromium", { skip: chromiumSkip }, () => {
  let wharf: TestServer;
  let receiver: WebhookReceiver;
  /** A sink that always answers 500: its subscription's deliveries end as dead letters. */
  let failing: WebhookReceiver;
  let browser: BrowserContext;
  let acme: string;
  let team: string;
  let repoUid: string;
  let subscription: string;
  let reported: BuiltImage;
  let bare: BuiltImage;
  /** Console errors and CSP violations: any is a failure. */
  const problems: string[] = [];

  before(async () => {
    wharf = await startTestServer({
      events: { backoffBaseMs: 40, backoffMaxMs: 200, pollMs: 50 },
      // The receiver listens on loopback, which sinks may reach only when the server allows it.
      config: { eventsAllowLoopback: "true", eventsMaxAttempts: "2" },
    });
    receiver = await startWebhookReceiver();
    failing = await startWebhookReceiver();
    failing.respondWith(500);
    acme = await wharf.create("/iam/v2/groups", { name: "acme" });
    team = await wharf.create(`/iam/v2/groups/${acme}`, { name: "team" });
    await wharf.create(`/events/v2/subscriptions/${acme}`, { sink: receiver.url("/a11y") });
    subscription = await wharf.create(`/events/v2/subscriptions/${acme}`, { sink: failing.url("/dead") });

    // A repository with a tag history (two images on latest), an SBOM and a vulnerability report.
    const token = await wharf.registryToken();
    reported = await pushImage(wharf, "acme/web", "latest", token, buildImage("a11y-v1"));
    await pushImage(wharf, "acme/web", "1.0", token, reported);
    bare = await pushImage(wharf, "acme/web", "latest", token, buildImage("a11y-v2"));
    await pushImage(wharf, "acme/team/api", "main", token, buildImage("a11y-api"));
    await attachReferrer(
      wharf,
      "acme/web",
      token,
      reported.digest,
      readFileSync(new URL("../fixtures/sbom/spdx-2.3.dsse.json", import.meta.url)),
      {
        artifactType: "application/vnd.dsse.envelope.v1+json",
        layerMediaType: "application/vnd.dsse.envelope.v1+json",
        manifestAnnotations: { "in-toto.io/predicate-type": "https://spdx.dev/Document" },
        subjectSize: reported.manifest.length,
      },
    );
    const repos = await expectJson<{ repos: { uid: string }[] }>(
      await wharf.api(`/registry/v2/repos?uidp.children_of=${acme}&name=web`, { token: wharf.adminToken }),
    );
    repoUid = repos.repos[0]?.uid as string;
    const uploaded = await fetch(
      `${wharf.apiUrl}/registry/v1/vuln_reports/${repoUid}?digest=${reported.digest}`,
      {
        method: "POST",
        headers: { authorization: `Bearer ${wharf.adminToken}`, "content-type": "application/json" },
        body: readFileSync(new URL("../fixtures/vulnreports/grype.json", import.meta.url)),
      },
    );
    assert.equal(uploaded.status, 200, await uploaded.text());

    // Access: an identity bound to a role, a custom role, an invite and an identity provider.
    const ci = await wharf.create(`/iam/v2/identities/${acme}`, {
      name: "ci",
      claimMatch: { issuer: "https://ci.example", subject: "repo:acme/web" },
    });
    await wharf.create(`/iam/v2/roleBindings/${acme}`, {
      identityUid: ci,
      roleUid: builtInRoleUid("registry.push"),
    });
    await wharf.create(`/iam/v2/roles/${acme}`, {
      name: "reader",
      capabilities: ["CAP_REPO_LIST", "CAP_TAG_LIST"],
    });
    await wharf.create(`/iam/v2/groupInvites/${acme}`, { roleUid: builtInRoleUid("viewer"), ttl: "3600s" });
    await wharf.create(`/iam/v2/identityProviders/${acme}`, {
      name: "okta",
      defaultRole: builtInRoleUid("viewer"),
      oidc: { issuer: "https://login.acme.example", clientId: "wharf", pkceEnabled: true },
    });

    // Advisories and the library catalogue.
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
    const imported = await run(process.execPath, [
      WHARF,
      "import",
      "libraries",
      fileURLToPath(new URL("../fixtures/libraries/catalogue.jsonl", import.meta.url)),
      "--data-dir",
      wharf.dataDir,
    ]);
    assert.match(imported.stderr, /created \d+/);

    // One subscription has delivered events, the other has dead letters.
    await receiver.waitFor((a) => a.some((d) => d.path === "/a11y"));
    for (const deadline = Date.now() + 20_000; ; ) {
      const sub = await expectJson<{ status?: { failed?: string } }>(
        await wharf.api(`/events/v2/subscriptions/${subscription}`, { token: wharf.adminToken }),
      );
      if (Number(sub.status?.failed ?? 0) > 0) break;
      assert.ok(Date.now() < deadline, `no dead letter yet: ${JSON.stringify(sub)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await receiver?.close();
    await failing?.close();
    await wharf?.close();
  });

  function watch(page: Page, label: string): Page {
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(`${label}: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`${label}: ${e.message}`));
    return page;
  }

  /** Checks the page in the light theme, then the dark one (and back). */
  async function assertAccessibleInBothThemes(page: Page, label: string): Promise<void> {
    await page.emulateMedia({ colorScheme: "light" });
    await assertAccessible(page, `${label} (light)`);
    await page.emulateMedia({ colorScheme: "dark" });
    await assertAccessible(page, `${label} (dark)`);
    await page.emulateMedia({ colorScheme: "light" });
  }

  it("the sign-in page has no serious or critical violation, light or dark", async () => {
    const page = watch(await browser.newPage(), "sign-in");
    await page.goto(`${wharf.apiUrl}/`);
    await page.getByRole("heading", { name: "Sign in to Wharf" }).waitFor();
    await assertAccessibleInBothThemes(page, "sign-in page");
    // A refused token: the error shown is checked too.
    await page.getByLabel("Token", { exact: true }).fill("not-a-token");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByText("This is not a token").waitFor();
    await assertAccessibleInBothThemes(page, "sign-in page with an error");
    await page.close();
  });

  it("the browser login's callback page, refusing a replayed URL, has no serious or critical violation", async () => {
    const page = watch(await browser.newPage(), "login callback");
    await page.goto(`${wharf.apiUrl}/login/callback?code=x&state=y`);
    await page.getByRole("alert").filter({ hasText: "not started in this tab" }).waitFor();
    await assertAccessibleInBothThemes(page, "login callback page");
    await page.close();
  });

  describe("every page of the console, with data, light and dark", () => {
    let page: Page;
    before(async () => {
      page = watch(await browser.newPage(), "pages");
      await page.goto(`${wharf.apiUrl}/`);
      await page.getByLabel("Token", { exact: true }).fill(wharf.adminToken);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await page.getByTestId("signed-in-as").filter({ hasText: "admin" }).waitFor();
    });
    after(async () => {
      await page?.close();
    });

    const repoPath = () => `/repos/${repoUid.split("/").map(encodeURIComponent).join("/")}`;
    const PAGES: PageCheck[] = [
      {
        label: "home",
        path: () => "/",
        ready: (p) => p.getByText("Server administrator"),
      },
      {
        label: "organizations",
        path: () => "/orgs",
        ready: (p) => p.getByRole("link", { name: "acme", exact: true }),
      },
      {
        label: "group",
        path: () => `/groups/${acme}`,
        ready: (p) => p.getByRole("link", { name: "web", exact: true }),
      },
      { label: "folder", path: () => `/groups/${team}`, ready: (p) => p.getByRole("link", { name: "api" }) },
      {
        label: "repository",
        path: repoPath,
        ready: (p) => p.getByTestId("history-record").nth(1).getByTestId("severity-counts"),
      },
      {
        label: "image with report and SBOM",
        path: () => `/images/${reported.digest}/${repoUid}`,
        ready: (p) => p.getByTestId("sbom-packages").locator("tbody tr").first(),
      },
      {
        label: "image without report",
        path: () => `/images/${bare.digest}/${repoUid}`,
        ready: (p) => p.getByText("No SBOM attached"),
      },
      {
        label: "advisories",
        path: () => "/advisories",
        ready: (p) => p.getByRole("cell", { name: "CGA-0002-0000-0000" }),
      },
      {
        label: "libraries",
        path: () => "/libraries",
        ready: (p) => p.getByRole("button", { name: "org.springframework:spring-core" }),
        expand: async (p) => {
          await p.getByRole("button", { name: "org.springframework:spring-core" }).click();
          await p.locator("table.versions tbody tr").first().waitFor();
        },
      },
      {
        label: "access: group choice",
        path: () => "/access",
        ready: (p) => p.getByRole("navigation", { name: /Groups/ }).getByRole("link", { name: "acme" }),
      },
      {
        label: "access: identities",
        path: () => `/access/${acme}?tab=identities`,
        ready: (p) => p.getByRole("cell", { name: /^ci / }),
      },
      {
        label: "access: roles",
        path: () => `/access/${acme}?tab=roles`,
        ready: (p) => p.getByRole("button", { name: "Delete role reader" }),
      },
      {
        label: "access: role bindings",
        path: () => `/access/${acme}?tab=bindings`,
        ready: (p) => p.getByRole("button", { name: "Delete role binding of ci to registry.push" }),
      },
      {
        label: "access: invites",
        path: () => `/access/${acme}?tab=invites`,
        ready: (p) => p.getByRole("button", { name: /^Delete invite / }),
      },
      {
        label: "access: identity providers",
        path: () => `/access/${acme}?tab=providers`,
        ready: (p) => p.getByRole("button", { name: "Delete identity provider okta" }),
      },
      {
        label: "access: pull tokens",
        path: () => `/access/${acme}?tab=pull-tokens`,
        ready: (p) => p.getByText("No pull tokens"),
      },
      {
        label: "webhooks: group choice",
        path: () => "/webhooks",
        ready: (p) => p.getByRole("link", { name: "acme" }).last(),
      },
      {
        label: "webhooks: subscriptions",
        path: () => `/webhooks/${acme}`,
        ready: (p) => p.getByRole("cell", { name: receiver.url("/a11y"), exact: true }),
      },
      {
        label: "webhooks: deliveries",
        path: () => `/webhooks/deliveries/${subscription}`,
        ready: (p) => p.getByRole("row", { name: /failed/ }).first(),
      },
      {
        label: "not found",
        path: () => "/no/such/page",
        ready: (p) => p.getByRole("heading", { name: "Page not found" }),
      },
    ];

    for (const check of PAGES) {
      it(`${check.label}: no serious or critical axe violation`, async () => {
        await page.goto(`${wharf.apiUrl}${check.path()}`);
        await check.ready(page).waitFor();
        await check.expand?.(page);
        await assertAccessibleInBothThemes(page, check.label);
      });
    }

    it("takes the dark theme's screenshots of the repository and the image", async () => {
      await page.emulateMedia({ colorScheme: "dark" });
      await page.goto(`${wharf.apiUrl}${repoPath()}`);
      await page.getByTestId("history-record").nth(1).getByTestId("severity-counts").waitFor();
      const background = await page.evaluate<string>(
        "getComputedStyle(document.documentElement).backgroundColor",
      );
      assert.notEqual(background, "rgb(255, 255, 255)", "the dark theme's background is not white");
      await screenshot(page, "a11y-dark-repo");
      await page.goto(`${wharf.apiUrl}/images/${reported.digest}/${repoUid}`);
      await page.getByTestId("sbom-packages").locator("tbody tr").first().waitFor();
      await screenshot(page, "a11y-dark-image");
      await page.emulateMedia({ colorScheme: "light" });
    });
  });

  /** Presses `key` until `target` has the focus (at most `max` times); fails if it never does. */
  async function pressUntilFocused(page: Page, target: Locator, key = "Tab", max = 80): Promise<void> {
    for (let i = 0; i < max; i++) {
      await page.keyboard.press(key);
      if (await isFocused(target)) return;
    }
    assert.fail(`${max} × ${key} never reached ${target}`);
  }

  /** The browser's document, for the functions that run in the page (the tests compile without DOM types). */
  interface PageDocument {
    activeElement: unknown;
  }
  const isFocused = (target: Locator) =>
    target.evaluate((el) => el === (el.ownerDocument as unknown as PageDocument).activeElement);

  describe("keyboard only", () => {
    let page: Page;
    before(async () => {
      page = watch(await browser.newPage(), "keyboard");
    });
    after(async () => {
      await page?.close();
    });

    it("signs in: Tab reaches the token field, the token is typed and Enter submits", async () => {
      await page.goto(`${wharf.apiUrl}/webhooks/${acme}`);
      await page.getByRole("heading", { name: "Sign in to Wharf" }).waitFor();
      await pressUntilFocused(page, page.getByLabel("Token", { exact: true }));
      await page.keyboard.type(wharf.adminToken);
      await page.keyboard.press("Enter");
      await page.getByTestId("signed-in-as").filter({ hasText: "admin" }).waitFor();
      await page.getByRole("heading", { name: "Webhooks: acme" }).waitFor();
    });

    it("the skip link is the first Tab stop and moves the focus to the page's main", async () => {
      await page.reload();
      await page.getByRole("heading", { name: "Webhooks: acme" }).waitFor();
      await page.keyboard.press("Tab");
      assert.ok(await isFocused(page.getByRole("link", { name: "Skip to content" })), "first Tab stop");
      await page.keyboard.press("Enter");
      assert.ok(await isFocused(page.locator("main#main")), "main has the focus");
      await page.keyboard.press("Tab");
      assert.ok(
        await page.evaluate<boolean>(`document.getElementById("main").contains(document.activeElement)`),
        "the next Tab stop is inside the page, past the header",
      );
    });

    it("deletes a webhook subscription: the question takes the focus and keeps it, Escape gives it back, Enter confirms", async () => {
      const sink = receiver.url("/keyboard");
      const uid = await wharf.create(`/events/v2/subscriptions/${acme}`, { sink });
      await page.goto(`${wharf.apiUrl}/webhooks/${acme}`);
      await page.getByRole("cell", { name: sink, exact: true }).waitFor();
      const remove = page.getByRole("button", { name: `Delete subscription to ${sink}` });
      await pressUntilFocused(page, remove);

      await page.keyboard.press("Enter");
      const question = page.getByRole("alertdialog", { name: `Confirm: delete subscription to ${sink}` });
      const [cancel, yes] = [
        question.getByRole("button", { name: "Cancel" }),
        question.getByRole("button", { name: "Yes, delete" }),
      ];
      assert.ok(await isFocused(cancel), "the question takes the focus, on Cancel");
      await page.keyboard.press("Tab");
      assert.ok(await isFocused(yes));
      await page.keyboard.press("Tab");
      assert.ok(await isFocused(cancel), "Tab stays within the question");
      await page.keyboard.press("Shift+Tab");
      assert.ok(await isFocused(yes), "and so does Shift+Tab");

      await page.keyboard.press("Escape");
      await question.waitFor({ state: "detached" });
      assert.ok(await isFocused(remove), "Escape gives the focus back to Delete");
      const kept = await wharf.api(`/events/v2/subscriptions/${uid}`, { token: wharf.adminToken });
      assert.equal(kept.status, 200, "Escape deleted nothing");
      await kept.arrayBuffer();

      await page.keyboard.press("Enter");
      await page.keyboard.press("Tab");
      assert.ok(await isFocused(yes));
      await page.keyboard.press("Enter");
      await page.getByRole("cell", { name: sink, exact: true }).waitFor({ state: "detached" });
      const gone = await wharf.api(`/events/v2/subscriptions/${uid}`, { token: wharf.adminToken });
      assert.equal(gone.status, 404, "the subscription is deleted");
      await gone.arrayBuffer();
    });

    it("deletes a repository through its modal dialog: focus moves in, Escape restores it, Enter confirms", async () => {
      await page.goto(`${wharf.apiUrl}/groups/${team}`);
      const remove = page.getByRole("button", { name: "Delete api", exact: true });
      await remove.waitFor();
      await pressUntilFocused(page, remove);

      await page.keyboard.press("Enter");
      const dialog = page.getByRole("dialog", { name: "Delete api?" });
      await dialog.waitFor();
      assert.ok(
        await dialog.evaluate((el) =>
          el.contains((el.ownerDocument as unknown as PageDocument).activeElement as typeof el),
        ),
        "the dialog takes the focus",
      );
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "hidden" });
      assert.ok(await isFocused(remove), "Escape gives the focus back to Delete api");
      assert.equal((await repoUidsOf(team)).length, 1, "Escape deleted nothing");

      await page.keyboard.press("Enter");
      await dialog.waitFor();
      await pressUntilFocused(page, dialog.getByRole("button", { name: "Delete", exact: true }), "Tab", 5);
      await page.keyboard.press("Enter");
      await page.getByRole("link", { name: "api", exact: true }).waitFor({ state: "detached" });
      assert.deepEqual(await repoUidsOf(team), [], "the repository is deleted");
    });
  });

  async function repoUidsOf(group: string): Promise<string[]> {
    const body = await expectJson<{ repos?: { uid: string }[] }>(
      await wharf.api(`/registry/v2/repos?uidp.children_of=${group}`, { token: wharf.adminToken }),
    );
    return (body.repos ?? []).map((r) => r.uid);
  }

  it("logged no console error and no CSP violation besides the refused token", () => {
    const unexpected = problems.filter((p) => !/the server responded with a status of 4\d\d/.test(p));
    assert.deepEqual(unexpected, []);
  });
});
