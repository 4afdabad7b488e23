import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, it } from "node:test";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import { builtInRoleUid } from "../../src/authz/built-in-roles.js";
import { detail, expectError, expectJson, type StatusBody } from "../support/api-assertions.js";
import { forEachEngine } from "../support/databases.js";
import { registeredPerson } from "../support/registered-person.js";
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
/** A Grype report (test/fixtures/vulnreports), uploaded as the JSON object it is. */
const GRYPE_REPORT = JSON.parse(
  readFileSync(new URL("../fixtures/vulnreports/grype.json", import.meta.url), "utf8"),
);

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

/** One row of the table: an operation on a resource, and the events it must cause. */
interface Change {
  /** `<resource>: <operation>`, the test's name. */
  name: string;
  /** Makes the change (through the API unless said otherwise) and returns what it answered. */
  act(): Promise<Json>;
  /** The next deliveries it must cause, in order; none for a change that must record nothing. */
  events(answer: Json): Expected[];
  /** Checks of the answer, before its events are read. */
  checkAnswer?(answer: Json): void | Promise<void>;
  /** Checks of the raw bodies of its events, once they are read. */
  checkEvents?(raws: string[], answer: Json): void;
}

/**
 * Every API change of the production services is one CloudEvent, delivered to the subscription of
 * the organization it happens in. A subscription's deliveries arrive in event order, so each row
 * reads the NEXT deliveries and checks they are the ones its change caused: an extra event (a
 * duplicate, or one of a failed or foreign write) would show up as an unexpected next delivery.
 * Rows run in order and build on each other (an update needs the create before it).
 */
forEachEngine("events of API changes", (db) => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  /** A second sink, for the subscription that keeps a group from being deleted. */
  let other: WebhookReceiver;
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

  /** A change known to emit one event: checks that nothing came before it. */
  const marker = (why: string): Change => ({
    name: `marker: ${why}`,
    act: () => ok("PATCH", `/iam/v2/groups/${org}`, { description: `marker ${seen}` }),
    events: (group) => [
      {
        type: `${API}.iam.group.updated.v1`,
        subject: org,
        group: org,
        bodytype: "platform.iam.v2.Group",
        body: group,
      },
    ],
  });

  /** A change that must fail with `status`/`code` and record nothing. */
  const refused = (
    name: string,
    request: () => Promise<Response>,
    expected: Parameters<typeof expectError>[1],
  ): Change => ({
    name,
    act: async () => ({ ...(await expectError(await request(), expected)) }),
    events: () => [],
  });

  /** An identity under the org (claim match on the CI issuer), and its created event. */
  const createIdentity = (name: string): Promise<Json> =>
    ok("POST", `/iam/v2/identities/${org}`, {
      name,
      claimMatch: { issuer: "https://ci.example.com", subject: name },
    });
  const identityCreated = (id: Json): Expected => ({
    type: `${API}.iam.identity.created.v1`,
    subject: id.uid as string,
    group: org,
    bodytype: "platform.iam.v2.Identity",
    body: id,
  });

  /** What later rows need from earlier ones. */
  const made: Record<string, string> = {};
  const bots: string[] = [];
  let invite: Json = {};
  let carol = "";

  const idpCreate = (name: string): Change => ({
    name: `identity provider: create (${name})`,
    act: async () => {
      const created = await ok("POST", `/iam/v2/identityProviders/${org}`, {
        name,
        defaultRole: VIEWER,
        oidc: { issuer: "https://login.acme.example", clientId: "wharf", clientSecret: SECRET },
      });
      made[name] = created.uid as string;
      return created;
    },
    events: (created) => [
      {
        type: `${API}.iam.identity_providers.created.v1`,
        subject: created.uid as string,
        group: org,
        bodytype: "platform.iam.v2.IdentityProvider",
        body: created,
      },
    ],
  });
  /** No event of the corporate identity provider carries its client secret. */
  const noSecret = (raws: string[]) => {
    for (const raw of raws) {
      assert.equal(raw.includes(SECRET) || raw.includes(NEW_SECRET), false, "no secret in an IdP event");
      assert.equal(raw.includes("clientSecret"), false, "no clientSecret field in an IdP event");
    }
  };
  const mappingCreate = (externalGroupId: string): Change => ({
    name: `external group role mapping: create (${externalGroupId})`,
    act: async () => {
      const m = await ok("POST", `/iam/v2/externalGroupRoleMappings/${made["mapped-sso"]}`, {
        externalGroupId,
        roleUid: VIEWER,
      });
      assert.equal(m.updateTime, m.createTime, "a mapping's updateTime is its createTime");
      made[externalGroupId] = m.uid as string;
      return m;
    },
    events: (m) => [
      {
        type: `${API}.iam.external_group_role_mappings.created.v1`,
        subject: m.uid as string,
        group: made["mapped-sso"] as string,
        bodytype: "platform.iam.v2.ExternalGroupRoleMapping",
        body: m,
      },
    ],
  });
  const repoCreate = (name: string, parent: () => string): Change => ({
    name: `repo: create (${name})`,
    act: async () => {
      const repo = await ok("POST", `/registry/v2/repos/${parent()}`, { name });
      made[name] = repo.uid as string;
      return repo;
    },
    events: (repo) => [
      {
        type: `${API}.registry.repo.created.v1`,
        subject: repo.uid as string,
        group: parent(),
        bodytype: "platform.registry.v2.Repo",
        body: repo,
      },
    ],
  });
  /** A tag event of the `app` repo's tag `latest`. */
  const tagEvent = (verb: "created" | "updated", tag: Json): Expected => ({
    type: `${API}.registry.tag.${verb}.v1`,
    subject: made.latest as string,
    group: made.app as string,
    bodytype: "platform.registry.v2.Tag",
    source: "/registry/v2/tags",
    body: tag,
  });

  const changes: Change[] = [
    {
      name: "subscription: create (delivered to the subscription itself)",
      act: () => ok("POST", `/events/v2/subscriptions/${org}`, { sink: receiver.url() }),
      checkAnswer: (sub) => assert.equal(sub.updateTime, sub.createTime, "updateTime is createTime"),
      events: (sub) => [
        {
          source: "/events/v2/subscriptions",
          type: `${API}.events.subscription.created.v1`,
          subject: sub.uid as string,
          group: org,
          bodytype: "platform.events.v2.Subscription",
          body: sub,
        },
      ],
    },
    {
      name: "group: create (an event of the group itself)",
      act: async () => {
        const team = await ok("POST", `/iam/v2/groups/${org}`, { name: "team" });
        made.team = team.uid as string;
        return team;
      },
      events: (team) => [
        {
          type: `${API}.iam.group.created.v1`,
          subject: made.team as string,
          group: made.team as string,
          bodytype: "platform.iam.v2.Group",
          source: "/iam/v2/groups",
          body: team,
        },
      ],
    },
    {
      name: "group: update (an event of the group itself)",
      act: () => ok("PATCH", `/iam/v2/groups/${made.team}`, { description: "the team" }),
      events: (patched) => [
        {
          type: `${API}.iam.group.updated.v1`,
          subject: made.team as string,
          group: made.team as string,
          bodytype: "platform.iam.v2.Group",
          source: "/iam/v2/groups",
          body: patched,
        },
      ],
    },
    {
      name: "group: create a subgroup",
      act: async () => {
        const doomed = await ok("POST", `/iam/v2/groups/${made.team}`, { name: "doomed" });
        made.doomed = doomed.uid as string;
        return doomed;
      },
      events: (doomed) => [
        {
          type: `${API}.iam.group.created.v1`,
          subject: made.doomed as string,
          group: made.doomed as string,
          bodytype: "platform.iam.v2.Group",
          body: doomed,
        },
      ],
    },
    {
      name: "group: delete (an event of its parent)",
      act: () => ok("DELETE", `/iam/v2/groups/${made.doomed}`),
      events: () => [
        {
          type: `${API}.iam.group.deleted.v1`,
          subject: made.doomed as string,
          group: made.team as string,
          bodytype: "platform.iam.v2.DeleteGroupRequest",
          body: { uid: made.doomed },
        },
      ],
    },
    {
      name: "repo: create in a subgroup reaches the org's subscription; changes in another org do not",
      act: async () => {
        const globex = await ok("POST", "/iam/v2/groups", { name: "globex" });
        await ok("POST", `/registry/v2/repos/${globex.uid}`, { name: "elsewhere" });
        await ok("POST", `/iam/v2/roles/${globex.uid}`, { name: "foreign", capabilities: ["CAP_REPO_LIST"] });
        const team = (await ok<{ groups: Json[] }>("GET", `/iam/v2/groups?uidp.children_of=${org}&name=team`))
          .groups[0] as Json;
        made.teamFound = team.uid as string;
        return ok("POST", `/registry/v2/repos/${team.uid}`, { name: "team-app" });
      },
      events: (repo) => [
        {
          type: `${API}.registry.repo.created.v1`,
          subject: repo.uid as string,
          group: made.teamFound as string,
          bodytype: "platform.registry.v2.Repo",
          body: repo,
        },
      ],
    },
    {
      name: "identity: create (an event of the identity's group)",
      act: async () => {
        const id = await createIdentity("ci-bot");
        made.ciBot = id.uid as string;
        return id;
      },
      events: (id) => [identityCreated(id)],
    },
    {
      name: "identity: update",
      act: () => ok("PATCH", `/iam/v2/identities/${made.ciBot}`, { description: "builds" }),
      events: (patched) => [
        {
          type: `${API}.iam.identity.updated.v1`,
          subject: made.ciBot as string,
          group: org,
          bodytype: "platform.iam.v2.Identity",
          body: patched,
        },
      ],
    },
    {
      name: "identity: delete",
      act: () => ok("DELETE", `/iam/v2/identities/${made.ciBot}`),
      events: () => [
        {
          type: `${API}.iam.identity.deleted.v1`,
          subject: made.ciBot as string,
          group: org,
          bodytype: "platform.iam.v2.DeleteIdentityRequest",
          body: { uid: made.ciBot },
        },
      ],
    },
    {
      name: "role: create",
      act: async () => {
        const role = await ok("POST", `/iam/v2/roles/${org}`, {
          name: "lister",
          capabilities: ["CAP_REPO_LIST"],
        });
        made.lister = role.uid as string;
        return role;
      },
      events: (role) => [
        {
          type: `${API}.iam.roles.created.v1`,
          subject: made.lister as string,
          group: org,
          bodytype: "platform.iam.v2.Role",
          body: role,
        },
      ],
    },
    {
      name: "role: update",
      act: () =>
        ok("PATCH", `/iam/v2/roles/${made.lister}`, { capabilities: ["CAP_REPO_LIST", "CAP_TAG_LIST"] }),
      events: (patched) => [
        {
          type: `${API}.iam.roles.updated.v1`,
          subject: made.lister as string,
          group: org,
          bodytype: "platform.iam.v2.Role",
          body: patched,
        },
      ],
    },
    {
      name: "role: delete",
      act: () => ok("DELETE", `/iam/v2/roles/${made.lister}`),
      events: () => [
        {
          type: `${API}.iam.roles.deleted.v1`,
          subject: made.lister as string,
          group: org,
          bodytype: "platform.iam.v2.DeleteRoleRequest",
          body: { uid: made.lister },
        },
      ],
    },
    ...["bot-a", "bot-b", "bot-c"].map(
      (name): Change => ({
        name: `identity: create (${name}, to bind)`,
        act: async () => {
          const id = await createIdentity(name);
          bots.push(id.uid as string);
          return id;
        },
        events: (id) => [identityCreated(id)],
      }),
    ),
    {
      name: "role binding: create",
      act: async () => {
        const binding = await ok("POST", `/iam/v2/roleBindings/${org}`, {
          identityUid: bots[0],
          roleUid: VIEWER,
        });
        made.binding = binding.uid as string;
        return binding;
      },
      events: (binding) => [
        {
          type: `${API}.iam.rolebindings.created.v1`,
          subject: made.binding as string,
          group: org,
          bodytype: "platform.iam.v2.RoleBinding",
          body: binding,
        },
      ],
    },
    {
      name: "role binding: update",
      act: () => ok("PATCH", `/iam/v2/roleBindings/${made.binding}`, { roleUid: EDITOR }),
      checkAnswer: (patched) => assert.equal(patched.roleUid, EDITOR, "role changed"),
      events: (patched) => [
        {
          type: `${API}.iam.rolebindings.updated.v1`,
          subject: made.binding as string,
          group: org,
          bodytype: "platform.iam.v2.RoleBinding",
          body: patched,
        },
      ],
    },
    {
      name: "role binding: delete",
      act: () => ok("DELETE", `/iam/v2/roleBindings/${made.binding}`),
      events: () => [
        {
          type: `${API}.iam.rolebindings.deleted.v1`,
          subject: made.binding as string,
          group: org,
          bodytype: "platform.iam.v2.DeleteRoleBindingRequest",
          body: { uid: made.binding },
        },
      ],
    },
    {
      name: "role binding: batch create (one created.batch event)",
      act: () =>
        ok("POST", "/iam/v2/roleBindings:batchCreate", {
          parent: org,
          roleUid: VIEWER,
          requests: [{ roleBinding: { identityUid: bots[1] } }, { roleBinding: { identityUid: bots[2] } }],
        }),
      checkAnswer: (batch) => assert.equal((batch.roleBindings as Json[]).length, 2, "two bindings made"),
      events: (batch) => [
        {
          type: `${API}.iam.rolebindings.created.batch.v1`,
          subject: org,
          group: org,
          bodytype: "platform.iam.v2.BatchCreateRoleBindingsResponse",
          body: batch,
        },
      ],
    },
    { ...idpCreate("corporate-sso"), checkEvents: noSecret },
    {
      name: "identity provider: update (rotating the secret)",
      act: () =>
        ok("PATCH", `/iam/v2/identityProviders/${made["corporate-sso"]}`, {
          description: "rotated",
          oidc: { clientSecret: NEW_SECRET },
        }),
      checkAnswer: async () =>
        assert.equal(
          (await server.store.identityProviders.get(made["corporate-sso"] as string))?.oidc.clientSecret,
          NEW_SECRET,
          "the secret was stored",
        ),
      events: (patched) => [
        {
          type: `${API}.iam.identity_providers.updated.v1`,
          subject: made["corporate-sso"] as string,
          group: org,
          bodytype: "platform.iam.v2.IdentityProvider",
          body: patched,
        },
      ],
      checkEvents: noSecret,
    },
    {
      name: "identity provider: delete",
      act: () => ok("DELETE", `/iam/v2/identityProviders/${made["corporate-sso"]}`),
      events: () => [
        {
          type: `${API}.iam.identity_providers.deleted.v1`,
          subject: made["corporate-sso"] as string,
          group: org,
          bodytype: "platform.iam.v2.DeleteIdentityProviderRequest",
          body: { uid: made["corporate-sso"] },
        },
      ],
      checkEvents: noSecret,
    },
    idpCreate("mapped-sso"),
    mappingCreate("devs"),
    {
      name: "external group role mapping: delete",
      act: () => ok("DELETE", `/iam/v2/externalGroupRoleMappings/${made.devs}`),
      events: () => [
        {
          type: `${API}.iam.external_group_role_mappings.deleted.v1`,
          subject: made.devs as string,
          group: made["mapped-sso"] as string,
          bodytype: "platform.iam.v2.DeleteExternalGroupRoleMappingRequest",
          body: { uid: made.devs },
        },
      ],
    },
    mappingCreate("ops"),
    mappingCreate("sre"),
    {
      name: "external group role mapping: batch delete (one deleted.batch event)",
      act: () =>
        ok("POST", "/iam/v2/externalGroupRoleMappings:batchDelete", {
          parent: made["mapped-sso"],
          names: [made.ops, made.sre],
        }),
      checkAnswer: (batch) =>
        assert.equal((batch.externalGroupRoleMappings as Json[]).length, 2, "both deleted"),
      events: (batch) => [
        {
          type: `${API}.iam.external_group_role_mappings.deleted.batch.v1`,
          subject: made["mapped-sso"] as string,
          group: made["mapped-sso"] as string,
          bodytype: "platform.iam.v2.BatchDeleteExternalGroupRoleMappingsResponse",
          body: batch,
        },
      ],
    },
    {
      name: "account association: create",
      act: () =>
        ok("POST", `/iam/v2/accountAssociations/${org}`, {
          name: "clouds",
          amazon: { account: "123456789012" },
        }),
      events: (created) => [
        {
          type: `${API}.iam.account_associations.created.v1`,
          subject: org,
          group: org,
          bodytype: "platform.iam.v2.AccountAssociation",
          body: created,
        },
      ],
    },
    {
      name: "account association: update",
      act: () => ok("PATCH", `/iam/v2/accountAssociations/${org}`, { description: "prod" }),
      events: (patched) => [
        {
          type: `${API}.iam.account_associations.updated.v1`,
          subject: org,
          group: org,
          bodytype: "platform.iam.v2.AccountAssociation",
          body: patched,
        },
      ],
    },
    {
      name: "account association: delete",
      act: () => ok("DELETE", `/iam/v2/accountAssociations/${org}`),
      events: () => [
        {
          type: `${API}.iam.account_associations.deleted.v1`,
          subject: org,
          group: org,
          bodytype: "platform.iam.v2.DeleteAccountAssociationRequest",
          body: { uid: org },
        },
      ],
    },
    {
      name: "account association: a repeated delete changes nothing and reports nothing",
      act: () => ok("DELETE", `/iam/v2/accountAssociations/${org}`),
      events: () => [],
    },
    marker("after the repeated account association delete"),
    {
      name: "group invite: create (only {uid, expirationTime}, never the code)",
      act: async () => {
        invite = await ok("POST", `/iam/v2/groupInvites/${org}`, { roleUid: VIEWER, ttl: "3600s" });
        return invite;
      },
      checkAnswer: (created) => {
        assert.match(created.code as string, /^wharf_inv_/, "the response shows the code");
        assert.equal(created.updateTime, created.createTime, "an invite's updateTime is its createTime");
      },
      events: (created) => [
        {
          type: `${API}.iam.group_invite.created.v1`,
          subject: created.uid as string,
          group: org,
          bodytype: "platform.iam.v2.GroupInvite",
          body: { uid: created.uid, expirationTime: created.expirationTime },
        },
      ],
      checkEvents: ([raw], created) => {
        assert.equal(raw?.includes(created.code as string), false, "the invite code is not in the event");
        assert.equal(raw?.includes(created.keyId as string), false, "nor its key id");
      },
    },
    {
      name: "group invite: delete",
      act: () => ok("DELETE", `/iam/v2/groupInvites/${invite.uid}`),
      events: () => [
        {
          type: `${API}.iam.group_invite.deleted.v1`,
          subject: invite.uid as string,
          group: org,
          bodytype: "platform.iam.v2.DeleteGroupInviteRequest",
          body: { uid: invite.uid },
        },
      ],
    },
    {
      name: "terms: accept (one terms.accepted event of the group)",
      act: () => ok("POST", `/iam/v2/terms/${org}`, { documentIds: ["sfdpa.v1"] }),
      events: (accepted) => [
        {
          type: `${API}.iam.terms.accepted.v1`,
          subject: org,
          group: org,
          bodytype: "platform.iam.v2.AcceptTermsResponse",
          body: accepted,
        },
      ],
    },
    repoCreate("web", () => org),
    {
      name: "repo: update",
      act: () => ok("PATCH", `/registry/v2/repos/${made.web}`, { description: "the web app" }),
      events: (patched) => [
        {
          type: `${API}.registry.repo.updated.v1`,
          subject: made.web as string,
          group: org,
          bodytype: "platform.registry.v2.Repo",
          body: patched,
        },
      ],
    },
    {
      name: "repo: readme update (a repo.updated event with the repo as its body)",
      act: async () => {
        const readme = await ok("PATCH", `/registry/v2/repos/${made.web}/readme`, { content: "# Web\n" });
        assert.equal(readme.content, "# Web\n", "readme answer");
        return ok("GET", `/registry/v2/repos/${made.web}`);
      },
      events: (reread) => [
        {
          type: `${API}.registry.repo.updated.v1`,
          subject: made.web as string,
          group: org,
          bodytype: "platform.registry.v2.Repo",
          body: reread,
        },
      ],
    },
    {
      name: "repo: delete",
      act: () => ok("DELETE", `/registry/v2/repos/${made.web}`),
      events: () => [
        {
          type: `${API}.registry.repo.deleted.v1`,
          subject: made.web as string,
          group: org,
          bodytype: "platform.registry.v2.DeleteRepoRequest",
          body: { uid: made.web },
        },
      ],
    },
    repoCreate("app", () => org),
    {
      name: "tag: create (a new tag; an event of the repo)",
      act: async () => {
        await seedManifests(server.store, made.app as string, [sha(1), sha(2)]);
        const tag = await ok("POST", `/registry/v2/tags/${made.app}`, { name: "latest", digest: sha(1) });
        made.latest = tag.uid as string;
        return tag;
      },
      events: (tag) => [tagEvent("created", tag)],
    },
    {
      name: "tag: update (the tag moves)",
      act: () => ok("POST", `/registry/v2/tags/${made.app}`, { name: "latest", digest: sha(2) }),
      checkAnswer: (moved) => assert.equal(moved.uid, made.latest, "the same tag moved"),
      events: (moved) => [tagEvent("updated", moved)],
    },
    {
      name: "tag: delete",
      act: () => ok("DELETE", `/registry/v2/tags/${made.latest}`),
      events: () => [
        {
          type: `${API}.registry.tag.deleted.v1`,
          subject: made.latest as string,
          group: made.app as string,
          bodytype: "platform.registry.v2.DeleteTagRequest",
          body: { uid: made.latest },
        },
      ],
    },
    {
      name: "vuln report: create (an event of the repo; the report without its vulnerabilities)",
      act: () => ok("POST", `/registry/v1/vuln_reports/${made.app}?digest=${sha(1)}`, GRYPE_REPORT),
      checkAnswer: (report) => assert.equal(report.vulnerabilityCount, "4"),
      events: (report) => [
        {
          type: `${API}.registry.vuln_report.created.v1`,
          subject: report.id as string,
          group: made.app as string,
          bodytype: "platform.registry.v1.ImageVulnReport",
          body: report,
          source: "/registry/v1/vuln_reports",
        },
      ],
    },
    refused(
      "vuln report: a report in no known format records nothing",
      () =>
        call("POST", `/registry/v1/vuln_reports/${made.app}?digest=${sha(1)}`, { bomFormat: "CycloneDX" }),
      { status: 400, code: 3, field: "raw_report" },
    ),
    refused(
      "repo: a duplicate create is rolled back and records nothing",
      () => call("POST", `/registry/v2/repos/${org}`, { name: "app" }),
      { status: 409, code: 6 },
    ),
    refused(
      "role: a create with invalid input records nothing",
      () => call("POST", `/iam/v2/roles/${org}`, { name: "none", capabilities: [] }),
      { status: 400, code: 3, field: "capabilities" },
    ),
    refused(
      "tag: a create in a missing repo records nothing",
      () => call("POST", `/registry/v2/tags/${org}/0000000000000000`, { name: "x", digest: sha(3) }),
      { status: 404, code: 5 },
    ),
    {
      name: "identity: create (to bind twice)",
      act: async () => {
        const id = await createIdentity("twice");
        made.twice = id.uid as string;
        return id;
      },
      events: (id) => [identityCreated(id)],
    },
    // The second entry duplicates the first: the first insert is rolled back with the batch.
    refused(
      "role binding: a half-applied batch create is rolled back and records nothing",
      () =>
        call("POST", "/iam/v2/roleBindings:batchCreate", {
          parent: org,
          roleUid: VIEWER,
          requests: [
            { roleBinding: { identityUid: made.twice } },
            { roleBinding: { identityUid: made.twice } },
          ],
        }),
      { status: 409, code: 6 },
    ),
    marker("after the failed writes"),
    {
      name: "group: create (to watch)",
      act: async () => {
        const watched = await ok("POST", `/iam/v2/groups/${org}`, { name: "watched" });
        made.watched = watched.uid as string;
        return watched;
      },
      events: (watched) => [
        {
          type: `${API}.iam.group.created.v1`,
          subject: made.watched as string,
          group: made.watched as string,
          bodytype: "platform.iam.v2.Group",
          body: watched,
        },
      ],
    },
    {
      name: "subscription: create (of the subgroup)",
      act: async () => {
        const sub = await ok("POST", `/events/v2/subscriptions/${made.watched}`, { sink: other.url() });
        made.watchedSub = sub.uid as string;
        return sub;
      },
      events: (sub) => [
        {
          type: `${API}.events.subscription.created.v1`,
          subject: sub.uid as string,
          group: made.watched as string,
          bodytype: "platform.events.v2.Subscription",
          body: sub,
        },
      ],
    },
    {
      ...refused(
        "group: a delete refused for its subscription (RESOURCE_NOT_EMPTY) records nothing",
        () => call("DELETE", `/iam/v2/groups/${made.watched}`),
        { status: 400, code: 9 },
      ),
      checkAnswer: (refusal) => {
        const violations = (
          detail(refusal as unknown as StatusBody, "PreconditionFailure") as {
            violations: { type: string }[];
          }
        ).violations;
        assert.equal(violations[0]?.type, "RESOURCE_NOT_EMPTY", "RESOURCE_NOT_EMPTY");
        assert.match(
          refusal.message as string,
          /1 subscription/,
          `the message names the subscription: ${refusal.message}`,
        );
      },
    },
    marker("after the refused group delete"),
    {
      name: "subscription: delete",
      act: () => ok("DELETE", `/events/v2/subscriptions/${made.watchedSub}`),
      events: () => [
        {
          type: `${API}.events.subscription.deleted.v1`,
          subject: made.watchedSub as string,
          group: made.watched as string,
          bodytype: "platform.events.v2.DeleteSubscriptionRequest",
          body: { uid: made.watchedSub },
        },
      ],
    },
    {
      name: "group: delete (once its subscription is gone)",
      act: () => ok("DELETE", `/iam/v2/groups/${made.watched}`),
      events: () => [
        {
          type: `${API}.iam.group.deleted.v1`,
          subject: made.watched as string,
          group: org,
          bodytype: "platform.iam.v2.DeleteGroupRequest",
          body: { uid: made.watched },
        },
      ],
    },
    {
      name: "group invite: create (for a registered person)",
      act: async () => {
        carol = (await registeredPerson(server, "carol")).uid;
        invite = await ok("POST", `/iam/v2/groupInvites/${org}`, { roleUid: VIEWER, ttl: "3600s" });
        return invite;
      },
      events: (created) => [
        {
          type: `${API}.iam.group_invite.created.v1`,
          subject: created.uid as string,
          group: org,
          bodytype: "platform.iam.v2.GroupInvite",
          body: { uid: created.uid, expirationTime: created.expirationTime },
        },
      ],
    },
    {
      name: "registration: redeem an invite (one auth.registered event {identity, group} by the person)",
      act: async () =>
        expectJson(
          await fetch(`${server.apiUrl}/auth/v1/register`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${await server.tokenFor(carol)}`,
              "content-type": "application/json",
            },
            body: JSON.stringify({ code: invite.code }),
          }),
        ),
      checkAnswer: (res) => assert.deepEqual([res.identity, res.group], [carol, org], "registered"),
      events: () => [
        {
          type: `${API}.auth.registered.v1`,
          subject: carol,
          group: org,
          bodytype: "platform.auth.v1.Registration",
          body: { identity: carol, group: org },
          actor: carol,
        },
      ],
      checkEvents: ([raw]) =>
        assert.equal(raw?.includes(invite.code as string), false, "the code is not in the event"),
    },
  ];

  before(async () => {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    // The receiver listens on loopback, which sinks may reach only when the server allows it.
    server = await startTestServer({
      config: { eventsAllowLoopback: "true" },
      ...(databaseUrl ? { databaseUrl } : {}),
    });
    receiver = await startWebhookReceiver();
    other = await startWebhookReceiver();
    org = await server.create("/iam/v2/groups", { name: "acme" });
  });
  after(async () => {
    await server.close();
    await receiver.close();
    await other.close();
  });

  for (const change of changes) {
    it(change.name, async () => {
      const answer = await change.act();
      await change.checkAnswer?.(answer);
      const raws: string[] = [];
      for (const want of change.events(answer)) raws.push(await expectEvent(want));
      change.checkEvents?.(raws, answer);
    });
  }

  it("nothing else was delivered: every change above was exactly one event", async () => {
    const last = marker("the last change");
    const answer = await last.act();
    for (const want of last.events(answer)) await expectEvent(want);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(receiver.accepted().length, seen, "no delivery after the last expected one");
    assert.equal(receiver.received.length, seen, "every delivery was accepted");
  });
});
