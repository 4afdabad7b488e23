// The organization dashboard (/dashboard/<org uid>) in headless Chromium against a real server:
// repositories, storage against a quota, pushes per day on several days (injected clock), the most
// vulnerable tags, tags past or near end of life, recent audit records and a failing webhook; a
// viewer sees the audit panel ask for the owner role.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { BrowserContext, Page } from "playwright-core";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import type { Clock } from "../../src/core/clock.js";
import { formatBytes } from "../../src/sdk/byte-size.js";
import { expectJson } from "../support/api-assertions.js";
import { assertAccessible } from "../support/axe.js";
import { chromiumSkip, launchChromium } from "../support/chromium.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { personWithRole } from "../support/registered-person.js";
import { type BuiltImage, buildImage, pushImage } from "../support/registry-push.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

/** Where each page's screenshot goes (git-ignored); CI keeps it as an artifact. */
const ARTIFACTS = join(new URL("../..", import.meta.url).pathname, "test-artifacts", "console");
const DAY_MS = 86_400_000;
const GRYPE = readFileSync(new URL("../fixtures/vulnreports/grype.json", import.meta.url), "utf8");
/** The Grype fixture (1 critical, 1 high, 1 medium, 1 negligible) without its critical match. */
const GRYPE_WITHOUT_CRITICAL = (() => {
  const doc = JSON.parse(GRYPE) as { matches: { vulnerability: { id: string } }[] };
  doc.matches = doc.matches.filter((m) => m.vulnerability.id !== "CVE-2026-10003");
  return JSON.stringify(doc);
})();
/** Fast retries and two attempts, so the failing sink's first event is a dead letter in milliseconds. */
const EVENTS = { backoffBaseMs: 40, backoffMaxMs: 200, pollMs: 50, maxAttempts: 2 };

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe("the organization dashboard", { skip: chromiumSkip }, () => {
  let wharf: TestServer;
  let receiver: WebhookReceiver;
  let browser: BrowserContext;
  let workDir: string;
  let offset = 0;
  const clock: Clock = { now: () => Date.now() + offset };
  let admin = "";
  let registryToken = "";
  let acme = "";
  let viewerUid = "";
  let storageBytes = 0;
  const images = new Map<string, BuiltImage>();
  const problems: string[] = [];

  /** Moves the server's clock to `days` from now and mints the tokens anew (a token lives at most a day). */
  const at = async (days: number) => {
    offset = days * DAY_MS;
    admin = await wharf.tokenFor(ADMIN_IDENTITY_UID);
    registryToken = await wharf.registryToken();
  };
  const push = async (ref: string) => {
    const [name, tag] = ref.split(":") as [string, string];
    images.set(ref, await pushImage(wharf, name, tag, registryToken, buildImage(`dashboard ${ref}`)));
  };
  const repoUid = async (name: string) => {
    const { repos } = await expectJson<{ repos: { uid: string }[] }>(
      await wharf.api(`/registry/v2/repos?uidp.descendants_of=${acme}&name=${name}`, { token: admin }),
    );
    assert.ok(repos[0], name);
    return repos[0].uid;
  };
  const uploadReport = async (repo: string, ref: string, body: string) => {
    const res = await fetch(
      `${wharf.apiUrl}/registry/v1/vuln_reports/${await repoUid(repo)}?digest=${images.get(ref)?.digest}`,
      {
        method: "POST",
        headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
        body,
      },
    );
    assert.equal(res.status, 200, await res.text());
  };

  before(async () => {
    wharf = await startTestServer({ clock, events: EVENTS, config: { eventsAllowLoopback: "true" } });
    receiver = await startWebhookReceiver();
    workDir = await mkdtemp(join(tmpdir(), "wharf-dashboard-"));
    await at(-3);
    acme = await wharf.create("/iam/v2/groups", { name: "acme" }, admin);
    await wharf.create(`/iam/v2/groups/${acme}`, { name: "team" }, admin);
    viewerUid = (await personWithRole(wharf, "vera", acme, "viewer", { bindingToken: admin })).uid;
    await push("acme/app:3.8");
    await push("acme/lib:1");
    await at(-1);
    await push("acme/app:3.9");
    await push("acme/team/svc:x");
    await push("acme/app:3.12");
    await at(0);
    await push("acme/app:latest");

    await uploadReport("app", "acme/app:3.8", GRYPE);
    await uploadReport("svc", "acme/team/svc:x", GRYPE_WITHOUT_CRITICAL);

    // Python 3.8 ended 10 days ago, 3.9 ends in 30 days, 3.12 in two years: two tags to show.
    const cycle = (name: string, eolInDays: number) => ({
      cycle: name,
      releaseDate: "2020-01-01",
      eol: isoDay(Date.now() + eolInDays * DAY_MS),
      lts: false,
      support: false,
    });
    const file = join(workDir, "python.json");
    await writeFile(file, JSON.stringify([cycle("3.8", -10), cycle("3.9", 30), cycle("3.12", 730)]));
    const imported = await runCliInProcess(
      ["import", "eol", "--product", "python", "--match", "acme/app:3.*", file, "--data-dir", wharf.dataDir],
      process.env,
    );
    assert.equal(imported.code, 0, imported.stderr);

    receiver.respondWith(500);
    const sub = await wharf.create(`/events/v2/subscriptions/${acme}`, { sink: receiver.url() }, admin);
    for (let i = 0; ; i++) {
      const s = await expectJson<{ status?: { failed?: string } }>(
        await wharf.api(`/events/v2/subscriptions/${sub}`, { token: admin }),
      );
      if (Number(s.status?.failed ?? 0) > 0) break;
      assert.ok(i < 600, "the failing sink's first delivery became a dead letter");
      await new Promise((r) => setTimeout(r, 50));
    }

    const usage = await expectJson<{ storageBytes: string }>(
      await wharf.api(`/registry/v2/usage/${acme}`, { token: admin }),
    );
    storageBytes = Number(usage.storageBytes);
    // The last mutating call: the audit panel's newest record.
    const quota = await wharf.api(`/registry/v2/quotas/${acme}`, {
      method: "PATCH",
      token: admin,
      body: { storageBytes: String(storageBytes * 4) },
    });
    assert.equal(quota.status, 200, await quota.text());
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await wharf?.close();
    await receiver?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  async function open(path: string, token: string, who: string): Promise<Page> {
    const page = await browser.newPage();
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(`${path}: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`${path}: ${e.message}`));
    await page.goto(`${wharf.apiUrl}${path}`);
    await page.getByLabel("Token", { exact: true }).fill(token);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByTestId("signed-in-as").filter({ hasText: who }).waitFor();
    return page;
  }

  async function screenshot(page: Page, name: string): Promise<void> {
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  }

  it("shows every panel with the organization's numbers and rows, accessible in light and dark", async () => {
    const page = await open(`/dashboard/${acme}`, admin, "admin");
    await page.getByRole("heading", { level: 1, name: "Dashboard of acme" }).waitFor();

    await page.getByTestId("repo-count").filter({ hasText: /^3$/ }).waitFor();
    await page
      .getByTestId("storage-used")
      .filter({ hasText: formatBytes(storageBytes) })
      .waitFor();
    await page
      .getByTestId("storage-quota")
      .filter({ hasText: `25 % of the ${formatBytes(storageBytes * 4)} quota` })
      .waitFor();

    await page.getByTestId("pushes-total").filter({ hasText: "6 pushes in the last 30 days" }).waitFor();
    const pushes = page.getByRole("region", { name: "Pushes per day" });
    const chart = pushes.getByRole("img");
    await chart.waitFor();
    const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    assert.match(
      (await chart.getAttribute("aria-label")) ?? "",
      new RegExp(`total 6, highest 3 on ${isoDay(today - DAY_MS)}`),
    );
    const table = pushes.getByTestId("chart-table");
    const countOn = async (day: number) =>
      (
        await table
          .getByRole("row")
          .filter({ hasText: isoDay(today - day * DAY_MS) })
          .getByRole("cell")
          .textContent()
      )?.trim();
    assert.deepEqual(
      [await countOn(3), await countOn(2), await countOn(1), await countOn(0)],
      ["2", "0", "3", "1"],
    );

    const vulnerable = page.getByTestId("vulnerable-tag");
    await vulnerable.first().waitFor();
    const vulnRows = (await vulnerable.allInnerTexts()).map((t) => t.replace(/\s+/g, " ").trim());
    assert.equal(vulnRows.length, 2, "tags without a report are left out");
    assert.match(vulnRows[0] ?? "", /^acme\/app:3\.8 .*1 critical.*1 high.*1 medium$/);
    assert.match(vulnRows[1] ?? "", /^acme\/team\/svc:x .*1 high.*1 medium$/);
    assert.doesNotMatch(vulnRows[1] ?? "", /critical/);

    const eol = page.getByRole("region", { name: "End of life" });
    const eolRows = eol.getByRole("row").filter({ has: page.getByRole("cell") });
    await eolRows.first().waitFor();
    assert.equal(await eolRows.count(), 2, "3.12 is neither past nor within 90 days");
    await eolRows
      .nth(0)
      .filter({ hasText: "acme/app" })
      .filter({ hasText: "3.8" })
      .filter({ hasText: "Past end of life" })
      .waitFor();
    await eolRows
      .nth(1)
      .filter({ hasText: "acme/app" })
      .filter({ hasText: "3.9" })
      .filter({ hasText: "In 30 days" })
      .waitFor();

    const webhooks = page.getByRole("region", { name: "Failing webhooks" });
    await webhooks.getByRole("row").filter({ hasText: receiver.url() }).waitFor();

    const audit = page.getByRole("region", { name: "Recent audit records" });
    const auditRows = audit.getByRole("row").filter({ has: page.getByRole("cell") });
    await auditRows.first().filter({ hasText: "QuotasService/UpdateQuota" }).waitFor();
    assert.equal(await auditRows.count(), 10, "the ten newest records");

    await assertAccessible(page, "dashboard");
    await screenshot(page, "dashboard");
    await page.emulateMedia({ colorScheme: "dark" });
    await assertAccessible(page, "dashboard (dark)");
    await page.close();
  });

  it("a viewer sees the audit panel ask for the owner role, and the other panels", async () => {
    const page = await open(`/dashboard/${acme}`, await wharf.tokenFor(viewerUid), "vera");
    const audit = page.getByRole("region", { name: "Recent audit records" });
    await audit.getByText("needs the owner role").waitFor();
    assert.equal(await audit.getByRole("alert").count(), 0, "no error, a note");
    await page.getByTestId("repo-count").filter({ hasText: /^3$/ }).waitFor();
    await page.getByTestId("vulnerable-tag").first().waitFor();
    await assertAccessible(page, "dashboard as a viewer");
    await page.close();
  });

  it("links each organization to its dashboard from the organizations and home pages", async () => {
    const page = await open("/orgs", admin, "admin");
    await page.getByRole("link", { name: "Dashboard of acme" }).click();
    await page.getByRole("heading", { level: 1, name: "Dashboard of acme" }).waitFor();
    assert.equal(new URL(page.url()).pathname, `/dashboard/${acme}`);
    await page.close();
    const home = await open("/", await wharf.tokenFor(viewerUid), "vera");
    await home.getByRole("link", { name: "Dashboard of acme" }).click();
    await home.getByRole("heading", { level: 1, name: "Dashboard of acme" }).waitFor();
    await home.close();
    // Expected 404s show as failed loads; nothing else may.
    assert.deepEqual(
      problems.filter((p) => !/the server responded with a status of (404|403)/.test(p)),
      [],
    );
  });
});
