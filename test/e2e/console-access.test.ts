import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { BrowserContext, Page } from "playwright-core";
import { builtInRoleUid } from "../../src/authz/built-in-roles.js";
import { expectJson } from "../support/api-assertions.js";
import { chromiumSkip, launchChromium } from "../support/chromium.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

/** Where each page's screenshot goes (git-ignored); CI keeps it as an artifact. */
const ARTIFACTS = join(new URL("../..", import.meta.url).pathname, "test-artifacts", "console");
const SUBSCRIPTION_CREATED = "dev.wharf.api.events.subscription.created.v1";
const REPO_CREATED = "dev.wharf.api.registry.repo.created.v1";

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

describe("the console's access and webhooks pages in headless Chromium", { skip: chromiumSkip }, () => {
  let wharf: TestServer;
  let receiver: WebhookReceiver;
  let browser: BrowserContext;
  let acme: string;
  let other: string;
  /** Console errors and CSP violations: any is a failure (failed API calls the test provokes aside). */
  const problems: string[] = [];

  before(async () => {
    wharf = await startTestServer({
      events: { backoffBaseMs: 40, backoffMaxMs: 200, pollMs: 50 },
      // The receiver listens on loopback, which sinks may reach only when the server allows it.
      config: { eventsAllowLoopback: "true", eventsMaxAttempts: "2" },
    });
    receiver = await startWebhookReceiver();
    browser = await launchChromium({ clipboard: true });
    acme = await wharf.create("/iam/v2/groups", { name: "acme" });
    other = await wharf.create("/iam/v2/groups", { name: "globex" });
  });
  after(async () => {
    await browser?.close();
    await receiver?.close();
    await wharf?.close();
  });

  /** Opens `path` in a new tab (its own sessionStorage) and signs in with `token`. */
  async function open(path: string, token = wharf.adminToken): Promise<Page> {
    const page = await browser.newPage();
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(`${path}: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`${path}: ${e.message}`));
    await page.goto(`${wharf.apiUrl}${path}`);
    await page.getByLabel("Token", { exact: true }).fill(token);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    return page;
  }

  async function list<T>(path: string, key: string): Promise<T[]> {
    const body = await expectJson<Record<string, T[]>>(await wharf.api(path, { token: wharf.adminToken }));
    return body[key] ?? [];
  }

  it("flow 6: creates an identity and a role binding, refuses to delete a bound identity, then deletes both", async () => {
    const page = await open("/access");
    await page
      .getByRole("navigation", { name: /Groups/ })
      .getByRole("link", { name: "acme" })
      .click();
    await page.getByRole("heading", { name: "Access: acme" }).waitFor();
    await page.getByText("No identities in this group").waitFor();
    await screenshot(page, "access-identities-empty");

    // A bad name: the server's violation shows beside the field.
    await page.getByLabel("Name", { exact: true }).fill("Not Valid!");
    await page.getByLabel("Issuer", { exact: true }).fill("https://token.actions.githubusercontent.com");
    await page.getByLabel("Subject", { exact: true }).fill("repo:acme/app:ref:refs/heads/main");
    await page.getByRole("button", { name: "Create identity" }).click();
    await page.getByRole("alert").filter({ hasText: "INVALID_ARGUMENT" }).waitFor();
    const name = page.getByLabel("Name", { exact: true });
    assert.equal(await name.getAttribute("aria-invalid"), "true", "the name is marked invalid");
    const nameError = await name.getAttribute("aria-describedby");
    assert.match(
      (await page.locator(`[id="${nameError?.split(" ").at(-1)}"]`).textContent()) ?? "",
      /name must match/,
    );

    await name.fill("ci");
    await page.getByRole("button", { name: "Create identity" }).click();
    await page.getByRole("cell", { name: /^ci / }).waitFor();
    const identities = await list<{
      uid: string;
      name: string;
      claimMatch?: { issuer: string; subject: string };
    }>(`/iam/v2/identities?uidp.children_of=${acme}`, "identities");
    assert.equal(identities.length, 1);
    const ci = identities[0]!;
    assert.deepEqual(
      [ci.name, ci.claimMatch?.issuer, ci.claimMatch?.subject],
      ["ci", "https://token.actions.githubusercontent.com", "repo:acme/app:ref:refs/heads/main"],
    );
    await screenshot(page, "access-identities");

    await page.getByRole("link", { name: "Role bindings" }).click();
    await page.getByText("No role bindings at this group").waitFor();
    await page.locator("option", { hasText: "registry.push" }).waitFor({ state: "attached" });
    await page.locator("option", { hasText: /^ci$/ }).waitFor({ state: "attached" });
    await page.getByLabel("Identity", { exact: true }).selectOption({ label: "ci" });
    await page.getByLabel("Role", { exact: true }).selectOption({ label: "registry.push" });
    await page.getByRole("button", { name: "Create role binding" }).click();
    await page.getByRole("button", { name: "Delete role binding of ci to registry.push" }).waitFor();
    const bindings = await list<{ uid: string; identityUid: string; roleUid: string }>(
      `/iam/v2/roleBindings?group=${acme}`,
      "roleBindings",
    );
    assert.deepEqual(
      bindings.map((b) => [b.identityUid, b.roleUid]),
      [[ci.uid, builtInRoleUid("registry.push")]],
    );
    await screenshot(page, "access-role-bindings");

    // The identity is still bound: the server refuses, and the console says why.
    await page.getByRole("link", { name: "Identities" }).click();
    await page.getByRole("button", { name: "Delete identity ci" }).click();
    const confirm = page.getByRole("alertdialog", { name: "Confirm: delete identity ci" });
    assert.equal(
      await page.evaluate("document.activeElement?.textContent"),
      "Cancel",
      "the question takes the focus, on Cancel",
    );
    await confirm.getByRole("button", { name: "Yes, delete" }).click();
    await confirm.getByRole("alert").filter({ hasText: "FAILED_PRECONDITION" }).waitFor();
    await page.keyboard.press("Escape");
    await page.getByRole("button", { name: "Delete identity ci" }).waitFor();

    await page.getByRole("link", { name: "Role bindings" }).click();
    await page.getByRole("button", { name: "Delete role binding of ci to registry.push" }).click();
    // Cancel first: nothing is deleted.
    await page.getByRole("button", { name: "Cancel" }).click();
    assert.equal((await list(`/iam/v2/roleBindings?group=${acme}`, "roleBindings")).length, 1);
    await page.getByRole("button", { name: "Delete role binding of ci to registry.push" }).click();
    await page.getByRole("button", { name: "Yes, delete" }).click();
    await page.getByText("No role bindings at this group").waitFor();
    assert.equal((await list(`/iam/v2/roleBindings?group=${acme}`, "roleBindings")).length, 0);

    await page.getByRole("link", { name: "Identities" }).click();
    await page.getByRole("button", { name: "Delete identity ci" }).click();
    await page.getByRole("button", { name: "Yes, delete" }).click();
    await page.getByText("No identities in this group").waitFor();
    const gone = await wharf.api(`/iam/v2/identities/${ci.uid}`, { token: wharf.adminToken });
    assert.equal(gone.status, 404, "the identity is deleted");
    await page.close();
  });

  it("creates a custom role from the capability picker and deletes it", async () => {
    /** The custom roles of acme (every role list also holds the built-in ones). */
    const customRoles = async () =>
      (
        await list<{ uid: string; name: string; capabilities: string[] }>(
          `/iam/v2/roles?uidp.children_of=${acme}`,
          "roles",
        )
      ).filter((r) => r.uid.startsWith(`${acme}/`));
    const page = await open(`/access/${acme}?tab=roles`);
    await page.getByText("No custom roles").waitFor();
    await page.getByLabel("Role name").fill("reader");
    await page.getByRole("button", { name: "Create role" }).click();
    await page.getByRole("alert").filter({ hasText: "at least one capability" }).waitFor();
    await page.getByRole("checkbox", { name: "repo.list", exact: true }).check();
    await page.getByRole("checkbox", { name: "tag.list", exact: true }).check();
    await page.getByText("Capabilities (2 chosen)").waitFor();
    await page.getByRole("button", { name: "Create role" }).click();
    await page.getByRole("button", { name: "Delete role reader" }).waitFor();
    const roles = await customRoles();
    assert.deepEqual(
      roles.map((r) => [r.name, [...r.capabilities].sort()]),
      [["reader", ["CAP_REPO_LIST", "CAP_TAG_LIST"]]],
    );
    await page
      .getByRole("row", { name: /reader/ })
      .getByText("2 capabilities")
      .click();
    await page
      .getByRole("row", { name: /reader/ })
      .getByText("Repo: list")
      .waitFor();
    await screenshot(page, "access-roles");
    await page.getByRole("button", { name: "Delete role reader" }).click();
    await page.getByRole("button", { name: "Yes, delete" }).click();
    await page.getByText("No custom roles").waitFor();
    assert.equal((await customRoles()).length, 0);
    await page.close();
  });

  it("shows an invite's code once, copyable, and deletes the invite", async () => {
    const page = await open(`/access/${acme}?tab=invites`);
    await page.getByText("No open invites").waitFor();
    await page.locator("option", { hasText: "viewer" }).waitFor({ state: "attached" });
    await page.getByLabel("Role on redemption").selectOption({ label: "viewer" });
    await page.getByRole("button", { name: "Create invite" }).click();
    const code = await page.getByLabel("Invite code").inputValue();
    assert.match(code, /^wharf_inv_/, "the code is shown");
    await page.getByRole("button", { name: "Copy invite code" }).click();
    await page.getByText("Copied.").waitFor();
    assert.equal(await page.evaluate("navigator.clipboard.readText()"), code, "and copied");
    const invites = await list<{ uid: string; keyId: string; code?: string }>(
      `/iam/v2/groupInvites?uidp.children_of=${acme}`,
      "invites",
    );
    assert.equal(invites.length, 1);
    assert.equal(invites[0]?.code, undefined, "the list never returns the code");
    await page.getByRole("cell", { name: invites[0]!.keyId, exact: true }).waitFor();
    await screenshot(page, "access-invites");
    await page.getByRole("button", { name: "Done" }).click();
    assert.equal(await page.getByLabel("Invite code").count(), 0, "gone once dismissed");
    assert.ok(!(await page.content()).includes(code), "nowhere on the page");
    await page.getByRole("button", { name: `Delete invite ${invites[0]!.keyId}` }).click();
    await page.getByRole("button", { name: "Yes, delete" }).click();
    await page.getByText("No open invites").waitFor();
    await page.close();
  });

  it("adds an identity provider whose client secret is write-only, shows violations beside fields, and deletes it", async () => {
    const secret = "s3cret-never-shown";
    const page = await open(`/access/${acme}?tab=providers`);
    await page.getByText("No identity providers").waitFor();
    await page.getByLabel("Provider name").fill("okta");
    await page.locator("option", { hasText: "viewer" }).waitFor({ state: "attached" });
    await page.getByLabel("Default role of people on first sign-in").selectOption({ label: "viewer" });
    await page.getByLabel("Issuer URL").fill("http://login.acme.example");
    await page.getByLabel("Client ID").fill("wharf");
    await page.getByLabel("Client secret").fill(secret);
    await page.getByRole("button", { name: "Add identity provider" }).click();
    await page.locator(".field-error").filter({ hasText: "must be an https URL" }).waitFor();
    assert.equal(await page.getByLabel("Issuer URL").getAttribute("aria-invalid"), "true");
    await page.getByLabel("Issuer URL").fill("https://login.acme.example");
    await page.getByRole("button", { name: "Add identity provider" }).click();
    await page.getByRole("button", { name: "Delete identity provider okta" }).waitFor();
    assert.equal(await page.getByLabel("Client secret").inputValue(), "", "the form forgets the secret");
    assert.ok(!(await page.content()).includes(secret), "the secret is nowhere on the page");
    const [provider] = await list<{ uid: string; oidc: { clientSecret?: string } }>(
      `/iam/v2/identityProviders?uidp.children_of=${acme}`,
      "identityProviders",
    );
    assert.equal(provider?.oidc.clientSecret, undefined, "not returned");
    assert.equal(
      (await wharf.store.identityProviders.get(provider!.uid))?.oidc.clientSecret,
      secret,
      "but stored",
    );
    await screenshot(page, "access-identity-providers");
    await page.getByRole("button", { name: "Delete identity provider okta" }).click();
    await page.getByRole("button", { name: "Yes, delete" }).click();
    await page.getByText("No identity providers").waitFor();
    await page.close();
  });

  it("creates a pull token in the browser that the registry accepts, and revokes it", async () => {
    const page = await open(`/access/${acme}?tab=pull-tokens`);
    await page.getByText("No pull tokens").waitFor();
    await page.getByLabel("Token name (optional)").fill("deploy");
    await page.getByRole("button", { name: "Create pull token" }).click();
    const password = await page.getByLabel("Password").inputValue();
    const username = (await page.getByTestId("pull-token-username").textContent()) ?? "";
    assert.match(username, new RegExp(`^${acme}/[0-9a-f]{16}$`), "an identity of the organization");
    const viaToken = () =>
      wharf.registry("/token?scope=repository:acme/app:pull", {
        headers: { authorization: basic(username, password) },
      });
    const issued = await viaToken();
    assert.equal(issued.status, 200, await issued.text());
    await page.getByRole("button", { name: "Done" }).click();
    await page.getByRole("cell", { name: username }).waitFor();
    await screenshot(page, "access-pull-tokens");

    await page.getByRole("button", { name: "Revoke pull token deploy" }).click();
    await page.getByRole("button", { name: "Yes, revoke" }).click();
    await page.getByText("No pull tokens").waitFor();
    const refused = await viaToken();
    assert.equal(refused.status, 401, "revoked");
    await refused.arrayBuffer();
    await page.close();
  });

  it("another organization's access is refused to a member of one organization", async () => {
    const alice = await wharf.create(`/iam/v2/identities/${acme}`, {
      name: "alice",
      claimMatch: { issuer: "https://ci.example", subject: "alice" },
    });
    await wharf.create(`/iam/v2/roleBindings/${acme}`, {
      identityUid: alice,
      roleUid: builtInRoleUid("owner"),
    });
    await wharf.create(`/iam/v2/identities/${other}`, {
      name: "globex-ci",
      claimMatch: { issuer: "https://ci.example", subject: "globex" },
    });
    const token = await wharf.tokenFor(alice);
    const page = await open(`/access/${other}?tab=identities`, token);
    await page
      .getByRole("alert")
      .filter({ hasText: /PERMISSION_DENIED|NOT_FOUND/ })
      .first()
      .waitFor();
    await page.getByRole("button", { name: "Create identity" }).waitFor();
    await page.getByLabel("Name", { exact: true }).fill("intruder");
    await page.getByLabel("Issuer", { exact: true }).fill("https://ci.example");
    await page.getByLabel("Subject", { exact: true }).fill("x");
    await page.getByRole("button", { name: "Create identity" }).click();
    await page
      .locator("form")
      .getByRole("alert")
      .filter({ hasText: /PERMISSION_DENIED|NOT_FOUND/ })
      .waitFor();
    assert.equal(
      await page.getByText("globex-ci").count(),
      0,
      "the other organization's identities stay hidden",
    );
    const intruders = await list<{ name: string }>(
      `/iam/v2/identities?uidp.children_of=${other}`,
      "identities",
    );
    assert.deepEqual(
      intruders.map((i) => i.name),
      ["globex-ci"],
      "nothing was created",
    );

    await page.goto(`${wharf.apiUrl}/access/${acme}?tab=identities`);
    await page.getByRole("cell", { name: /^alice / }).waitFor();
    await page.close();
  });

  it("flow 7: creates a subscription, sees its dead letter, then a delivery, and deletes it", async () => {
    receiver.respondWith(500);
    const page = await open(`/webhooks/${acme}`);
    await page.getByRole("heading", { name: "Webhooks: acme" }).waitFor();
    await page.getByText("No subscriptions").waitFor();
    await screenshot(page, "webhooks-empty");

    await page.getByLabel("Sink URL").fill("ftp://hooks.example/x");
    await page.getByRole("button", { name: "Add subscription" }).click();
    await page
      .locator(".field-error")
      .filter({ hasText: /sink must be an http\(s\) URL/ })
      .waitFor();
    assert.equal(await page.getByLabel("Sink URL").getAttribute("aria-invalid"), "true");

    const sink = receiver.url("/console");
    await page.getByLabel("Sink URL").fill(sink);
    await page.getByRole("button", { name: "Add subscription" }).click();
    await page.getByRole("cell", { name: sink, exact: true }).waitFor();

    // The first event (the subscription's creation) fails twice: a dead letter.
    const deadline = Date.now() + 15_000;
    for (;;) {
      await page.getByRole("button", { name: "Refresh" }).click();
      await page.getByRole("button", { name: "Refresh" }).waitFor();
      if ((await page.getByTestId("failed").textContent()) === "1") break;
      if (Date.now() >= deadline) {
        const subs = await list(`/events/v2/subscriptions?uidp.children_of=${acme}`, "subscriptions");
        assert.fail(
          `the console shows no failed delivery: ${JSON.stringify(subs)}; received ${receiver.received.length}; page ${await page.locator("table").textContent()}`,
        );
      }
      await pause(200);
    }
    assert.equal(receiver.received.filter((r) => r.path === "/console").length, 2, "tried maxAttempts times");
    await screenshot(page, "webhooks-subscriptions");

    await page.getByRole("link", { name: `Deliveries of ${sink}` }).click();
    await page.getByRole("heading", { name: "Deliveries" }).waitFor();
    const row = page.getByRole("row", { name: new RegExp(SUBSCRIPTION_CREATED) });
    await row.waitFor();
    assert.match((await row.textContent()) ?? "", /failed[\s\S]*2[\s\S]*HTTP 500/);
    await screenshot(page, "webhooks-deliveries");
    await page.getByLabel("Show").selectOption({ label: "Pending" });
    await page.getByText("Nothing owed").waitFor();

    // The sink recovers: the next event is delivered.
    receiver.respondWith(200);
    const repo = await wharf.create(`/registry/v2/repos/${acme}`, { name: "app" });
    const accepted = await receiver.waitFor((a) =>
      a.some((d) => d.headers["ce-type"] === REPO_CREATED && d.headers["ce-subject"] === repo),
    );
    assert.equal(accepted.at(-1)?.path, "/console", "delivered to the console's subscription");

    await page.getByRole("link", { name: "Back to the subscriptions" }).click();
    await page.getByRole("button", { name: `Delete subscription to ${sink}` }).click();
    await page.getByRole("button", { name: "Yes, delete" }).click();
    await page.getByText("No subscriptions").waitFor();
    assert.equal(
      (await list(`/events/v2/subscriptions?uidp.children_of=${acme}`, "subscriptions")).length,
      0,
    );
    await page.close();
  });

  it("logged no console error and no CSP violation besides the refusals the test provoked", () => {
    const unexpected = problems.filter((p) => !/\b(400|403|404|412)\b|Failed to load resource/.test(p));
    assert.deepEqual(unexpected, []);
  });
});
