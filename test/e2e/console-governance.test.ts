// The console's governance pages (immutability rules, retention policies, quotas and usage, the
// audit log) in headless Chromium against a real server: every change made in the page is checked
// against the API, refusals show the API's words and keep the form's content.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { BrowserContext, Page } from "playwright-core";
import { expectJson } from "../support/api-assertions.js";
import { assertAccessible } from "../support/axe.js";
import { chromiumSkip, launchChromium } from "../support/chromium.js";
import { personWithRole, type RegisteredPerson } from "../support/registered-person.js";
import { pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

/** Where each page's screenshot goes (git-ignored); CI keeps it as an artifact. */
const ARTIFACTS = join(new URL("../..", import.meta.url).pathname, "test-artifacts", "console");

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

interface Rule {
  uid: string;
  tagPatterns: string[];
  description: string;
}
interface Policy {
  uid: string;
  description: string;
  schedule?: string;
  rules: { tagPattern?: string; keepLatest?: number; keepPushedWithin?: string }[];
  lastRun?: { deletedTags: string };
}
interface RemovedTag {
  repo: string;
  name: string;
  digest: string;
  reason: string;
}
interface Usage {
  storageBytes: string;
  repoCount: string;
  tagCount: string;
  quota: { storageBytes: string; repoCount: string };
}
interface AuditRecord {
  action: string;
  actor: { identity: string };
  result: { code: string; reason?: string };
}

describe("the console's governance pages in headless Chromium", { skip: chromiumSkip }, () => {
  let wharf: TestServer;
  let browser: BrowserContext;
  let acme: string;
  let globex: string;
  let app: string;
  let viewer: RegisteredPerson;
  /** Console errors and page errors: any is a failure, save the refusals a test provokes. */
  const problems: string[] = [];

  before(async () => {
    wharf = await startTestServer();
    acme = await wharf.create("/iam/v2/groups", { name: "acme" });
    globex = await wharf.create("/iam/v2/groups", { name: "globex" });
    const token = await wharf.registryToken();
    // Pushed in this order, each its own image: retention keeps `keep*` and removes the old ones.
    for (const tag of ["old-1", "old-2", "keep"])
      await pushImage(wharf, "acme/app", tag, token, `app ${tag}`);
    app = (
      await apiList<{ uid: string }>(`/registry/v2/repos?uidp.children_of=${acme}&name=app`, "repos")
    )[0]!.uid;
    viewer = await personWithRole(wharf, "victor", acme, "viewer");
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await wharf?.close();
  });

  /** Opens `path` in a new tab (its own sessionStorage), signed in with `token`. */
  async function open(path: string, token = wharf.adminToken): Promise<Page> {
    const page = await browser.newPage();
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(`${path}: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`${path}: ${e.message}`));
    await page.goto(`${wharf.apiUrl}${path}`);
    await page.getByLabel("Token", { exact: true }).fill(token);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByTestId("signed-in-as").waitFor();
    return page;
  }

  async function apiList<T>(path: string, key: string, token = wharf.adminToken): Promise<T[]> {
    const body = await expectJson<Record<string, T[]>>(await wharf.api(path, { token }));
    return body[key] ?? [];
  }

  const rulesOfAcme = () =>
    apiList<Rule>(`/registry/v2/immutabilityRules?uidp.descendants_of=${acme}`, "immutabilityRules");
  const policiesOfAcme = () =>
    apiList<Policy>(`/registry/v2/retentionPolicies?uidp.descendants_of=${acme}`, "retentionPolicies");
  const usageOfAcme = () =>
    wharf.api(`/registry/v2/usage/${acme}`, { token: wharf.adminToken }).then(expectJson<Usage>);

  it("immutability rules: a bad glob shows the field's error and keeps the form; create, reload, edit, delete", async () => {
    const page = await open("/governance/immutability");
    await page
      .getByRole("navigation", { name: /Groups/ })
      .getByRole("link", { name: "acme" })
      .click();
    await page.getByRole("heading", { name: "Governance: Immutability rules" }).waitFor();
    await page.getByText("No immutability rules").waitFor();

    const form = page.getByRole("region", { name: "Add an immutability rule" });
    await form.getByLabel("Applies to").selectOption({ label: "acme/app (repo)" });
    const patterns = form.getByLabel("Tag patterns");
    await patterns.fill("v* !v[1");
    await form.getByLabel("Description").fill("releases never move");
    await form.getByRole("button", { name: "Add rule" }).click();
    await form.getByRole("alert").filter({ hasText: "INVALID_ARGUMENT" }).waitFor();
    assert.equal(await patterns.getAttribute("aria-invalid"), "true", "the patterns are marked invalid");
    const errorId = (await patterns.getAttribute("aria-describedby"))?.split(" ").at(-1);
    assert.match((await page.locator(`[id="${errorId}"]`).textContent()) ?? "", /^tag_patterns\[1\]: /);
    assert.equal(await patterns.inputValue(), "v* !v[1", "what was typed stays");
    assert.equal(await form.getByLabel("Description").inputValue(), "releases never move");
    assert.deepEqual(await rulesOfAcme(), [], "nothing was created");

    await patterns.fill("v* !latest");
    await form.getByRole("button", { name: "Add rule" }).click();
    const row = page.getByRole("row").filter({ hasText: "releases never move" });
    await row.filter({ hasText: "v* !latest" }).waitFor();
    const [rule, ...others] = await rulesOfAcme();
    assert.deepEqual(others, []);
    assert.deepEqual([rule?.tagPatterns, rule?.description], [["v*", "!latest"], "releases never move"]);
    assert.ok(rule?.uid.startsWith(`${app}/`), "the rule hangs from the repo chosen");
    assert.equal(await patterns.inputValue(), "", "the form clears once created");

    await page.reload();
    await row.filter({ hasText: "acme/app" }).waitFor();
    // "Show rules of" narrows to one scope's own rules (uidp children_of), kept in the URL.
    await page.getByLabel("Show rules of").selectOption({ label: "acme (organization)" });
    await page.waitForURL((url) => url.searchParams.get("parent") === acme);
    await page.getByText("No immutability rules").waitFor();
    await page.getByLabel("Show rules of").selectOption({ label: "acme/app (repo)" });
    await page.waitForURL((url) => url.searchParams.get("parent") === app);
    await row.waitFor();
    await page.getByLabel("Show rules of").selectOption({ label: "Everything in this group" });
    await row.waitFor();
    await assertAccessible(page, "immutability rules");
    await screenshot(page, "governance-immutability");

    await page.getByRole("button", { name: "Edit rule v* !latest" }).click();
    const edit = page.getByRole("region", { name: "Edit immutability rule" });
    assert.equal(await edit.getByLabel("Tag patterns").inputValue(), "v* !latest");
    assert.equal(await edit.getByLabel("Applies to").isDisabled(), true, "a rule's scope does not change");
    await edit.getByLabel("Tag patterns").fill("release-*");
    await edit.getByLabel("Description").fill("release tags never move");
    await edit.getByRole("button", { name: "Save rule" }).click();
    await page
      .getByRole("row")
      .filter({ hasText: "release tags never move" })
      .filter({ hasText: "release-*" })
      .waitFor();
    const edited = await expectJson<Rule>(
      await wharf.api(`/registry/v2/immutabilityRules/${rule!.uid}`, { token: wharf.adminToken }),
    );
    assert.deepEqual([edited.tagPatterns, edited.description], [["release-*"], "release tags never move"]);

    await page.getByRole("button", { name: "Delete immutability rule release-*" }).click();
    await page.getByRole("alertdialog").getByRole("button", { name: "Yes, delete" }).click();
    await page.getByText("No immutability rules").waitFor();
    assert.deepEqual(await rulesOfAcme(), []);
    await page.close();
  });

  it("retention: a bad duration shows its field's error; create, reload, edit; the preview lists exactly what the API names, and Run deletes them", async () => {
    const page = await open(`/governance/retention/${acme}`);
    await page.getByText("No retention policies").waitFor();
    const form = page.getByRole("region", { name: "Add a retention policy" });
    const rule1 = form.getByRole("group", { name: "Rule 1" });
    await form.getByLabel("Description").fill("keep the keepers");
    await rule1.getByLabel("Tag pattern").fill("keep*");
    await rule1.getByLabel("Keep pushed within").fill("30 days");
    await form.getByRole("button", { name: "Add policy" }).click();
    const pushed = rule1.getByLabel("Keep pushed within");
    await form.getByRole("alert").filter({ hasText: "INVALID_ARGUMENT" }).waitFor();
    assert.equal(await pushed.getAttribute("aria-invalid"), "true");
    assert.equal(await pushed.inputValue(), "30 days", "what was typed stays");
    assert.equal(await rule1.getByLabel("Tag pattern").inputValue(), "keep*");
    assert.equal(await form.getByLabel("Description").inputValue(), "keep the keepers");
    assert.deepEqual(await policiesOfAcme(), [], "nothing was created");

    await pushed.fill("");
    await rule1.getByLabel("Keep latest").fill("10");
    await form.getByRole("button", { name: "Add policy" }).click();
    await page
      .getByRole("row")
      .filter({ hasText: "keep the keepers" })
      .filter({ hasText: "tags keep*: keep latest 10" })
      .waitFor();
    const [policy] = await policiesOfAcme();
    assert.deepEqual(
      [policy?.description, policy?.rules.map((r) => [r.tagPattern, r.keepLatest])],
      ["keep the keepers", [["keep*", 10]]],
    );

    await page.reload();
    await page.getByRole("button", { name: "Edit keep the keepers" }).click();
    const edit = page.getByRole("region", { name: "Edit retention policy" });
    await edit.getByLabel("Description").fill("keep only the keepers");
    await edit.getByLabel("Schedule").fill("24h");
    await edit.getByRole("button", { name: "Save policy" }).click();
    const row = page.getByRole("row").filter({ hasText: "keep only the keepers" });
    await row.filter({ hasText: "every 24h" }).waitFor();
    const edited = await expectJson<Policy>(
      await wharf.api(`/registry/v2/retentionPolicies/${policy!.uid}`, { token: wharf.adminToken }),
    );
    assert.deepEqual([edited.description, edited.schedule], ["keep only the keepers", "24h"]);
    assert.equal(await row.getByTestId("last-run").textContent(), "never");

    // The preview: the API's answer, row for row, before any Run button exists.
    const expected = (
      await expectJson<{ tags: RemovedTag[] }>(
        await wharf.api(`/registry/v2/retentionPolicies/${policy!.uid}:preview`, {
          method: "POST",
          token: wharf.adminToken,
          body: {},
        }),
      )
    ).tags;
    assert.deepEqual(expected.map((t) => t.name).sort(), ["old-1", "old-2"]);
    assert.equal(await page.getByRole("button", { name: "Run now" }).count(), 0, "no run before a preview");
    await page.getByRole("button", { name: "Preview keep only the keepers" }).click();
    const preview = page.getByRole("region", { name: "Preview of keep only the keepers" });
    const table = preview.getByRole("table", { name: "Tags a run would delete" });
    await table.waitFor();
    const shown = await table
      .locator("tbody tr")
      .evaluateAll((rows) =>
        rows.map((r) =>
          [...r.querySelectorAll("td")].map((td) => td.getAttribute("title") ?? td.textContent),
        ),
      );
    assert.deepEqual(
      shown.sort(),
      expected.map((t) => [t.repo, t.name, t.digest, t.reason]).sort(),
      "the table lists exactly the API's preview",
    );
    await assertAccessible(page, "retention preview");
    await page.emulateMedia({ colorScheme: "dark" });
    await assertAccessible(page, "retention preview (dark)");
    await page.emulateMedia({ colorScheme: "light" });
    await screenshot(page, "governance-retention-preview");

    await preview.getByRole("button", { name: "Run now" }).click();
    await page
      .getByRole("dialog", { name: "Run keep only the keepers?" })
      .getByRole("button", { name: "Yes, run and delete" })
      .click();
    await page
      .getByRole("region", { name: "Run of keep only the keepers" })
      .getByTestId("run-summary")
      .filter({ hasText: "Deleted 2 tags" })
      .waitFor();
    const left = await apiList<{ name: string }>(`/registry/v2/tags?uidp.children_of=${app}`, "tags");
    assert.deepEqual(
      left.map((t) => t.name),
      ["keep"],
      "the run deleted exactly the previewed tags",
    );
    await row.getByTestId("last-run").filter({ hasText: "deleted 2" }).waitFor();

    await page.getByRole("button", { name: "Delete retention policy keep only the keepers" }).click();
    await page.getByRole("alertdialog").getByRole("button", { name: "Yes, delete" }).click();
    await page.getByText("No retention policies").waitFor();
    assert.deepEqual(await policiesOfAcme(), []);
    await page.close();
  });

  it("quotas: the administrator sets a quota that shows against usage, a viewer sees it read-only, and clears it", async () => {
    const page = await open(`/governance/quotas/${acme}`);
    await page.getByTestId("usage-repos").filter({ hasText: "1, no limit" }).waitFor();
    await page.getByLabel("Storage quota").fill("ten gigs");
    await page.getByRole("button", { name: "Save quota" }).click();
    await page.getByRole("alert").filter({ hasText: '"ten gigs" is not a size' }).waitFor();
    assert.equal(await page.getByLabel("Storage quota").inputValue(), "ten gigs");

    await page.getByLabel("Storage quota").fill("10 MiB");
    await page.getByLabel("Repo quota").fill("5");
    await page.getByRole("button", { name: "Save quota" }).click();
    await page.getByRole("status").filter({ hasText: "Quota saved." }).waitFor();
    const usage = await usageOfAcme();
    assert.deepEqual(usage.quota, { storageBytes: String(10 * 2 ** 20), repoCount: "5" });
    await page.reload();
    await page.getByTestId("usage-storage").filter({ hasText: "of 10.0 MiB" }).waitFor();
    await page.getByTestId("usage-repos").filter({ hasText: "1 of 5 (20 %)" }).waitFor();
    assert.equal(await page.getByTestId("usage-tags").textContent(), usage.tagCount);
    assert.equal(await page.getByRole("meter").count(), 2);
    await assertAccessible(page, "quotas");
    await screenshot(page, "governance-quotas");

    const seen = await open(`/governance/quotas/${acme}`, viewer.token);
    await seen.getByTestId("usage-repos").filter({ hasText: "1 of 5" }).waitFor();
    await seen.getByTestId("quota-read-only").waitFor();
    assert.equal(await seen.getByRole("button", { name: "Save quota" }).count(), 0, "a viewer cannot edit");
    await assertAccessible(seen, "quotas (viewer)");
    await seen.close();

    await page.getByRole("button", { name: "Clear quota" }).click();
    await page.getByRole("status").filter({ hasText: "Quota cleared" }).waitFor();
    assert.deepEqual((await usageOfAcme()).quota, { storageBytes: "0", repoCount: "0" });
    await page.getByTestId("usage-repos").filter({ hasText: "1, no limit" }).waitFor();
    await page.close();
  });

  it("audit log: a viewer's refused change shows, filters narrow the rows and stay in the URL; without audit.list the API's refusal shows", async () => {
    // The viewer tries to add a rule: the API refuses, the console says so, and the refusal is audited.
    const refused = await open(`/governance/immutability/${acme}`, viewer.token);
    const form = refused.getByRole("region", { name: "Add an immutability rule" });
    await form.getByLabel("Tag patterns").fill("*");
    await form.getByRole("button", { name: "Add rule" }).click();
    await form.getByRole("alert").filter({ hasText: "PERMISSION_DENIED" }).waitFor();
    assert.deepEqual(await rulesOfAcme(), []);
    await refused.goto(`${wharf.apiUrl}/governance/audit?org=${acme}`);
    await refused.getByRole("alert").filter({ hasText: "PERMISSION_DENIED" }).waitFor();
    assert.equal(await refused.getByTestId("audit-record").count(), 0);
    // Another organization's governance pages answer the viewer with the API's refusal.
    await refused.goto(`${wharf.apiUrl}/governance/retention/${globex}`);
    await refused
      .getByRole("alert")
      .filter({ hasText: /PERMISSION_DENIED|NOT_FOUND/ })
      .first()
      .waitFor();
    await refused.close();

    const page = await open("/governance/audit");
    await page.getByTestId("audit-record").first().waitFor();
    const all = await page.getByTestId("audit-record").count();
    await page.getByLabel("Organization").selectOption({ label: "acme" });
    await page.getByLabel("Result", { exact: true }).selectOption("DENIED");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(
      (url) => url.searchParams.get("result") === "DENIED" && url.searchParams.get("org") === acme,
    );
    const denied = page.getByTestId("audit-record");
    await denied.filter({ hasText: "CreateImmutabilityRule" }).waitFor();
    const api = await apiList<AuditRecord>(
      `/audit/v2/records?uidp.descendants_of=${acme}&result=DENIED`,
      "records",
    );
    assert.deepEqual(
      api.map((r) => [r.action, r.actor.identity, r.result.code]),
      [["platform.registry.v2.ImmutabilityRulesService/CreateImmutabilityRule", viewer.uid, "DENIED"]],
    );
    assert.equal(await denied.count(), 1, "only the refused call is listed");
    assert.ok(all > 1, "more records exist without the filters");
    assert.match((await denied.textContent()) ?? "", new RegExp(viewer.uid));

    // The filtered view is a link: opened afresh, it shows the same rows with the filters filled in.
    const shared = await open(`/governance/audit?org=${acme}&result=DENIED`);
    await shared.getByTestId("audit-record").filter({ hasText: "CreateImmutabilityRule" }).waitFor();
    assert.equal(await shared.getByTestId("audit-record").count(), 1);
    assert.equal(await shared.getByLabel("Result", { exact: true }).inputValue(), "DENIED");
    await assertAccessible(shared, "audit log");
    await screenshot(shared, "governance-audit");
    await shared.close();

    // Paging: more refused creates than a page holds; Next shows the rest, Previous goes back.
    for (let i = 0; i < 50; i++) {
      const res = await wharf.api(`/registry/v2/immutabilityRules/${acme}`, {
        method: "POST",
        token: wharf.adminToken,
        body: { tagPatterns: [`bad[${i}`] },
      });
      assert.equal(res.status, 400);
    }
    const failed = await apiList<AuditRecord>(
      `/audit/v2/records?uidp.descendants_of=${acme}&result=FAILED&page_size=500`,
      "records",
    );
    assert.ok(failed.length > 50 && failed.length < 100, `${failed.length} failed records`);
    await page.getByLabel("Result", { exact: true }).selectOption("FAILED");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL((url) => url.searchParams.get("result") === "FAILED");
    await page.getByText("Page 1").waitFor();
    await page.getByTestId("audit-record").nth(49).waitFor();
    assert.equal(await page.getByTestId("audit-record").count(), 50);
    await page.getByRole("button", { name: "Next" }).click();
    await page.getByText("Page 2").waitFor();
    await page
      .getByTestId("audit-record")
      .nth(failed.length - 51)
      .waitFor();
    assert.equal(await page.getByTestId("audit-record").count(), failed.length - 50);
    assert.equal(await page.getByRole("button", { name: "Next" }).isDisabled(), true, "the last page");
    await page.getByRole("button", { name: "Previous" }).click();
    await page.getByText("Page 1").waitFor();
    await page.getByTestId("audit-record").nth(49).waitFor();

    await page.getByRole("button", { name: "Clear filters" }).click();
    await page.waitForURL((url) => url.search === "");
    await page.getByTestId("audit-record").nth(1).waitFor();
    await page.close();

    // The refusals this test provoked show as failed loads (403); nothing else may.
    assert.deepEqual(
      problems.filter((p) => !/the server responded with a status of (400|403|404)/.test(p)),
      [],
    );
  });
});
