import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { BUILT_IN_ROLE_UIDS } from "../../src/authz/built-in-roles.js";
import * as groupsV1 from "../../src/gen/platform/iam/v1/groups_pb.js";
import * as bindingsV1 from "../../src/gen/platform/iam/v1/role_bindings_pb.js";
import * as rolesV1 from "../../src/gen/platform/iam/v1/roles_pb.js";
import { expectError, expectJson } from "../support/api-assertions.js";
import { onOneEngine } from "../support/databases.js";
import { grpcCall } from "../support/grpc-call.js";
import { registeredPerson } from "../support/registered-person.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

/** The fields of JSON answers these tests read (whether each is there is what they assert). */
interface Body {
  id: string;
  uid: string;
  name: string;
  description?: string;
  status?: string;
  kind?: string;
  verified?: boolean;
  items: Body[];
  groups: Body[];
  identities: Body[];
  termsAcceptances: Body[];
  claimMatch?: Record<string, string>;
  staticKeys: { expirationTime: string };
  createdAt: string;
  updatedAt: string;
  lastSeen?: string;
  lastSeenTime?: string;
  createTime: string;
  updateTime: string;
  capabilities: string[];
  identity: string;
  identityUid: string;
  roleUid: string;
  email?: string;
  docId: string;
  acceptedBy: string;
  group: string;
  role: string;
}
/** A v1 role binding as listed: its group and role whole. */
interface BindingItem extends Omit<Body, "group" | "role"> {
  group: Body;
  role: Body;
}
/** A v2 role binding, hydrated. */
interface V2Binding extends Omit<Body, "role"> {
  role: Body;
}

const VIEWER = BUILT_IN_ROLE_UIDS.viewer;
/** How long a test waits for webhook deliveries: generous, for a loaded machine. */
const DELIVERY_WAIT_MS = 60_000;
const PULL = BUILT_IN_ROLE_UIDS["registry.pull"];
/** A JWKS with one public key, as a static-keys identity registers it. */
const JWKS = JSON.stringify({
  keys: [
    {
      kty: "EC",
      crv: "P-256",
      x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
      y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
    },
  ],
});

/**
 * The v1 IAM face (Groups, Identities, Roles, RoleBindings, Terms) over the v2 services, on SQLite
 * and PostgreSQL: what v1 writes v2 reads field by field and the reverse, the v1 conventions (id,
 * unpaged items, id filter with an empty 200 for a missing resource, PUT full replacement, no
 * deprecation headers), the same CloudEvents as v2, cross-organization refusals and gRPC calls.
 */
onOneEngine("the v1 IAM API (groups, identities, roles, role bindings, terms)", (db) => {
  let wharf: TestServer;
  let receiver: WebhookReceiver;
  let client: grpc.Client;
  let org: string;
  let counter = 0;
  const unique = (prefix: string) => `${prefix}-${++counter}`;

  /** A call as the administrator (or `token`): the answer's JSON, asserting HTTP 200. */
  async function ok<T = Body>(method: string, path: string, body?: unknown, token?: string): Promise<T> {
    return expectJson<T>(await send(method, path, body, token));
  }
  function send(method: string, path: string, body?: unknown, token?: string): Promise<Response> {
    return wharf.api(path, {
      method,
      token: token ?? wharf.adminToken,
      ...(body === undefined ? {} : { body }),
    });
  }

  /** The CloudEvent types delivered for `subject`, once `count` of them arrived, sorted. */
  async function eventTypes(subject: string, count: number): Promise<string[]> {
    const of = (all: typeof receiver.received) => all.filter((d) => d.headers["ce-subject"] === subject);
    const delivered = of(await receiver.waitFor((all) => of(all).length >= count, DELIVERY_WAIT_MS));
    return delivered.map((d) => String(d.headers["ce-type"])).sort();
  }

  before(async () => {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    const config = { eventsAllowLoopback: "true" }; // the receiver listens on loopback
    wharf = await startTestServer(databaseUrl ? { databaseUrl, config } : { config });
    receiver = await startWebhookReceiver();
    client = new grpc.Client(new URL(wharf.apiUrl).host, grpc.credentials.createInsecure());
    org = (await ok<Body>("POST", "/iam/v1/groups", { name: "acme", description: "the acme org" })).id;
    await ok("POST", `/events/v2/subscriptions/${org}`, { sink: receiver.url() });
  });
  after(async () => {
    client?.close();
    await wharf?.close();
    await receiver?.close();
  });

  it("groups: v1 writes read back through v2 and v2 writes through v1, field by field", async () => {
    const root = await ok<Body>("POST", "/iam/v1/groups", {
      name: "initech",
      description: "root",
      kind: "ORG_KIND_DEV",
    });
    assert.match(root.id, /^[0-9a-f]{40}$/, "a root create without a parent is an organization");
    assert.equal(root.uid, undefined, "v1 names it id");
    assert.equal(root.kind, undefined, "Wharf has no organization kinds: the input kind is ignored");
    assert.equal(root.status, "ORG_STATUS_READY");

    const v1Made = await ok<Body>("POST", `/iam/v1/groups/${org}`, {
      name: "team",
      description: "made in v1",
    });
    const asV2 = await ok<Body>("GET", `/iam/v2/groups/${v1Made.id}`);
    assert.deepEqual(
      { uid: asV2.uid, name: asV2.name, description: asV2.description, verified: asV2.verified ?? false },
      { uid: v1Made.id, name: "team", description: "made in v1", verified: false },
    );

    const v2Made = await ok<Body>("POST", `/iam/v2/groups/${org}`, {
      name: "squad",
      description: "made in v2",
    });
    const { items } = await ok<{ items: Body[] }>("GET", `/iam/v1/groups?id=${v2Made.uid}`);
    assert.deepEqual(items, [
      { id: v2Made.uid, name: "squad", description: "made in v2", status: "ORG_STATUS_READY" },
    ]);
  });

  it("groups: PUT replaces the whole group (an omitted description is cleared), DELETE removes it", async () => {
    const made = await ok<Body>("POST", `/iam/v1/groups/${org}`, { name: "ops", description: "keep me?" });
    const put = await ok<Body>("PUT", `/iam/v1/groups/${made.id}`, { name: "ops2" });
    assert.equal(put.name, "ops2");
    assert.equal(put.description, undefined);
    const read = await ok<Body>("GET", `/iam/v2/groups/${made.id}`);
    assert.equal(read.name, "ops2");
    assert.equal(read.description ?? "", "", "the omitted description was reset");
    await expectError(await send("PUT", `/iam/v1/groups/${made.id}`, { description: "no name" }), {
      status: 400,
      code: 3,
      field: "name",
    });

    assert.deepEqual(await ok("DELETE", `/iam/v1/groups/${made.id}`), {});
    await expectError(await send("GET", `/iam/v2/groups/${made.id}`), { status: 404, code: 5 });
  });

  it("lists are unpaged {items}, an id filter replaces Get (missing → empty 200), no deprecation headers", async () => {
    const res = await send("GET", `/iam/v1/groups?uidp.children_of=${org}`);
    assert.equal(res.headers.get("deprecation"), null);
    assert.equal(res.headers.get("sunset"), null);
    const listed = await expectJson<Body>(res);
    assert.deepEqual(Object.keys(listed), ["items"], "no nextPageToken, no totalCount");
    const v2 = await ok<Body>("GET", `/iam/v2/groups?uidp.children_of=${org}&page_size=200`);
    assert.deepEqual(listed.items.map((g: Body) => g.id).sort(), v2.groups.map((g: Body) => g.uid).sort());

    const absent = `${org}/0123456789abcdef`;
    for (const path of ["groups", "identities", "roles", "rolebindings"]) {
      const missing = await send("GET", `/iam/v1/${path}?id=${absent}`);
      assert.equal(missing.status, 200, `${path}: a missing id is not an error`);
      assert.deepEqual(await missing.json(), {}, `${path}: empty items (omitted as JSON does)`);
    }
    await expectError(await send("GET", "/iam/v1/groups?id=not-a-uid"), {
      status: 400,
      code: 3,
      field: "id",
    });
    const byName = await ok<{ items: Body[] }>("GET", `/iam/v1/groups?uidp.children_of=${org}&name=squad`);
    assert.deepEqual(
      byName.items.map((g) => g.name),
      ["squad"],
    );
  });

  it("an unpaged v1 list gathers every page of the v2 list (more than one v2 page here)", async () => {
    const crowd = (await ok<Body>("POST", `/iam/v1/groups/${org}`, { name: "crowd" })).id;
    const now = Date.now();
    const uids = Array.from(
      { length: 230 },
      (_, i) => `${crowd}/${(0x1000 + i).toString(16).padStart(16, "0")}`,
    );
    for (const [i, uid] of uids.entries()) {
      await wharf.store.identities.insert({
        uid,
        name: `bot-${i}`,
        description: "",
        email: "",
        claimMatch: { issuer: "https://ci.example.com", subject: `bot-${i}` },
        createTime: now,
        updateTime: now,
      });
    }
    const firstV2Page = await ok<Body & { nextPageToken?: string }>(
      "GET",
      `/iam/v2/identities?uidp.children_of=${crowd}&page_size=500`,
    );
    assert.equal(firstV2Page.identities.length, 200, "v2 answers at most 200 a page");
    assert.ok(firstV2Page.nextPageToken);
    const v1 = await ok<{ items: Body[] }>("GET", `/iam/v1/identities?uidp.children_of=${crowd}`);
    assert.deepEqual(v1.items.map((i) => i.id).sort(), uids);
  });

  it("groups: LookupGroup finds the verified organization of the caller's email domain, else NOT_FOUND", async () => {
    const ann = await registeredPerson(wharf, "ann", { email: "ann@example.org" });
    await expectError(await send("GET", "/iam/v1/groups:lookupGroup", undefined, ann.token), {
      status: 404,
      code: 5,
    });
    // Ann creates (and owns) the organization named after her domain: not verified yet.
    const made = await ok<Body>("POST", "/iam/v2/groups", { name: "example.org" }, ann.token);
    const uid = made.uid as string;
    assert.equal(made.verified ?? false, false);
    await expectError(await send("GET", "/iam/v1/groups:lookupGroup", undefined, ann.token), {
      status: 404,
      code: 5,
    });
    // Only the platform administrator verifies, by naming `verified` in the mask.
    await expectError(
      await send("PATCH", `/iam/v2/groups/${uid}?updateMask=verified`, { verified: true }, ann.token),
      { status: 403, code: 7 },
    );
    // Over REST a PATCH without a mask names its body's keys: still the administrator's alone.
    await expectError(await send("PATCH", `/iam/v2/groups/${uid}`, { verified: true }, ann.token), {
      status: 403,
      code: 7,
    });
    const described = await ok<Body>("PATCH", `/iam/v2/groups/${uid}`, { description: "ours" }, ann.token);
    assert.equal(described.verified ?? false, false, "a description update leaves it unverified");
    const folder = await ok<Body>("POST", `/iam/v2/groups/${uid}`, { name: "team" }, ann.token);
    await expectError(
      await send("PATCH", `/iam/v2/groups/${folder.uid}?updateMask=verified`, { verified: true }),
      { status: 400, code: 3, field: "verified" },
    );
    const verified = await ok<Body>("PATCH", `/iam/v2/groups/${uid}?updateMask=verified`, { verified: true });
    assert.equal(verified.verified, true);
    const v2 = await ok<Body>("GET", "/iam/v2/groups:lookupGroup", undefined, ann.token);
    assert.equal(v2.uid, uid, "the v2 LookupGroup finds it");
    const found = await ok<{ group: Body }>("GET", "/iam/v1/groups:lookupGroup", undefined, ann.token);
    assert.deepEqual(found.group, {
      id: uid,
      name: "example.org",
      description: "ours",
      verified: true,
      status: "ORG_STATUS_READY",
    });
    const bob = await registeredPerson(wharf, "bob", { email: "bob@elsewhere.example" });
    await expectError(await send("GET", "/iam/v1/groups:lookupGroup", undefined, bob.token), {
      status: 404,
      code: 5,
    });
  });

  it("identities: parity both ways (claimMatch and static), PUT reset, lookup, refused shapes", async () => {
    const v1Made = await ok<Body>("POST", `/iam/v1/identities/${org}`, {
      name: "ci-bot",
      description: "pipeline",
      claimMatch: { issuer: "https://ci.example.com", subjectPattern: "repo:acme/.*" },
    });
    const asV2 = await ok<Body>("GET", `/iam/v2/identities/${v1Made.id}`);
    assert.equal(asV2.uid, v1Made.id);
    assert.equal(asV2.name, "ci-bot");
    assert.equal(asV2.description, "pipeline");
    assert.deepEqual(asV2.claimMatch, v1Made.claimMatch);
    assert.deepEqual(v1Made.claimMatch, { issuer: "https://ci.example.com", subjectPattern: "repo:acme/.*" });
    assert.equal(asV2.createTime, v1Made.createdAt);
    assert.equal(asV2.updateTime, v1Made.updatedAt);
    assert.match(v1Made.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const expiration = new Date(Date.now() + 86_400_000).toISOString();
    const v2Made = await ok<Body>("POST", `/iam/v2/identities/${org}`, {
      name: "signer",
      staticKeys: {
        issuer: "https://keys.example.com",
        subject: "signer",
        issuerKeys: JWKS,
        expirationTime: expiration,
        audiences: ["wharf"],
      },
    });
    const { items } = await ok<{ items: Body[] }>(
      "GET",
      `/iam/v1/identities?id=${encodeURIComponent(v2Made.uid)}`,
    );
    assert.deepEqual(items, [
      {
        id: v2Made.uid,
        name: "signer",
        createdAt: v2Made.createTime,
        updatedAt: v2Made.updateTime,
        static: {
          issuer: "https://keys.example.com",
          subject: "signer",
          issuerKeys: JWKS,
          expiration: v2Made.staticKeys.expirationTime,
          audiences: ["wharf"],
        },
      },
    ]);

    // lastSeen is set by federation (STS, login); written here as the STS would.
    const stored = await wharf.store.identities.get(v1Made.id);
    assert.ok(stored);
    await wharf.store.identities.update({ ...stored, lastSeenTime: Date.parse("2026-03-04T05:06:07.089Z") });
    const seen = (await ok<{ items: Body[] }>("GET", `/iam/v1/identities?id=${v1Made.id}`)).items[0];
    assert.equal(seen?.lastSeen, "2026-03-04T05:06:07.089Z");
    assert.equal((await ok<Body>("GET", `/iam/v2/identities/${v1Made.id}`)).lastSeenTime, seen?.lastSeen);

    const put = await ok<Body>("PUT", `/iam/v1/identities/${v1Made.id}`, {
      name: "ci-bot",
      claimMatch: { issuer: "https://ci.example.com", subject: "repo:acme/app" },
    });
    assert.equal(put.description, undefined, "the omitted description was reset");
    assert.deepEqual((await ok<Body>("GET", `/iam/v2/identities/${v1Made.id}`)).claimMatch, {
      issuer: "https://ci.example.com",
      subject: "repo:acme/app",
    });
    await expectError(await send("PUT", `/iam/v1/identities/${v1Made.id}`, { name: "ci-bot" }), {
      status: 400,
      code: 3,
    });
    await expectError(
      await send("POST", `/iam/v1/identities/${org}`, { name: "svc", servicePrincipal: "COSIGNED" }),
      { status: 400, code: 3, field: "service_principal" },
    );
    await expectError(
      await send("POST", `/iam/v1/identities/${org}`, {
        name: "aws",
        awsIdentity: { awsAccount: "123456789012" },
      }),
      { status: 400, code: 3, field: "aws_identity" },
    );

    const query = "issuer=https%3A%2F%2Fidp.example.com&subject=zoe";
    const v1Lookup = await ok<Body>("GET", `/iam/v1/identities/lookup?${query}`);
    const v2Lookup = await ok<Body>("GET", `/iam/v2/identities:lookupIdentity?${query}`);
    assert.deepEqual(v1Lookup, { id: v2Lookup.uid });

    assert.deepEqual(await ok("DELETE", `/iam/v1/identities/${v1Made.id}`), {});
    await expectError(await send("GET", `/iam/v2/identities/${v1Made.id}`), { status: 404, code: 5 });
  });

  it("roles: friendly capability names both ways, unknown names refused by field, parent filter, PUT reset", async () => {
    const v1Made = await ok<Body>("POST", `/iam/v1/roles/${org}`, {
      name: "puller",
      description: "pulls",
      capabilities: ["repo.list", "groups.list"],
    });
    assert.deepEqual([...v1Made.capabilities].sort(), ["groups.list", "repo.list"]);
    const asV2 = await ok<Body>("GET", `/iam/v2/roles/${v1Made.id}`);
    assert.deepEqual(
      { name: asV2.name, description: asV2.description, capabilities: [...asV2.capabilities].sort() },
      { name: "puller", description: "pulls", capabilities: ["CAP_IAM_GROUPS_LIST", "CAP_REPO_LIST"] },
    );

    const v2Made = await ok<Body>("POST", `/iam/v2/roles/${org}`, {
      name: "pusher",
      capabilities: ["CAP_REPO_CREATE"],
    });
    const { items } = await ok<{ items: Body[] }>("GET", `/iam/v1/roles?id=${v2Made.uid}`);
    assert.deepEqual(items, [{ id: v2Made.uid, name: "pusher", capabilities: ["repo.create"] }]);

    const refused = await expectError(
      await send("POST", `/iam/v1/roles/${org}`, { name: "bad", capabilities: ["repo.list", "repo.fly"] }),
      { status: 400, code: 3, field: "role.capabilities" },
    );
    assert.match(refused.message, /repo\.fly/);

    const builtIn = await ok<{ items: Body[] }>("GET", "/iam/v1/roles?parent=/");
    assert.ok(builtIn.items.some((r) => r.id === VIEWER && r.capabilities.includes("repo.list")));
    assert.ok(
      builtIn.items.every((r) => /^[0-9a-f]{40}$/.test(r.id)),
      "only root-level roles",
    );
    const custom = await ok<{ items: Body[] }>("GET", `/iam/v1/roles?parent=${org}`);
    assert.deepEqual(custom.items.map((r) => r.id).sort(), [v1Made.id, v2Made.uid].sort());
    const viewer = await ok<{ items: Body[] }>("GET", `/iam/v1/roles?id=${VIEWER}&parent=/`);
    assert.equal(viewer.items[0]?.name, "viewer");

    const put = await ok<Body>("PUT", `/iam/v1/roles/${v1Made.id}`, {
      name: "puller",
      capabilities: ["tag.list"],
    });
    assert.deepEqual(put, { id: v1Made.id, name: "puller", capabilities: ["tag.list"] }, "description reset");
    assert.deepEqual((await ok<Body>("GET", `/iam/v2/roles/${v1Made.id}`)).capabilities, ["CAP_TAG_LIST"]);
    assert.deepEqual(await ok("DELETE", `/iam/v1/roles/${v1Made.id}`), {});
    await expectError(await send("GET", `/iam/v2/roles/${v1Made.id}`), { status: 404, code: 5 });
  });

  it("role bindings: parity both ways with the hydrated list item, batch (atomic, ≤ 25), PUT, DELETE", async () => {
    const bot = await ok<Body>("POST", `/iam/v1/identities/${org}`, {
      name: "binder",
      claimMatch: { issuer: "https://ci.example.com", subject: "binder" },
    });
    const team = (await ok<Body>("POST", `/iam/v1/groups/${org}`, { name: "binders" })).id;

    const v1Made = await ok<Body>("POST", `/iam/v1/rolebindings/${team}`, {
      identity: bot.id,
      role: VIEWER,
      group: "ignored",
    });
    assert.deepEqual(Object.keys(v1Made).sort(), ["group", "id", "identity", "role"]);
    assert.equal(v1Made.group, team, "the group is the parent of the id");
    const asV2 = await ok<Body>("GET", `/iam/v2/roleBindings/${v1Made.id}`);
    assert.deepEqual(
      { uid: asV2.uid, identityUid: asV2.identityUid, roleUid: asV2.roleUid },
      { uid: v1Made.id, identityUid: bot.id, roleUid: VIEWER },
    );

    const person1 = await registeredPerson(wharf, "pat", { email: "pat@example.net" });
    const v2Made = await ok<V2Binding>("POST", `/iam/v2/roleBindings/${team}`, {
      identityUid: person1.uid,
      roleUid: PULL,
    });
    const { items } = await ok<{ items: BindingItem[] }>("GET", `/iam/v1/rolebindings?id=${v2Made.uid}`);
    assert.equal(items.length, 1);
    const item = items[0] as BindingItem;
    assert.deepEqual(
      { ...item, role: { ...item.role, capabilities: undefined } },
      {
        id: v2Made.uid,
        group: { id: team, name: "binders", status: "ORG_STATUS_READY" },
        identity: person1.uid,
        role: {
          id: PULL,
          name: "registry.pull",
          description: v2Made.role.description,
          capabilities: undefined,
        },
        email: "pat@example.net",
        claimMatchIssuer: "https://idp.example.com",
        claimMatchSubject: "pat",
        createdAt: v2Made.createTime,
      },
    );
    assert.ok(item.role.capabilities.includes("repo.blobs.get"), "the role comes whole, by friendly names");

    const batch = await ok<{ items: Body[] }>("POST", `/iam/v1/rolebindings/batch/${team}`, [
      { identity: bot.id, role: PULL },
      { identity: person1.uid, role: VIEWER },
    ]);
    assert.deepEqual(
      batch.items.map((b) => [b.identity, b.role, b.group]),
      [
        [bot.id, PULL, team],
        [person1.uid, VIEWER, team],
      ],
    );
    const lateBinder = await ok<Body>("POST", `/iam/v1/identities/${org}`, {
      name: "late-binder",
      claimMatch: { issuer: "https://ci.example.com", subject: "late-binder" },
    });
    const before =
      (await ok<{ items?: Body[] }>("GET", `/iam/v1/rolebindings?uidp.children_of=${team}`)).items ?? [];
    await expectError(
      await send("POST", `/iam/v1/rolebindings/batch/${team}`, [
        { identity: lateBinder.id, role: VIEWER },
        { identity: `${org}/0123456789abcdef`, role: VIEWER },
      ]),
      { status: 404, code: 5 },
    );
    const tooMany = Array.from({ length: 26 }, () => ({ identity: bot.id, role: VIEWER }));
    await expectError(await send("POST", `/iam/v1/rolebindings/batch/${team}`, tooMany), {
      status: 400,
      code: 3,
      field: "requests",
    });
    const afterRefusals =
      (await ok<{ items?: Body[] }>("GET", `/iam/v1/rolebindings?uidp.children_of=${team}`)).items ?? [];
    assert.equal(afterRefusals.length, before.length, "a refused batch creates nothing");

    const put = await ok<Body>("PUT", `/iam/v1/rolebindings/${v1Made.id}`, {
      identity: lateBinder.id,
      role: PULL,
    });
    assert.deepEqual([put.identity, put.role], [lateBinder.id, PULL]);
    const replaced = await ok<Body>("GET", `/iam/v2/roleBindings/${v1Made.id}`);
    assert.deepEqual([replaced.identityUid, replaced.roleUid], [lateBinder.id, PULL]);
    await expectError(await send("PUT", `/iam/v1/rolebindings/${v1Made.id}`, { role: VIEWER }), {
      status: 400,
      code: 3,
      field: "identity_uid",
    });
    assert.deepEqual(await ok("DELETE", `/iam/v1/rolebindings/${v1Made.id}`), {});
    assert.deepEqual(await ok("DELETE", `/iam/v1/rolebindings/${v1Made.id}`), {}, "idempotent");
    await expectError(await send("GET", `/iam/v2/roleBindings/${v1Made.id}`), { status: 404, code: 5 });
  });

  it("terms: v1 accepts are v2 acceptances, listed unpaged as {docId, acceptedBy, acceptedAt}", async () => {
    const accepted = await ok<Body>("POST", `/iam/v1/terms/${org}`, { documentIds: ["sfdpa.v1"] });
    assert.deepEqual(accepted, { group: org, documentIds: ["sfdpa.v1"] });
    await ok("POST", `/iam/v2/terms/${org}`, { documentIds: ["guardener-tos.v1"] });
    const v2 = await ok<{ termsAcceptances: Body[] }>("GET", `/iam/v2/terms/${org}`);
    const v1 = await ok<{ items: Body[] }>("GET", `/iam/v1/terms/${org}`);
    const byDoc = (rows: Body[]) => [...rows].sort((a, b) => String(a.docId).localeCompare(String(b.docId)));
    assert.deepEqual(
      byDoc(v1.items),
      byDoc(v2.termsAcceptances).map((t) => ({
        docId: t.docId,
        acceptedBy: t.acceptedBy,
        acceptedAt: t.createTime,
      })),
    );
    assert.deepEqual(
      byDoc(v1.items).map((t) => t.docId),
      ["guardener-tos.v1", "sfdpa.v1"],
    );
    await expectError(await send("POST", `/iam/v1/terms/${org}`, { documentIds: ["nope.v9"] }), {
      status: 400,
      code: 3,
    });
  });

  it("a change made through v1 emits the same CloudEvents as the same change through v2", async () => {
    // Groups: create, replace, delete.
    const g1 = (await ok<Body>("POST", `/iam/v1/groups/${org}`, { name: unique("ev") })).id;
    await ok("PUT", `/iam/v1/groups/${g1}`, { name: unique("ev") });
    await ok("DELETE", `/iam/v1/groups/${g1}`);
    const g2 = (await ok<Body>("POST", `/iam/v2/groups/${org}`, { name: unique("ev") })).uid;
    await ok("PATCH", `/iam/v2/groups/${g2}`, { name: unique("ev") });
    await ok("DELETE", `/iam/v2/groups/${g2}`);
    const groupTypes = await eventTypes(g1, 3);
    assert.deepEqual(groupTypes, await eventTypes(g2, 3));
    assert.deepEqual(groupTypes, [
      "dev.wharf.api.iam.group.created.v1",
      "dev.wharf.api.iam.group.deleted.v1",
      "dev.wharf.api.iam.group.updated.v1",
    ]);

    // Identities, roles and role bindings: create and replace.
    const claim = (s: string) => ({ issuer: "https://ci.example.com", subject: s });
    const i1 = (
      await ok<Body>("POST", `/iam/v1/identities/${org}`, { name: unique("i"), claimMatch: claim("a") })
    ).id;
    await ok("PUT", `/iam/v1/identities/${i1}`, { name: unique("i"), claimMatch: claim("b") });
    const i2 = (
      await ok<Body>("POST", `/iam/v2/identities/${org}`, { name: unique("i"), claimMatch: claim("c") })
    ).uid;
    await ok("PATCH", `/iam/v2/identities/${i2}`, { description: "x" });
    assert.deepEqual(await eventTypes(i1, 2), await eventTypes(i2, 2));

    const r1 = (
      await ok<Body>("POST", `/iam/v1/roles/${org}`, { name: unique("r"), capabilities: ["repo.list"] })
    ).id;
    await ok("PUT", `/iam/v1/roles/${r1}`, { name: unique("r"), capabilities: ["tag.list"] });
    const r2 = (
      await ok<Body>("POST", `/iam/v2/roles/${org}`, { name: unique("r"), capabilities: ["CAP_REPO_LIST"] })
    ).uid;
    await ok("PATCH", `/iam/v2/roles/${r2}`, { description: "x" });
    assert.deepEqual(await eventTypes(r1, 2), await eventTypes(r2, 2));

    const b1 = (await ok<Body>("POST", `/iam/v1/rolebindings/${org}`, { identity: i1, role: VIEWER })).id;
    await ok("DELETE", `/iam/v1/rolebindings/${b1}`);
    const b2 = (await ok<Body>("POST", `/iam/v2/roleBindings/${org}`, { identityUid: i2, roleUid: VIEWER }))
      .uid;
    await ok("DELETE", `/iam/v2/roleBindings/${b2}`);
    const bindingTypes = await eventTypes(b1, 2);
    assert.deepEqual(bindingTypes, await eventTypes(b2, 2));
    assert.equal(bindingTypes.length, 2);

    await ok("POST", `/iam/v1/terms/${org}`, { documentIds: ["skills-tos.v1"] });
    const termsTypes = (
      await receiver.waitFor(
        (all) => all.some((d) => String(d.headers["ce-type"]).includes("terms")),
        DELIVERY_WAIT_MS,
      )
    )
      .filter((d) => String(d.headers["ce-type"]).includes("terms"))
      .map((d) => d.headers["ce-type"]);
    assert.ok(termsTypes.includes("dev.wharf.api.iam.terms.accepted.v1"), String(termsTypes));
  });

  it("another organization's owner can neither read nor write this one through v1", async () => {
    const other = await registeredPerson(wharf, "olga", { email: "olga@globex.example" });
    const globex = (await ok<Body>("POST", "/iam/v1/groups", { name: "globex" }, other.token)).id;
    assert.match(globex, /^[0-9a-f]{40}$/, "any authenticated person may create an organization");
    const own = await ok<{ items: Body[] }>("GET", `/iam/v1/groups?id=${globex}`, undefined, other.token);
    assert.equal(own.items[0]?.name, "globex", "and reads it back");

    const denied = { status: 403, code: 7 };
    const invisible = async (path: string) =>
      assert.deepEqual(
        await ok<Body>("GET", `/iam/v1/${path}`, undefined, other.token),
        {},
        `${path}: another organization's resource is no items, as a missing one`,
      );
    await invisible(`groups?id=${org}`);
    const bot = await ok<Body>("POST", `/iam/v1/identities/${org}`, {
      name: "guarded",
      claimMatch: { issuer: "https://ci.example.com", subject: "guarded" },
    });
    const role = await ok<Body>("POST", `/iam/v1/roles/${org}`, {
      name: "guarded",
      capabilities: ["repo.list"],
    });
    const binding = await ok<Body>("POST", `/iam/v1/rolebindings/${org}`, {
      identity: bot.id,
      role: role.id,
    });
    for (const path of [`identities?id=${bot.id}`, `roles?id=${role.id}`, `rolebindings?id=${binding.id}`]) {
      await invisible(path);
    }
    await expectError(
      await send("PUT", `/iam/v1/roles/${role.id}`, { name: "x", capabilities: ["repo.list"] }, other.token),
      denied,
    );
    await expectError(
      await send("DELETE", `/iam/v1/rolebindings/${binding.id}`, undefined, other.token),
      denied,
    );
    await expectError(await send("DELETE", `/iam/v1/identities/${bot.id}`, undefined, other.token), denied);
    await expectError(await send("PUT", `/iam/v1/groups/${org}`, { name: "pwned" }, other.token), denied);
    await expectError(await send("DELETE", `/iam/v1/groups/${org}`, undefined, other.token), denied);
    await expectError(await send("POST", `/iam/v1/groups/${org}`, { name: "implant" }, other.token), denied);
    await expectError(
      await send(
        "POST",
        `/iam/v1/identities/${org}`,
        { name: "implant", claimMatch: { issuer: "https://x.example.com", subject: "x" } },
        other.token,
      ),
      denied,
    );
    await expectError(
      await send("POST", `/iam/v1/rolebindings/${org}`, { identity: other.uid, role: VIEWER }, other.token),
      denied,
    );
    await expectError(
      await send("POST", `/iam/v1/roles/${org}`, { name: "x", capabilities: ["repo.list"] }, other.token),
      denied,
    );
    await expectError(await send("GET", `/iam/v1/terms/${org}`, undefined, other.token), denied);
    const filtered = await ok<Body>("GET", `/iam/v1/groups?uidp.ids=${org}`, undefined, other.token);
    assert.deepEqual(filtered, {}, "an unscoped list leaves other organizations out");
    const identities = await ok<Body>(
      "GET",
      `/iam/v1/identities?uidp.children_of=${org}`,
      undefined,
      other.token,
    );
    assert.deepEqual(identities, {});
    await expectError(await wharf.api("/iam/v1/groups"), { status: 401, code: 16 });
  });

  it("gRPC (grpc-js): v1 groups, roles and role bindings, with v2's error codes", async () => {
    const made = await grpcCall(
      client,
      "/platform.iam.v1.Groups/Create",
      { input: groupsV1.CreateGroupRequestSchema, output: groupsV1.GroupSchema },
      create(groupsV1.CreateGroupRequestSchema, { parent: org, group: { name: "grpc-team" } }),
      wharf.adminToken,
    );
    assert.equal(made.error, undefined, made.error?.details);
    const id = made.response?.id ?? "";
    assert.ok(id.startsWith(`${org}/`));
    assert.equal(made.response?.status, groupsV1.OrgStatus.READY);

    const listed = await grpcCall(
      client,
      "/platform.iam.v1.Groups/List",
      { input: groupsV1.GroupFilterSchema, output: groupsV1.GroupListSchema },
      create(groupsV1.GroupFilterSchema, { id }),
      wharf.adminToken,
    );
    assert.deepEqual(
      listed.response?.items.map((g) => g.name),
      ["grpc-team"],
    );

    const role = await grpcCall(
      client,
      "/platform.iam.v1.Roles/Create",
      { input: rolesV1.CreateRoleRequestSchema, output: rolesV1.RoleSchema },
      create(rolesV1.CreateRoleRequestSchema, {
        parentId: id,
        role: { name: "reader", capabilities: ["repo.list"] },
      }),
      wharf.adminToken,
    );
    assert.deepEqual(role.response?.capabilities, ["repo.list"]);
    const unknown = await grpcCall(
      client,
      "/platform.iam.v1.Roles/Create",
      { input: rolesV1.CreateRoleRequestSchema, output: rolesV1.RoleSchema },
      create(rolesV1.CreateRoleRequestSchema, {
        parentId: id,
        role: { name: "bad", capabilities: ["repo.fly"] },
      }),
      wharf.adminToken,
    );
    assert.equal(unknown.error?.code, grpc.status.INVALID_ARGUMENT);
    assert.match(unknown.error?.details ?? "", /repo\.fly/);

    const bound = await grpcCall(
      client,
      "/platform.iam.v1.RoleBindings/Create",
      { input: bindingsV1.CreateRoleBindingRequestSchema, output: bindingsV1.RoleBindingSchema },
      create(bindingsV1.CreateRoleBindingRequestSchema, {
        parent: id,
        roleBinding: {
          identity: (await registeredPerson(wharf, "gia", { email: "gia@example.net" })).uid,
          role: role.response?.id ?? "",
        },
      }),
      wharf.adminToken,
    );
    assert.equal(bound.error, undefined, bound.error?.details);
    const bindings = await grpcCall(
      client,
      "/platform.iam.v1.RoleBindings/List",
      { input: bindingsV1.RoleBindingFilterSchema, output: bindingsV1.RoleBindingListSchema },
      create(bindingsV1.RoleBindingFilterSchema, { uidp: { childrenOf: id } }),
      wharf.adminToken,
    );
    assert.deepEqual(
      bindings.response?.items.map((b) => [b.id, b.role?.name, b.role?.capabilities, b.group?.id, b.email]),
      [[bound.response?.id, "reader", ["repo.list"], id, "gia@example.net"]],
    );

    const anonymous = await grpcCall(
      client,
      "/platform.iam.v1.Groups/List",
      { input: groupsV1.GroupFilterSchema, output: groupsV1.GroupListSchema },
      create(groupsV1.GroupFilterSchema, {}),
    );
    assert.equal(anonymous.error?.code, grpc.status.UNAUTHENTICATED);
  });
});
