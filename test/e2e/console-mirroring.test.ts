// The console's Mirroring pages (upstreams, replication rules and runs) in headless Chromium,
// against a real server replicating to a real registry (docker-registry).
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { BrowserContext, Page } from "playwright-core";
import { expectJson } from "../support/api-assertions.js";
import { assertAccessible } from "../support/axe.js";
import { chromiumSkip, launchChromium } from "../support/chromium.js";
import { type CountingProxy, startCountingProxy } from "../support/counting-proxy.js";
import { type Distribution, distributionSkip, startDistribution } from "../support/distribution.js";
import { buildImage, pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

/** Where each page's screenshot goes (git-ignored); CI keeps it as an artifact. */
const ARTIFACTS = join(new URL("../..", import.meta.url).pathname, "test-artifacts", "console");
const UPSTREAM_PASSWORD = "upstream-Pa55-never-shown";
const REMOTE_PASSWORD = "remote-Pa55-never-shown";

interface Upstream {
  uid: string;
  name: string;
  url: string;
  username?: string;
  tagTtl?: string;
  hasPassword?: boolean;
  password?: string;
}
interface Rule {
  uid: string;
  name: string;
  direction: string;
  tagPattern?: string;
  remote?: { url: string; username?: string; hasPassword?: boolean; password?: string };
}

describe("the console's mirroring pages", { skip: chromiumSkip || distributionSkip }, () => {
  let wharf: TestServer;
  let remote: Distribution;
  let gate: CountingProxy;
  let browser: BrowserContext;
  let org: string;
  const image = buildImage("console-mirroring", ["first layer", "second layer"]);
  const problems: string[] = [];
  const api = (path: string, init: { method?: string; body?: unknown } = {}) =>
    wharf.api(path, { ...init, token: wharf.adminToken });

  before(async () => {
    wharf = await startTestServer({
      config: { eventsAllowLoopback: "true", eventsAllowHttp: "true" },
      replication: { pollMs: 100, progressMs: 100 },
    });
    remote = await startDistribution();
    // Holds the run's manifest PUT, so the run is seen RUNNING with its blobs counted.
    gate = await startCountingProxy(remote.url, { hold: /^PUT \/v2\/.*\/manifests\// });
    org = await wharf.create("/iam/v2/groups", { name: "acme" });
    await pushImage(wharf, "acme/app", "v1", await wharf.registryToken(), image);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await wharf?.close();
    await gate?.close();
    await remote?.close();
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

  /** Fails when `secret` is anywhere in the page: its markup, or any input's current value. */
  async function assertNotInPage(page: Page, secret: string): Promise<void> {
    assert.ok(!(await page.content()).includes(secret), "the password is not in the DOM");
    const values = await page
      .locator("input, textarea")
      .evaluateAll((els) => els.map((e) => (e as unknown as { value: string }).value));
    assert.ok(!values.some((v) => v.includes(secret)), "no input holds the password");
  }

  const listUpstreams = async () =>
    (
      await expectJson<{ upstreams?: Upstream[] }>(
        await api(`/registry/v2/upstreams?uidp.children_of=${org}`),
      )
    ).upstreams ?? [];

  it("adds, edits and deletes an upstream; the password is write-only and the pull prefix shown", async () => {
    const page = await open("/mirroring");
    await page
      .getByRole("navigation", { name: /Groups/ })
      .getByRole("link", { name: "acme" })
      .click();
    await page.getByRole("heading", { name: "Upstreams (pull-through cache): acme" }).waitFor();
    await page.getByRole("region", { name: "No upstreams" }).waitFor();
    const form = page.getByRole("region", { name: "Add an upstream" });
    // A refused URL shows the server's field error, and the typed values stay.
    await form.getByLabel("Name", { exact: true }).fill("hub");
    await form.getByLabel("URL", { exact: true }).fill("ftp://example.test");
    await form.getByRole("button", { name: "Add upstream" }).click();
    await form.locator(".field-error").first().waitFor();
    assert.equal(await form.getByLabel("Name", { exact: true }).inputValue(), "hub");
    assert.deepEqual(await listUpstreams(), []);

    await form.getByLabel("URL", { exact: true }).fill(remote.url);
    await form.getByLabel("Username", { exact: true }).fill("bot");
    await form.getByLabel("Password", { exact: true }).fill(UPSTREAM_PASSWORD);
    await form.getByLabel("Tag TTL", { exact: true }).fill("5m");
    await form.getByRole("button", { name: "Add upstream" }).click();
    const row = page.getByTestId("upstream-row").filter({ hasText: "hub" });
    await row.getByText("password set").waitFor();
    const [created] = await listUpstreams();
    assert.equal(created?.name, "hub");
    assert.equal(created?.url, remote.url);
    assert.equal(created?.username, "bot");
    assert.equal(created?.hasPassword, true);
    assert.equal(created?.password ?? "", "", "never answered");
    const host = new URL(wharf.registryUrl).host;
    assert.equal(await row.getByTestId("pull-prefix").textContent(), `${host}/acme/hub/…`);
    await assertNotInPage(page, UPSTREAM_PASSWORD);

    // An edit that types no password keeps the stored one.
    await row.getByRole("button", { name: "Edit upstream hub" }).click();
    const edit = page.getByRole("region", { name: "Edit upstream hub" });
    assert.equal(await edit.getByLabel("Password", { exact: true }).inputValue(), "");
    await edit.getByLabel("Tag TTL", { exact: true }).fill("30m");
    await edit.getByRole("button", { name: "Save upstream" }).click();
    await edit.waitFor({ state: "detached" });
    await page.reload();
    await page.getByTestId("upstream-row").filter({ hasText: "30m" }).waitFor();
    const [edited] = await listUpstreams();
    assert.equal(edited?.tagTtl, "30m");
    assert.equal(edited?.hasPassword, true, "the password is unchanged");
    assert.equal(edited?.username, "bot");
    await assertNotInPage(page, UPSTREAM_PASSWORD);

    // Going anonymous: the user and the stored password removed together.
    await page
      .getByTestId("upstream-row")
      .filter({ hasText: "hub" })
      .getByRole("button", { name: "Edit upstream hub" })
      .click();
    const anonymous = page.getByRole("region", { name: "Edit upstream hub" });
    await anonymous.getByLabel("Username", { exact: true }).fill("");
    await anonymous.getByLabel("Remove the stored password", { exact: true }).check();
    await anonymous.getByRole("button", { name: "Save upstream" }).click();
    await page.getByTestId("upstream-row").filter({ hasText: "anonymous" }).waitFor();
    const [cleared] = await listUpstreams();
    assert.equal(cleared?.hasPassword ?? false, false, "the password is removed");
    assert.equal(cleared?.username ?? "", "");
    assert.equal(cleared?.tagTtl, "30m", "the rest is kept");
    await assertAccessible(page, "upstreams page");
    await screenshot(page, "mirroring-upstreams");

    await page.getByRole("button", { name: "Delete upstream hub" }).click();
    await page.getByRole("button", { name: "Yes, delete" }).click();
    await page.getByRole("region", { name: "No upstreams" }).waitFor();
    assert.deepEqual(await listUpstreams(), []);
    await page.close();
  });

  it("creates a replication rule, runs it with live progress to SUCCEEDED, edits and deletes it", async () => {
    const page = await open(`/mirroring/replication/${org}`);
    await page.getByRole("heading", { name: "Replication: acme" }).waitFor();
    await page.getByRole("region", { name: "No replication rules" }).waitFor();
    const form = page.getByRole("region", { name: "Add a replication rule" });
    await form.getByLabel("Name", { exact: true }).fill("to-remote");
    await form
      .getByLabel("Direction", { exact: true })
      .selectOption({ label: "Push: copy from this organization to the remote" });
    await form.getByLabel("Remote registry URL", { exact: true }).fill(gate.url);
    await form.getByLabel("Remote username", { exact: true }).fill("bot");
    await form.getByLabel("Remote password", { exact: true }).fill(REMOTE_PASSWORD);
    await form.getByLabel("Repository pattern", { exact: true }).fill("app");
    await form.getByLabel("Destination", { exact: true }).fill("mirror");
    await form.getByLabel("Trigger", { exact: true }).selectOption({ label: "Manual (Run now)" });
    await form.getByRole("button", { name: "Add rule" }).click();
    const row = page.getByTestId("rule-row").filter({ hasText: "to-remote" });
    await row.waitFor();
    assert.equal(
      await form.getByLabel("Name", { exact: true }).inputValue(),
      "",
      "a fresh form after the create",
    );
    await assertNotInPage(page, REMOTE_PASSWORD);
    const rules = await expectJson<{ replicationRules?: Rule[] }>(
      await api(`/registry/v2/replicationRules?uidp.children_of=${org}`),
    );
    const rule = rules.replicationRules?.[0];
    assert.equal(rule?.name, "to-remote");
    assert.equal(rule?.direction, "PUSH");
    assert.equal(rule?.remote?.url, gate.url);
    assert.equal(rule?.remote?.hasPassword, true);
    assert.equal(rule?.remote?.password ?? "", "");

    await row.getByRole("link", { name: "Runs of to-remote" }).click();
    const runs = page.getByRole("region", { name: "Runs of to-remote" });
    await runs.getByRole("region", { name: "No runs yet" }).waitFor();
    await runs.getByRole("button", { name: "Run now" }).click();
    const run = runs.getByTestId("replication-run").first();
    // Live: the page polls while the run goes; the gate holds the manifest, the blobs are counted.
    await run.getByTestId("run-state").filter({ hasText: "RUNNING" }).waitFor();
    await run.getByTestId("copied-blobs").filter({ hasText: "3" }).waitFor();
    assert.equal(await run.getByTestId("copied-manifests").textContent(), "0");
    await runs.getByText("A run is in progress").waitFor();
    gate.open();
    await run.getByTestId("run-state").filter({ hasText: "SUCCEEDED" }).waitFor();
    await run.getByTestId("copied-manifests").filter({ hasText: "1" }).waitFor();
    await runs.getByText("A run is in progress").waitFor({ state: "detached" });
    const stored = await expectJson<{
      runs: { state: string; copiedManifests?: string; copiedBlobs?: string; skippedBlobs?: string }[];
    }>(await api(`/registry/v2/replicationRuns?rule=${rule?.uid}`));
    assert.equal(stored.runs[0]?.state, "SUCCEEDED");
    assert.equal(stored.runs[0]?.copiedManifests, "1");
    assert.equal(await run.getByTestId("copied-blobs").textContent(), stored.runs[0]?.copiedBlobs);
    const onRemote = await fetch(`${remote.url}/v2/mirror/app/manifests/v1`, {
      method: "HEAD",
      headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
    });
    assert.equal(onRemote.headers.get("docker-content-digest"), image.digest);
    await assertAccessible(page, "replication page with a run");
    await page.emulateMedia({ colorScheme: "dark" });
    await assertAccessible(page, "replication page with a run (dark)");
    await page.emulateMedia({ colorScheme: "light" });
    await screenshot(page, "mirroring-replication-run");

    // A second run finds everything there: nothing copied, the blobs skipped.
    await runs.getByRole("button", { name: "Run now" }).click();
    await runs.getByTestId("replication-run").nth(1).waitFor();
    const second = runs.getByTestId("replication-run").first();
    await second.getByTestId("run-state").filter({ hasText: "SUCCEEDED" }).waitFor();
    assert.equal(await second.getByTestId("copied-blobs").textContent(), "0");

    // Edit keeps the password when none is typed.
    await row.getByRole("button", { name: "Edit rule to-remote" }).click();
    const edit = page.getByRole("region", { name: "Edit rule to-remote" });
    assert.equal(await edit.getByLabel("Remote password", { exact: true }).inputValue(), "");
    await edit.getByLabel("Tag pattern", { exact: true }).fill("v*");
    await edit.getByRole("button", { name: "Save rule" }).click();
    await row.getByText("v*", { exact: true }).waitFor();
    const edited = await expectJson<Rule>(await api(`/registry/v2/replicationRules/${rule?.uid}`));
    assert.equal(edited.tagPattern, "v*");
    assert.equal(edited.remote?.hasPassword, true, "the password is unchanged");
    assert.equal(edited.remote?.username, "bot");

    await row.getByRole("button", { name: "Delete replication rule to-remote" }).click();
    await page.getByRole("button", { name: "Yes, delete" }).click();
    await page.getByRole("region", { name: "No replication rules" }).waitFor();
    assert.equal((await api(`/registry/v2/replicationRules/${rule?.uid}`)).status, 404);
    await page.close();
    assert.deepEqual(
      problems.filter((p) => !/the server responded with a status of 400/.test(p)),
      [],
    );
  });
});
