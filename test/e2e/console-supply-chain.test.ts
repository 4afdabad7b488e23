// The console's Supply chain pages (signing keys, pull policies) and the image page's policy
// verdict and VEX suppressions, in headless Chromium against a real server.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { BrowserContext, Page } from "playwright-core";
import { BUILT_IN_ROLE_UIDS } from "../../src/authz/built-in-roles.js";
import { expectJson } from "../support/api-assertions.js";
import { assertAccessible } from "../support/axe.js";
import { chromiumSkip, launchChromium } from "../support/chromium.js";
import { generateCosignKey } from "../support/cosign.js";
import { buildImage, pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

/** Where each page's screenshot goes (git-ignored); CI keeps it as an artifact. */
const ARTIFACTS = join(new URL("../..", import.meta.url).pathname, "test-artifacts", "console");
const GRYPE = readFileSync(new URL("../fixtures/vulnreports/grype.json", import.meta.url));
const FIXTURE_HEX = "a".repeat(64);
const vexFor = (digest: string) =>
  readFileSync(new URL("../fixtures/vex/openvex-not-affected.json", import.meta.url), "utf8").replaceAll(
    FIXTURE_HEX,
    digest.slice("sha256:".length),
  );

interface SigningKey {
  uid: string;
  name: string;
  algorithm: string;
  fingerprint: string;
}
interface Policy {
  uid: string;
  name: string;
  mode: string;
  requireSignature?: boolean;
  denyEol?: boolean;
  exemptIdentities?: string[];
}

describe("the console's supply-chain pages", { skip: chromiumSkip }, () => {
  let wharf: TestServer;
  let browser: BrowserContext;
  let org: string;
  let repoUid: string;
  const image = buildImage("console-supply-chain");
  const problems: string[] = [];
  const api = (path: string, init: { method?: string; body?: unknown } = {}) =>
    wharf.api(path, { ...init, token: wharf.adminToken });

  before(async () => {
    wharf = await startTestServer();
    org = await wharf.create("/iam/v2/groups", { name: "acme" });
    await pushImage(wharf, "acme/web", "v1", await wharf.registryToken(), image);
    const repos = await expectJson<{ repos: { uid: string }[] }>(
      await api(`/registry/v2/repos?uidp.children_of=${org}&name=web`),
    );
    repoUid = repos.repos[0]?.uid as string;
    const report = await fetch(`${wharf.apiUrl}/registry/v1/vuln_reports/${repoUid}?digest=${image.digest}`, {
      method: "POST",
      headers: { authorization: `Bearer ${wharf.adminToken}`, "content-type": "application/json" },
      body: GRYPE,
    });
    assert.equal(report.status, 200, await report.text());
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await wharf?.close();
  });

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

  async function screenshot(page: Page, name: string): Promise<void> {
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  }

  const listKeys = async () =>
    (
      await expectJson<{ signingKeys?: SigningKey[] }>(
        await api(`/registry/v2/signingKeys?uidp.descendants_of=${org}`),
      )
    ).signingKeys ?? [];
  const listPolicies = async () =>
    (await expectJson<{ policies?: Policy[] }>(await api(`/registry/v2/policies?uidp.descendants_of=${org}`)))
      .policies ?? [];

  it("adds a signing key from its PEM, shows a bad PEM's field error keeping the text, and deletes a key", async () => {
    const page = await open("/supply-chain");
    await page.getByRole("link", { name: "Supply chain", exact: true }).waitFor();
    await page
      .getByRole("navigation", { name: /Groups/ })
      .getByRole("link", { name: "acme" })
      .click();
    await page.getByRole("heading", { name: "Signing keys: acme" }).waitFor();
    const form = page.getByRole("region", { name: "Add a signing key" });
    await form.getByLabel("Trusted at").selectOption({ label: "acme/web (repo)" });
    await form.getByLabel("Name").fill("broken");
    const pem = form.getByLabel("Public key (PEM)");
    const junk = "-----BEGIN PUBLIC KEY-----\nbm90IGEga2V5\n-----END PUBLIC KEY-----";
    await pem.fill(junk);
    await form.getByRole("button", { name: "Add key" }).click();
    await form.locator(".field-error").waitFor();
    assert.equal(await pem.getAttribute("aria-invalid"), "true");
    assert.equal(await pem.inputValue(), junk, "the text is kept for correcting");
    assert.deepEqual(await listKeys(), [], "nothing was stored");

    const key = generateCosignKey("ecdsa-p256");
    await form.getByLabel("Trusted at").selectOption({ label: "acme (organization)" });
    await form.getByLabel("Name").fill("release-key");
    await pem.fill(key.publicKeyPem);
    await form.getByRole("button", { name: "Add key" }).click();
    const row = page.getByTestId("key-row").filter({ hasText: "release-key" });
    await row.waitFor();
    const stored = await listKeys();
    assert.equal(stored.length, 1);
    assert.equal(stored[0]?.name, "release-key");
    assert.equal(stored[0]?.uid.split("/").slice(0, -1).join("/"), org, "trusted at the organization");
    await row.getByText(stored[0]?.fingerprint as string).waitFor();
    await row.getByText(stored[0]?.algorithm as string, { exact: true }).waitFor();
    assert.equal(await pem.inputValue(), "", "the form is cleared once saved");

    // A second key, deleted with confirmation.
    await form.getByLabel("Name").fill("old-key");
    await pem.fill(generateCosignKey("ed25519").publicKeyPem);
    await form.getByRole("button", { name: "Add key" }).click();
    await page.getByTestId("key-row").filter({ hasText: "old-key" }).waitFor();
    await assertAccessible(page, "signing keys page");
    await screenshot(page, "supply-chain-keys");
    await page.getByRole("button", { name: "Delete signing key old-key" }).click();
    await page.getByRole("button", { name: "Yes, delete" }).click();
    await page.getByTestId("key-row").filter({ hasText: "old-key" }).waitFor({ state: "detached" });
    assert.deepEqual(
      (await listKeys()).map((k) => k.name),
      ["release-key"],
    );
    await page.reload();
    await page.getByTestId("key-row").filter({ hasText: "release-key" }).waitFor();
    assert.equal(await page.getByTestId("key-row").count(), 1);
    await page.close();
  });

  it("creates a policy that makes :evaluate deny, shows why on the image page, edits and deletes it", async () => {
    const ciBot = await wharf.create(`/iam/v2/identities/${org}`, {
      name: "ci-bot",
      claimMatch: { issuer: "https://ci.example", subject: "ci-bot" },
    });
    const page = await open(`/supply-chain/policies/${org}`);
    await page.getByRole("heading", { name: "Pull policies: acme" }).waitFor();
    await page.getByRole("region", { name: "No pull policies" }).waitFor();
    const form = page.getByRole("region", { name: "Add a pull policy" });
    await form.getByLabel("Applies under").selectOption({ label: "acme/web (repo)" });
    await form.getByLabel("Name").fill("signed-only");
    await form.getByLabel("Mode").selectOption({ label: "Enforce: refuse the pull" });
    await form.getByLabel("Require a signature by a trusted key").check();
    await form.getByRole("group", { name: "Exempt identities" }).getByLabel("ci-bot").check();
    await form.getByRole("button", { name: "Add policy" }).click();
    const row = page.getByTestId("policy-row").filter({ hasText: "signed-only" });
    await row.getByText("signature required").waitFor();
    const [policy] = await listPolicies();
    assert.equal(policy?.name, "signed-only");
    assert.equal(policy?.mode, "ENFORCE");
    assert.equal(policy?.requireSignature, true);
    assert.deepEqual(policy?.exemptIdentities, [ciBot]);
    assert.equal(policy?.uid.split("/").slice(0, -1).join("/"), repoUid, "attached at the repository");
    const verdict = await expectJson<{ allowed?: boolean; violations?: { rule: string; detail: string }[] }>(
      await api(`/registry/v2/repos/${repoUid}/digests/${image.digest}:evaluate`),
    );
    assert.equal(verdict.allowed ?? false, false);
    assert.deepEqual(
      verdict.violations?.map((v) => v.rule),
      ["requireSignature"],
    );
    await assertAccessible(page, "policies page");
    await page.emulateMedia({ colorScheme: "dark" });
    await assertAccessible(page, "policies page (dark)");
    await page.emulateMedia({ colorScheme: "light" });
    await screenshot(page, "supply-chain-policies");

    // The image page says why a pull is refused.
    const imagePage = await open(`/images/${encodeURIComponent(image.digest)}/${repoUid}`);
    const panel = imagePage.getByTestId("policy-evaluation");
    await panel.getByTestId("verdict").filter({ hasText: "denied" }).waitFor();
    await panel.getByText("signed-only").waitFor();
    await panel.getByText(verdict.violations?.[0]?.detail as string).waitFor();
    await panel.getByText("requireSignature").waitFor();
    await assertAccessible(imagePage, "image page with a policy verdict");

    // Edit: WARN, and end of life denied too.
    await row.getByRole("button", { name: "Edit policy signed-only" }).click();
    const edit = page.getByRole("region", { name: "Edit policy signed-only" });
    await edit.getByLabel("Mode").selectOption({ label: "Warn: serve it with a warning" });
    await edit.getByLabel("Deny end-of-life images").check();
    await edit.getByRole("button", { name: "Save policy" }).click();
    await row.getByText("WARN").waitFor();
    const [edited] = await listPolicies();
    assert.equal(edited?.mode, "WARN");
    assert.equal(edited?.denyEol, true);
    assert.equal(edited?.requireSignature, true, "unchanged fields are kept");
    assert.deepEqual(edited?.exemptIdentities, [ciBot]);
    await imagePage.getByRole("button", { name: "Evaluate again" }).click();
    await panel.getByTestId("verdict").filter({ hasText: "allowed" }).waitFor();
    await panel.getByText("Pulls are served, with warnings:").waitFor();

    await row.getByRole("button", { name: "Delete policy signed-only" }).click();
    await page.getByRole("button", { name: "Yes, delete" }).click();
    await page.getByRole("region", { name: "No pull policies" }).waitFor();
    assert.deepEqual(await listPolicies(), []);
    await imagePage.getByRole("button", { name: "Evaluate again" }).click();
    await panel.getByText("No policy objects to pulling this image.").waitFor();
    await imagePage.close();
    await page.close();
  });

  it("shows a puller, who may not read the policies, the image without the verdict or an error", async () => {
    const puller = await wharf.create(`/iam/v2/identities/${org}`, {
      name: "puller",
      claimMatch: { issuer: "https://ci.example", subject: "puller" },
    });
    await wharf.create(`/iam/v2/roleBindings/${org}`, {
      identityUid: puller,
      roleUid: BUILT_IN_ROLE_UIDS["registry.pull"],
    });
    const token = await wharf.tokenFor(puller);
    const refused = await wharf.api(`/registry/v2/repos/${repoUid}/digests/${image.digest}:evaluate`, {
      token,
    });
    assert.equal(refused.status, 403, "the API refuses the verdict to a puller");
    const page = await open(`/images/${encodeURIComponent(image.digest)}/${repoUid}`, token);
    const panel = page.getByTestId("policy-evaluation");
    await panel.getByText("You may not read the pull policies of this repository.").waitFor();
    assert.equal(await panel.getByRole("alert").count(), 0);
    await page.getByRole("heading", { name: "Vulnerabilities" }).waitFor();
    await page.close();
  });

  it("hides VEX-suppressed matches from the report and its counts until asked, with their justification", async () => {
    const uploaded = await fetch(`${wharf.apiUrl}/registry/v1/vex/${repoUid}?digest=${image.digest}`, {
      method: "POST",
      headers: { authorization: `Bearer ${wharf.adminToken}`, "content-type": "application/json" },
      body: vexFor(image.digest),
    });
    assert.equal(uploaded.status, 200, await uploaded.text());
    const page = await open(`/images/${encodeURIComponent(image.digest)}/${repoUid}`);
    const matches = page.getByTestId("matches");
    await matches.getByText("GHSA-abcd-1234-wxyz").waitFor();
    assert.equal(await matches.getByText("CVE-2026-10003").count(), 0, "suppressed: hidden by default");
    const summary = page.getByTestId("severity-summary");
    const criticalRow = summary.getByRole("row").filter({ hasText: "critical" });
    assert.equal(
      (await criticalRow.getByRole("cell").allInnerTexts()).slice(1).join(","),
      "0,0",
      "the suppressed critical match is not counted",
    );
    await page.getByTestId("vex-note").getByText("2 matches are suppressed").waitFor();
    await page.emulateMedia({ colorScheme: "dark" });
    await assertAccessible(page, "image page with VEX (dark)");
    await page.emulateMedia({ colorScheme: "light" });

    await page.getByRole("button", { name: "Show suppressed (2)" }).click();
    const suppressed = matches.getByTestId("suppressed-match").filter({ hasText: "CVE-2026-10003" });
    await suppressed.getByText("not affected: vulnerable code not in execute path").waitFor();
    await matches
      .getByTestId("suppressed-match")
      .filter({ hasText: "CGA-2x3f-7c9q-m4hw" })
      .getByText("fixed")
      .waitFor();
    assert.equal(await matches.getByTestId("suppressed-match").count(), 2);
    await assertAccessible(page, "image page with suppressed matches shown");
    await screenshot(page, "image-vex");
    await page.getByRole("button", { name: "Hide suppressed (2)" }).click();
    await suppressed.waitFor({ state: "detached" });
    await page.close();
    // Expected 404s (no readme, no SBOM) show as failed loads; nothing else may.
    assert.deepEqual(
      problems.filter((p) => !/the server responded with a status of (404|400|403)/.test(p)),
      [],
    );
  });
});
