// The repository page's charts (vulnerabilities per day, image size along the history) and the
// timeline's "Restore" action, in headless Chromium against a real server whose clock dated the
// pushes and vulnerability reports days apart.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { BrowserContext, Locator, Page } from "playwright-core";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import { formatBytes } from "../../src/sdk/byte-size.js";
import { expectJson } from "../support/api-assertions.js";
import { assertAccessible } from "../support/axe.js";
import { chromiumSkip, launchChromium } from "../support/chromium.js";
import { personWithRole } from "../support/registered-person.js";
import { type BuiltImage, buildImage, pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const ARTIFACTS = join(new URL("../..", import.meta.url).pathname, "test-artifacts", "console");
const FIXTURES = new URL("../fixtures/vulnreports/", import.meta.url);
const DAY = 86_400_000;
const LONG_TTL = 24 * 3600;

interface CountRow {
  date: string;
  vulnCounts: { severity?: string; count?: string }[];
}

/** Bytes of an image as the registry sizes it: its config and layers. */
const sizeOf = (image: BuiltImage) => [...image.blobs.values()].reduce((sum, b) => sum + b.length, 0);
const short = (digest: string) => digest.slice(0, "sha256:".length + 12);
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe("the repository page charts a tag and restores it from its history", { skip: chromiumSkip }, () => {
  let wharf: TestServer;
  let browser: BrowserContext;
  // The server's clock runs `offset` ms from the wall clock: pushes and reports are dated in the
  // past, then the clock returns to now (it only moves forward) before the browser opens.
  let offset = -60 * DAY;
  const clock = { now: () => Date.now() + offset };
  let admin: string;
  let viewer: string;
  let org: string;
  let repoUid: string;
  // latest: A 60 days ago (Grype report), B 20 days ago (Trivy report), C 5 days ago (no report).
  const a = buildImage("charts-a", ["a".repeat(2_000)]);
  const b = buildImage("charts-b", ["b".repeat(5_000), "B".repeat(3_000)]);
  const c = buildImage("charts-c", ["c".repeat(3_500)]);
  const problems: string[] = [];

  const at = async (ageMs: number) => {
    offset = -ageMs;
    admin = await wharf.tokenFor(ADMIN_IDENTITY_UID, LONG_TTL);
  };
  const push = async (tag: string, image: BuiltImage) =>
    pushImage(wharf, "acme/app", tag, await wharf.registryToken(undefined, LONG_TTL), image);
  const report = async (image: BuiltImage, fixture: string) => {
    const res = await fetch(`${wharf.apiUrl}/registry/v1/vuln_reports/${repoUid}?digest=${image.digest}`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body: readFileSync(new URL(fixture, FIXTURES)),
    });
    await expectJson(res);
  };
  const tagOf = async (name: string) =>
    (
      await expectJson<{ tags: { uid: string; digest: string }[] }>(
        await wharf.api(`/registry/v2/tags?uidp.children_of=${repoUid}&name=${name}`, { token: admin }),
      )
    ).tags[0];
  const history = async (tag: string) =>
    (
      await expectJson<{ history: { digest: string }[] }>(
        await wharf.registry(`/v2/acme/app/_service/history/${tag}`, {
          token: await wharf.registryToken(undefined, LONG_TTL),
        }),
      )
    ).history.map((r) => r.digest);
  /**
   * The API's counts of `latest` per day over the last `days` days: [day, critical, high, medium,
   * low], and negligible when asked (the chart adds that column only when some day counts one).
   */
  const apiCounts = async (days: number, negligible = false) => {
    const today = Math.floor(Date.now() / DAY) * DAY;
    const from = new Date(today - (days - 1) * DAY).toISOString();
    const to = new Date(today + DAY - 1).toISOString();
    const body = await expectJson<{ items?: CountRow[] }>(
      await wharf.api(`/registry/v1/vuln_reports/counts?repo=${repoUid}&tag=latest&from=${from}&to=${to}`, {
        token: admin,
      }),
    );
    return (body.items ?? []).map((row) => {
      const count = (s: string) => row.vulnCounts.find((v) => v.severity === s)?.count ?? "0";
      const counts = [count("CRITICAL"), count("HIGH"), count("MEDIUM"), count("LOW")];
      return [row.date.slice(0, 10), ...counts, ...(negligible ? [count("NEGLIGIBLE")] : [])];
    });
  };

  before(async () => {
    wharf = await startTestServer({ clock });
    await at(60 * DAY);
    org = await wharf.create("/iam/v2/groups", { name: "acme" }, admin);
    await push("latest", a);
    await push("frozen", a);
    const repos = await expectJson<{ repos: { uid: string }[] }>(
      await wharf.api(`/registry/v2/repos?uidp.children_of=${org}&name=app`, { token: admin }),
    );
    repoUid = repos.repos[0]?.uid as string;
    await report(a, "grype.json");
    await at(20 * DAY);
    await push("latest", b);
    await push("frozen", b);
    await report(b, "trivy.json");
    await at(5 * DAY);
    await push("latest", c);
    await at(0);
    await wharf.create(`/registry/v2/immutabilityRules/${org}`, { tagPatterns: ["frozen"] }, admin);
    viewer = (
      await personWithRole(wharf, "vera", org, "viewer", { bindingToken: admin, tokenTtlSeconds: LONG_TTL })
    ).token;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await wharf?.close();
  });

  async function open(path: string, token = admin): Promise<Page> {
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

  async function screenshot(page: Page, name: string): Promise<void> {
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  }

  /** The rows of a chart's data table, each as its cells' texts. */
  async function tableRows(chart: Locator): Promise<string[][]> {
    return chart
      .getByTestId("chart-table")
      .locator("tbody tr")
      .evaluateAll((rows) =>
        rows.map((r) => [...r.querySelectorAll("th, td")].map((cell) => cell.textContent ?? "")),
      );
  }

  /** Waits until the chart's table has `count` rows. */
  async function rowsWithin(chart: Locator, count: number): Promise<string[][]> {
    await chart
      .getByTestId("chart-table")
      .locator("tbody tr")
      .nth(count - 1)
      .waitFor({ state: "attached" });
    assert.equal(await chart.getByTestId("chart-table").locator("tbody tr").count(), count);
    return tableRows(chart);
  }

  it("charts vulnerabilities per day over 30 or 90 days and the image size at each move", async () => {
    const page = await open(`/repos/${repoUid}`);
    const vulns = page.getByTestId("chart").filter({ hasText: "Vulnerabilities of latest per day" });
    // 30 days: every day has a row (the tag existed on all): A's counts, B's from 20 days ago, then
    // C's (no report) from 5 days ago.
    const last30 = await rowsWithin(vulns, 30);
    assert.deepEqual(last30, await apiCounts(30, true));
    assert.deepEqual(last30[0], [isoDay(Date.now() - 29 * DAY), "1", "1", "1", "0", "1"], "A's Grype report");
    assert.deepEqual(last30.at(-1), [isoDay(Date.now()), "0", "0", "0", "0", "0"], "C has no report");
    assert.deepEqual(last30[9], [isoDay(Date.now() - 20 * DAY), "0", "1", "1", "1", "0"], "B's Trivy report");
    const label30 = await vulns.getByRole("img").getAttribute("aria-label");
    assert.match(label30 ?? "", /last 30 days, .* critical latest 0/);

    const sizes = page.getByTestId("chart").filter({ hasText: "Size of latest at each move" });
    const sizeRows = await rowsWithin(sizes, 3);
    assert.deepEqual(
      sizeRows.map((r) => r[1]),
      [a, b, c].map((image) => formatBytes(sizeOf(image))),
    );
    assert.match(
      (await sizes.getByRole("img").getAttribute("aria-label")) ?? "",
      new RegExp(
        `latest ${formatBytes(sizeOf(c)).replace(".", "\\.")} \\(highest ${formatBytes(sizeOf(b)).replace(".", "\\.")}\\)`,
      ),
    );
    // The charts came after the tags and timeline: the benchmark's mark is set.
    assert.equal(
      await page.evaluate(() => performance.getEntriesByName("wharf:repo-page-rendered").length),
      1,
    );
    await assertAccessible(page, "repo page with charts");
    await screenshot(page, "repo-charts");

    // 90 days: the rows start on the day of A's push (60 days ago), with Grype's counts.
    await page.getByRole("radio", { name: "Last 90 days" }).check();
    const last90 = await rowsWithin(vulns, 61);
    assert.deepEqual(last90, await apiCounts(90, true));
    assert.deepEqual(last90[0], [isoDay(Date.now() - 60 * DAY), "1", "1", "1", "0", "1"]);
    assert.ok(
      await vulns
        .getByRole("list", { name: /Legend/ })
        .getByText("negligible")
        .isVisible(),
      "Grype's negligible match adds a series",
    );
    await page.getByRole("button", { name: "Show data table" }).first().click();
    await vulns.getByRole("table").waitFor({ state: "visible" });

    await page.emulateMedia({ colorScheme: "dark" });
    await assertAccessible(page, "repo page with charts (dark)");
    await page.close();
  });

  it("restores the tag to an older digest after a confirmation; the history gains a record", async () => {
    const page = await open(`/repos/${repoUid}`);
    const records = page.getByTestId("history-record");
    await records
      .filter({ hasText: "current" })
      .filter({ hasText: short(c.digest) })
      .waitFor();
    const restoreA = page.getByRole("button", { name: `Restore latest to ${short(a.digest)}` });
    // No restore of the digest the tag names now.
    assert.equal(await page.getByRole("button", { name: `Restore latest to ${short(c.digest)}` }).count(), 0);
    await restoreA.click();
    const dialog = page.getByRole("dialog", { name: "Restore latest?" });
    await dialog.waitFor();
    assert.match(
      (await dialog.textContent()) ?? "",
      new RegExp(`Move latest from ${short(c.digest)} back to ${short(a.digest)}`),
    );
    await assertAccessible(page, "restore confirmation");
    await screenshot(page, "repo-restore-confirm");
    await dialog.getByRole("button", { name: "Restore", exact: true }).click();
    await page
      .getByRole("status")
      .filter({ hasText: `Restored latest to ${short(a.digest)}.` })
      .waitFor();
    // The timeline shows the new record on top, current, and the tag table the new digest.
    await records
      .first()
      .filter({ hasText: "current" })
      .filter({ hasText: short(a.digest) })
      .waitFor();
    await page
      .getByRole("row")
      .filter({ hasText: "latest" })
      .filter({ hasText: short(a.digest) })
      .waitFor();
    assert.equal(await records.count(), 4);
    assert.equal((await tagOf("latest"))?.digest, a.digest);
    assert.deepEqual(await history("latest"), [a.digest, b.digest, c.digest, a.digest]);
    // The size chart gained the move back to A.
    const sizes = page.getByTestId("chart").filter({ hasText: "Size of latest at each move" });
    assert.equal((await rowsWithin(sizes, 4)).at(-1)?.[1], formatBytes(sizeOf(a)));
    await page.close();
  });

  it("shows the API's refusal of a restore of an immutable tag, and moves nothing", async () => {
    const page = await open(`/repos/${repoUid}?tag=frozen`);
    await page
      .getByTestId("history-record")
      .first()
      .filter({ hasText: short(b.digest) })
      .waitFor();
    await page.getByRole("button", { name: `Restore frozen to ${short(a.digest)}` }).click();
    const dialog = page.getByRole("dialog", { name: "Restore frozen?" });
    await dialog.getByRole("button", { name: "Restore", exact: true }).click();
    const alert = dialog.getByRole("alert");
    await alert.filter({ hasText: "TAG_IMMUTABLE" }).waitFor();
    assert.match((await alert.textContent()) ?? "", /FAILED_PRECONDITION.*tag frozen is immutable/);
    assert.equal((await tagOf("frozen"))?.digest, b.digest);
    assert.deepEqual(await history("frozen"), [a.digest, b.digest]);
    await page.close();
  });

  it("offers no restore to a viewer, who still sees the charts", async () => {
    const page = await open(`/repos/${repoUid}`, viewer);
    await page.getByTestId("history-record").first().waitFor();
    const vulns = page.getByTestId("chart").filter({ hasText: "Vulnerabilities of latest per day" });
    await rowsWithin(vulns, 30);
    assert.equal(await page.getByRole("button", { name: /^Restore/ }).count(), 0);
    await page.close();
    // Expected failures only: 404s (no readme) and the refused restore (400).
    assert.deepEqual(
      problems.filter((p) => !/the server responded with a status of (404|400)/.test(p)),
      [],
    );
  });
});
