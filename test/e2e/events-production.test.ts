import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import { builtInRoleUid } from "../../src/authz/built-in-roles.js";
import { newRootUid } from "../../src/core/uidp.js";
import { detail, expectError, expectJson } from "../support/api-assertions.js";
import { forEachEngine } from "../support/databases.js";
import { seedManifests } from "../support/seed-manifests.js";
import {
  type ReceivedDelivery,
  startWebhookReceiver,
  type WebhookReceiver,
} from "../support/webhook-receiver.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const VIEWER = builtInRoleUid("viewer");
const EDITOR = builtInRoleUid("editor");
const SECRET = "idp-client-secret-that-never-leaves";
const NEW_SECRET = "rotated-idp-client-secret-never-shown";
const API = "dev.wharf.api";

type Json = Record<string, unknown>;

/** What one delivered event must be. */
interface Expected {
  type: string;
  subject: string;
  group: string;
  bodytype: string;
  body: unknown;
  /** Default: the administrator, who makes every change here unless said otherwise. */
  actor?: string;
  /** `ce-source` path after the API URL, when checked. */
  source?: string;
}

/**
 * Every API change of the production services is one CloudEvent, delivered to the subscription of
 * the organization it happens in. A subscription's deliveries arrive in event order, so each test
 * reads the NEXT delivery and checks it is the one its change caused: an extra event (a duplicate,
 * or one of a failed or foreign write) would show up as an unexpected next delivery.
 */
forEachEngine("events of API changes", (db) => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  let org: string;
  /** Deliveries of the org's subscription read so far. */
  let seen = 0;

  const sha = (n: number) => `sha256:${String(n).repeat(64).slice(0, 64)}`;

  async function call(method: string, path: string, body?: unknown, token?: string): Promise<Response> {
    return server.api(path, {
      method,
      token: token ?? server.adminToken,
      ...(body === undefined ? {} : { body }),
    });
  }
  async function ok<T = Json>(method: string, path: string, body?: unknown, token?: string): Promise<T> {
    return expectJson<T>(await call(method, path, body, token));
  }

  /** The next delivery of the org's subscription. */
  async function next(): Promise<ReceivedDelivery> {
    const all = await receiver.waitFor((a) => a.length > seen);
    return all[seen++] as ReceivedDelivery;
  }

  /** Asserts the next delivery is `want` (headers and `{actor, body}`) and returns its raw body. */
  async function expectEvent(want: Expected): Promise<string> {
    const got = await next();
    const what = `${want.type} of ${want.subject}`;
    assert.equal(got.headers["ce-type"], want.type, `ce-type of the next event (expected ${what})`);
    assert.equal(got.headers["ce-subject"], want.subject, `ce-subject of ${what}`);
    assert.equal(got.headers["ce-group"], want.group, `ce-group of ${what}`);
    assert.equal(got.headers["ce-bodytype"], want.bodytype, `ce-bodytype of ${what}`);
    if (want.source !== undefined) {
      assert.equal(got.headers["ce-source"], `${server.apiUrl}${want.source}`, `ce-source of ${what}`);
    }
    assert.deepEqual(
      JSON.parse(got.body),
      { actor: { subject: want.actor ?? ADMIN_IDENTITY_UID }, body: want.body },
      `{actor, body} of ${what}`,
    );
    return got.body;
  }

  /** Makes a change known to emit one event and asserts it is the next delivery (nothing came before it). */
  async function marker(): Promise<void> {
    const desc = `marker ${seen}`;
    const group = await ok("PATCH", `/iam/v2/groups/${org}`, { description: desc });
    await expectEvent({
      type: `${API}.iam.group.updated.v1`,
      subject: org,
      group: org,
      bodytype: "platform.iam.v2.Group",
      body: group,
    });
  }

  before(async () => {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    // The receiver listens on loopback, which sinks may reach only when the server allows it.
    server = await startTestServer({
      config: { eventsAllowLoopback: "true" },
      ...(databaseUrl ? { databaseUrl } : {}),
    });
    receiver = await startWebhookReceiver();
    org = await server.create("/iam/v2/groups", { name: "acme" });
  });
  after(async () => {
    await server.close();
    await receiver.close();
  });

  it("a subscription create is delivered to the subscription itself", async () => {
    const sub = await ok("POST", `/events/v2/subscriptions/${org}`, { sink: receiver.url() });
    await expectEvent({
      source: "/events/v2/subscriptions",
      type: `${API}.events.subscription.created.v1`,
      subject: sub.uid as string,
      group: org,
      bodytype: "platform.events.v2.Subscription",
      body: sub,
    });
  });

  it("groups: create and update are events of the group itself, delete of its parent", async () => {
    const team = await ok("POST", `/iam/v2/groups/${org}`, { name: "team" });
    const teamUid = team.uid as string;
    const group = {
      bodytype: "platform.iam.v2.Group",
      subject: teamUid,
      group: teamUid,
      source: "/iam/v2/groups",
    };
    await expectEvent({ type: `${API}.iam.group.created.v1`, ...group, body: team });
    const patched = await ok("PATCH", `/iam/v2/groups/${teamUid}`, { description: "the team" });
    await expectEvent({ type: `${API}.iam.group.updated.v1`, ...group, body: patched });

    const doomed = await ok("POST", `/iam/v2/groups/${teamUid}`, { name: "doomed" });
    const doomedUid = doomed.uid as string;
    await expectEvent({
      type: `${API}.iam.group.created.v1`,
      subject: doomedUid,
      group: doomedUid,
      bodytype: "platform.iam.v2.Group",
      body: doomed,
    });
    await ok("DELETE", `/iam/v2/groups/${doomedUid}`);
    await expectEvent({
      type: `${API}.iam.group.deleted.v1`,
      subject: doomedUid,
      group: teamUid,
      bodytype: "platform.iam.v2.DeleteGroupRequest",
      body: { uid: doomedUid },
    });
  });

  it("a change in a subgroup reaches the org's subscription; a change in another org does not", async () => {
    const globex = await ok("POST", "/iam/v2/groups", { name: "globex" });
    await ok("POST", `/registry/v2/repos/${globex.uid}`, { name: "elsewhere" });
    await ok("POST", `/iam/v2/roles/${globex.uid}`, { name: "foreign", capabilities: ["CAP_REPO_LIST"] });
    const team = (await ok<{ groups: Json[] }>("GET", `/iam/v2/groups?uidp.children_of=${org}&name=team`))
      .groups[0] as Json;
    const repo = await ok("POST", `/registry/v2/repos/${team.uid}`, { name: "team-app" });
    await expectEvent({
      type: `${API}.registry.repo.created.v1`,
      subject: repo.uid as string,
      group: team.uid as string,
      bodytype: "platform.registry.v2.Repo",
      body: repo,
    });
  });

  it("identities: created, updated, deleted (events of the identity's group)", async () => {
    const id = await ok("POST", `/iam/v2/identities/${org}`, {
      name: "ci-bot",
      claimMatch: { issuer: "https://ci.example.com", subject: "bot" },
    });
    const uid = id.uid as string;
    const common = { subject: uid, group: org };
    await expectEvent({
      type: `${API}.iam.identity.created.v1`,
      ...common,
      bodytype: "platform.iam.v2.Identity",
      body: id,
    });
    const patched = await ok("PATCH", `/iam/v2/identities/${uid}`, { description: "builds" });
    await expectEvent({
      type: `${API}.iam.identity.updated.v1`,
      ...common,
      bodytype: "platform.iam.v2.Identity",
      body: patched,
    });
    await ok("DELETE", `/iam/v2/identities/${uid}`);
    await expectEvent({
      type: `${API}.iam.identity.deleted.v1`,
      ...common,
      bodytype: "platform.iam.v2.DeleteIdentityRequest",
      body: { uid },
    });
  });

  it("roles: created, updated, deleted", async () => {
    const role = await ok("POST", `/iam/v2/roles/${org}`, {
      name: "lister",
      capabilities: ["CAP_REPO_LIST"],
    });
    const uid = role.uid as string;
    const common = { subject: uid, group: org };
    await expectEvent({
      type: `${API}.iam.roles.created.v1`,
      ...common,
      bodytype: "platform.iam.v2.Role",
      body: role,
    });
    const patched = await ok("PATCH", `/iam/v2/roles/${uid}`, {
      capabilities: ["CAP_REPO_LIST", "CAP_TAG_LIST"],
    });
    await expectEvent({
      type: `${API}.iam.roles.updated.v1`,
      ...common,
      bodytype: "platform.iam.v2.Role",
      body: patched,
    });
    await ok("DELETE", `/iam/v2/roles/${uid}`);
    await expectEvent({
      type: `${API}.iam.roles.deleted.v1`,
      ...common,
      bodytype: "platform.iam.v2.DeleteRoleRequest",
      body: { uid },
    });
  });

  it("role bindings: created, updated, deleted, and a batch create is one created.batch event", async () => {
    const bots: string[] = [];
    for (const name of ["bot-a", "bot-b", "bot-c"]) {
      const id = await ok("POST", `/iam/v2/identities/${org}`, {
        name,
        claimMatch: { issuer: "https://ci.example.com", subject: name },
      });
      await expectEvent({
        type: `${API}.iam.identity.created.v1`,
        subject: id.uid as string,
        group: org,
        bodytype: "platform.iam.v2.Identity",
        body: id,
      });
      bots.push(id.uid as string);
    }
    const binding = await ok("POST", `/iam/v2/roleBindings/${org}`, {
      identityUid: bots[0],
      roleUid: VIEWER,
    });
    const uid = binding.uid as string;
    const common = { subject: uid, group: org, bodytype: "platform.iam.v2.RoleBinding" };
    await expectEvent({ type: `${API}.iam.rolebindings.created.v1`, ...common, body: binding });
    const patched = await ok("PATCH", `/iam/v2/roleBindings/${uid}`, { roleUid: EDITOR });
    assert.equal(patched.roleUid, EDITOR, "role changed");
    await expectEvent({ type: `${API}.iam.rolebindings.updated.v1`, ...common, body: patched });
    await ok("DELETE", `/iam/v2/roleBindings/${uid}`);
    await expectEvent({
      type: `${API}.iam.rolebindings.deleted.v1`,
      subject: uid,
      group: org,
      bodytype: "platform.iam.v2.DeleteRoleBindingRequest",
      body: { uid },
    });

    const batch = await ok("POST", "/iam/v2/roleBindings:batchCreate", {
      parent: org,
      roleUid: VIEWER,
      requests: [{ roleBinding: { identityUid: bots[1] } }, { roleBinding: { identityUid: bots[2] } }],
    });
    assert.equal((batch.roleBindings as Json[]).length, 2, "two bindings made");
    await expectEvent({
      type: `${API}.iam.rolebindings.created.batch.v1`,
      subject: org,
      group: org,
      bodytype: "platform.iam.v2.BatchCreateRoleBindingsResponse",
      body: batch,
    });
  });

  it("identity providers: created, updated, deleted, and no event ever carries the client secret", async () => {
    const created = await ok("POST", `/iam/v2/identityProviders/${org}`, {
      name: "corporate-sso",
      defaultRole: VIEWER,
      oidc: { issuer: "https://login.acme.example", clientId: "wharf", clientSecret: SECRET },
    });
    const uid = created.uid as string;
    const common = { subject: uid, group: org, bodytype: "platform.iam.v2.IdentityProvider" };
    const raws = [
      await expectEvent({ type: `${API}.iam.identity_providers.created.v1`, ...common, body: created }),
    ];
    const patched = await ok("PATCH", `/iam/v2/identityProviders/${uid}`, {
      description: "rotated",
      oidc: { clientSecret: NEW_SECRET },
    });
    raws.push(
      await expectEvent({ type: `${API}.iam.identity_providers.updated.v1`, ...common, body: patched }),
    );
    assert.equal(
      (await server.store.identityProviders.get(uid))?.oidc.clientSecret,
      NEW_SECRET,
      "the secret was stored",
    );
    await ok("DELETE", `/iam/v2/identityProviders/${uid}`);
    raws.push(
      await expectEvent({
        type: `${API}.iam.identity_providers.deleted.v1`,
        subject: uid,
        group: org,
        bodytype: "platform.iam.v2.DeleteIdentityProviderRequest",
        body: { uid },
      }),
    );
    for (const raw of raws) {
      assert.equal(raw.includes(SECRET) || raw.includes(NEW_SECRET), false, "no secret in an IdP event");
      assert.equal(raw.includes("clientSecret"), false, "no clientSecret field in an IdP event");
    }
  });

  it("external group role mappings: created, deleted, and a batch delete is one deleted.batch event", async () => {
    const idp = await ok("POST", `/iam/v2/identityProviders/${org}`, {
      name: "mapped-sso",
      defaultRole: VIEWER,
      oidc: { issuer: "https://login.acme.example", clientId: "wharf", clientSecret: SECRET },
    });
    const idpUid = idp.uid as string;
    await expectEvent({
      type: `${API}.iam.identity_providers.created.v1`,
      subject: idpUid,
      group: org,
      bodytype: "platform.iam.v2.IdentityProvider",
      body: idp,
    });
    const mapping = async (externalGroupId: string) => {
      const m = await ok("POST", `/iam/v2/externalGroupRoleMappings/${idpUid}`, {
        externalGroupId,
        roleUid: VIEWER,
      });
      await expectEvent({
        type: `${API}.iam.external_group_role_mappings.created.v1`,
        subject: m.uid as string,
        group: idpUid,
        bodytype: "platform.iam.v2.ExternalGroupRoleMapping",
        body: m,
      });
      return m.uid as string;
    };
    const single = await mapping("devs");
    await ok("DELETE", `/iam/v2/externalGroupRoleMappings/${single}`);
    await expectEvent({
      type: `${API}.iam.external_group_role_mappings.deleted.v1`,
      subject: single,
      group: idpUid,
      bodytype: "platform.iam.v2.DeleteExternalGroupRoleMappingRequest",
      body: { uid: single },
    });
    const a = await mapping("ops");
    const b = await mapping("sre");
    const batch = await ok("POST", "/iam/v2/externalGroupRoleMappings:batchDelete", {
      parent: idpUid,
      names: [a, b],
    });
    assert.equal((batch.externalGroupRoleMappings as Json[]).length, 2, "both deleted");
    await expectEvent({
      type: `${API}.iam.external_group_role_mappings.deleted.batch.v1`,
      subject: idpUid,
      group: idpUid,
      bodytype: "platform.iam.v2.BatchDeleteExternalGroupRoleMappingsResponse",
      body: batch,
    });
  });

  it("account associations: created, updated, deleted (a repeated delete changes nothing, reports nothing)", async () => {
    const created = await ok("POST", `/iam/v2/accountAssociations/${org}`, {
      name: "clouds",
      amazon: { account: "123456789012" },
    });
    const common = { subject: org, group: org, bodytype: "platform.iam.v2.AccountAssociation" };
    await expectEvent({ type: `${API}.iam.account_associations.created.v1`, ...common, body: created });
    const patched = await ok("PATCH", `/iam/v2/accountAssociations/${org}`, { description: "prod" });
    await expectEvent({ type: `${API}.iam.account_associations.updated.v1`, ...common, body: patched });
    await ok("DELETE", `/iam/v2/accountAssociations/${org}`);
    await expectEvent({
      type: `${API}.iam.account_associations.deleted.v1`,
      subject: org,
      group: org,
      bodytype: "platform.iam.v2.DeleteAccountAssociationRequest",
      body: { uid: org },
    });
    await ok("DELETE", `/iam/v2/accountAssociations/${org}`);
    await marker();
  });

  it("group invites: created with only {uid, expirationTime} (never the code), deleted", async () => {
    const invite = await ok("POST", `/iam/v2/groupInvites/${org}`, { roleUid: VIEWER, ttl: "3600s" });
    const uid = invite.uid as string;
    const code = invite.code as string;
    assert.match(code, /^wharf_inv_/, "the response shows the code");
    const raw = await expectEvent({
      type: `${API}.iam.group_invite.created.v1`,
      subject: uid,
      group: org,
      bodytype: "platform.iam.v2.GroupInvite",
      body: { uid, expirationTime: invite.expirationTime },
    });
    assert.equal(raw.includes(code), false, "the invite code is not in the event");
    assert.equal(raw.includes(invite.keyId as string), false, "nor its key id");
    await ok("DELETE", `/iam/v2/groupInvites/${uid}`);
    await expectEvent({
      type: `${API}.iam.group_invite.deleted.v1`,
      subject: uid,
      group: org,
      bodytype: "platform.iam.v2.DeleteGroupInviteRequest",
      body: { uid },
    });
  });

  it("terms: accepting is one terms.accepted event of the group", async () => {
    const accepted = await ok("POST", `/iam/v2/terms/${org}`, { documentIds: ["sfdpa.v1"] });
    await expectEvent({
      type: `${API}.iam.terms.accepted.v1`,
      subject: org,
      group: org,
      bodytype: "platform.iam.v2.AcceptTermsResponse",
      body: accepted,
    });
  });

  it("repos: created, updated, readme updated (repo.updated), deleted", async () => {
    const repo = await ok("POST", `/registry/v2/repos/${org}`, { name: "web" });
    const uid = repo.uid as string;
    const common = { subject: uid, group: org, bodytype: "platform.registry.v2.Repo" };
    await expectEvent({ type: `${API}.registry.repo.created.v1`, ...common, body: repo });
    const patched = await ok("PATCH", `/registry/v2/repos/${uid}`, { description: "the web app" });
    await expectEvent({ type: `${API}.registry.repo.updated.v1`, ...common, body: patched });
    const readme = await ok("PATCH", `/registry/v2/repos/${uid}/readme`, { content: "# Web\n" });
    assert.equal(readme.content, "# Web\n", "readme answer");
    const reread = await ok("GET", `/registry/v2/repos/${uid}`);
    await expectEvent({ type: `${API}.registry.repo.updated.v1`, ...common, body: reread });
    await ok("DELETE", `/registry/v2/repos/${uid}`);
    await expectEvent({
      type: `${API}.registry.repo.deleted.v1`,
      subject: uid,
      group: org,
      bodytype: "platform.registry.v2.DeleteRepoRequest",
      body: { uid },
    });
  });

  it("tags: created for a new tag, updated when it moves, deleted (events of the repo)", async () => {
    const repo = await ok("POST", `/registry/v2/repos/${org}`, { name: "app" });
    const repoUid = repo.uid as string;
    await expectEvent({
      type: `${API}.registry.repo.created.v1`,
      subject: repoUid,
      group: org,
      bodytype: "platform.registry.v2.Repo",
      body: repo,
    });
    await seedManifests(server.store, repoUid, [sha(1), sha(2)]);
    const tag = await ok("POST", `/registry/v2/tags/${repoUid}`, { name: "latest", digest: sha(1) });
    const uid = tag.uid as string;
    const common = {
      subject: uid,
      group: repoUid,
      bodytype: "platform.registry.v2.Tag",
      source: "/registry/v2/tags",
    };
    await expectEvent({ type: `${API}.registry.tag.created.v1`, ...common, body: tag });
    const moved = await ok("POST", `/registry/v2/tags/${repoUid}`, { name: "latest", digest: sha(2) });
    assert.equal(moved.uid, uid, "the same tag moved");
    await expectEvent({ type: `${API}.registry.tag.updated.v1`, ...common, body: moved });
    await ok("DELETE", `/registry/v2/tags/${uid}`);
    await expectEvent({
      type: `${API}.registry.tag.deleted.v1`,
      subject: uid,
      group: repoUid,
      bodytype: "platform.registry.v2.DeleteTagRequest",
      body: { uid },
    });
  });

  it("failed writes record nothing: duplicates (rolled back), invalid input, a half-applied batch", async () => {
    await expectError(await call("POST", `/registry/v2/repos/${org}`, { name: "app" }), {
      status: 409,
      code: 6,
    });
    await expectError(await call("POST", `/iam/v2/roles/${org}`, { name: "none", capabilities: [] }), {
      status: 400,
      code: 3,
      field: "capabilities",
    });
    await expectError(
      await call("POST", `/registry/v2/tags/${org}/0000000000000000`, { name: "x", digest: sha(3) }),
      {
        status: 404,
        code: 5,
      },
    );
    const id = await ok("POST", `/iam/v2/identities/${org}`, {
      name: "twice",
      claimMatch: { issuer: "https://ci.example.com", subject: "twice" },
    });
    await expectEvent({
      type: `${API}.iam.identity.created.v1`,
      subject: id.uid as string,
      group: org,
      bodytype: "platform.iam.v2.Identity",
      body: id,
    });
    // The second entry duplicates the first: the first insert is rolled back with the batch.
    await expectError(
      await call("POST", "/iam/v2/roleBindings:batchCreate", {
        parent: org,
        roleUid: VIEWER,
        requests: [{ roleBinding: { identityUid: id.uid } }, { roleBinding: { identityUid: id.uid } }],
      }),
      { status: 409, code: 6 },
    );
    await marker();
  });

  it("a group with a subscription cannot be deleted (RESOURCE_NOT_EMPTY) and that refusal records nothing", async () => {
    const other = await startWebhookReceiver();
    try {
      const watched = await ok("POST", `/iam/v2/groups/${org}`, { name: "watched" });
      const uid = watched.uid as string;
      await expectEvent({
        type: `${API}.iam.group.created.v1`,
        subject: uid,
        group: uid,
        bodytype: "platform.iam.v2.Group",
        body: watched,
      });
      const sub = await ok("POST", `/events/v2/subscriptions/${uid}`, { sink: other.url() });
      await expectEvent({
        type: `${API}.events.subscription.created.v1`,
        subject: sub.uid as string,
        group: uid,
        bodytype: "platform.events.v2.Subscription",
        body: sub,
      });
      const refused = await expectError(await call("DELETE", `/iam/v2/groups/${uid}`), {
        status: 400,
        code: 9,
      });
      const violations = (detail(refused, "PreconditionFailure") as { violations: { type: string }[] })
        .violations;
      assert.equal(violations[0]?.type, "RESOURCE_NOT_EMPTY", "RESOURCE_NOT_EMPTY");
      assert.match(
        refused.message,
        /1 subscription/,
        `the message names the subscription: ${refused.message}`,
      );
      await marker();

      await ok("DELETE", `/events/v2/subscriptions/${sub.uid}`);
      await expectEvent({
        type: `${API}.events.subscription.deleted.v1`,
        subject: sub.uid as string,
        group: uid,
        bodytype: "platform.events.v2.DeleteSubscriptionRequest",
        body: { uid: sub.uid },
      });
      await ok("DELETE", `/iam/v2/groups/${uid}`);
      await expectEvent({
        type: `${API}.iam.group.deleted.v1`,
        subject: uid,
        group: org,
        bodytype: "platform.iam.v2.DeleteGroupRequest",
        body: { uid },
      });
    } finally {
      await other.close();
    }
  });

  it("invite redemption is one auth.registered event {identity, group} by the person", async () => {
    const uid = newRootUid();
    const now = Date.now();
    await server.store.identities.insert({
      uid,
      name: "carol",
      description: "",
      email: "carol@example.com",
      claimMatch: { issuer: "https://idp.example.com", subject: "carol" },
      createTime: now,
      updateTime: now,
    });
    const invite = await ok("POST", `/iam/v2/groupInvites/${org}`, { roleUid: VIEWER, ttl: "3600s" });
    await expectEvent({
      type: `${API}.iam.group_invite.created.v1`,
      subject: invite.uid as string,
      group: org,
      bodytype: "platform.iam.v2.GroupInvite",
      body: { uid: invite.uid, expirationTime: invite.expirationTime },
    });
    const res = await expectJson<{ identity: string; group: string }>(
      await fetch(`${server.apiUrl}/auth/v1/register`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${await server.tokenFor(uid)}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({ code: invite.code }),
      }),
    );
    assert.deepEqual([res.identity, res.group], [uid, org], "registered");
    const raw = await expectEvent({
      type: `${API}.auth.registered.v1`,
      subject: uid,
      group: org,
      bodytype: "platform.auth.v1.Registration",
      body: { identity: uid, group: org },
      actor: uid,
    });
    assert.equal(raw.includes(invite.code as string), false, "the code is not in the event");
  });

  it("nothing else was delivered: every change above was exactly one event", async () => {
    await marker();
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(receiver.accepted().length, seen, "no delivery after the last expected one");
    assert.equal(receiver.received.length, seen, "every delivery was accepted");
  });
});
