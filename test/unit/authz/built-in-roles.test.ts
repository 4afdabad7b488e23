import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import { ADMIN_IDENTITY_UID, ensureAdminIdentity } from "../../../src/authz/admin-identity.js";
import {
  BUILT_IN_ROLE_UIDS,
  BUILT_IN_ROLES,
  OWNER_ROLE_UID,
  seedBuiltInRoles,
} from "../../../src/authz/built-in-roles.js";
import { ALL_CAPABILITIES, isInternalOnly, shortNameOf } from "../../../src/authz/capabilities.js";
import { Capability as C } from "../../../src/gen/platform/capabilities/capabilities_pb.js";
import type { Store } from "../../../src/storage/store.js";
import { forEachEngine } from "../../support/databases.js";

const sha1 = (s: string) => createHash("sha1").update(s).digest("hex");
const T0 = Date.parse("2026-01-28T12:00:00.000Z");

function roleNamed(name: string) {
  const role = BUILT_IN_ROLES.find((r) => r.name === name);
  assert.ok(role, `built-in role ${name}`);
  return role;
}

function caps(name: string): Set<number> {
  return new Set(roleNamed(name).capabilities);
}

describe("built-in roles", () => {
  it("are the six roles with deterministic root uids and (built-in) descriptions", () => {
    assert.deepEqual(
      BUILT_IN_ROLES.map((r) => r.name),
      ["viewer", "editor", "owner", "registry.pull", "registry.push", "registry.pull_token_creator"],
    );
    for (const role of BUILT_IN_ROLES) {
      assert.equal(role.uid, sha1(`wharf:role:${role.name}`));
      assert.match(role.uid, /^[0-9a-f]{40}$/);
      assert.match(role.description, / \(built-in\)$/);
      assert.equal(BUILT_IN_ROLE_UIDS[role.name], role.uid);
      assert.deepEqual(
        [...role.capabilities],
        [...new Set(role.capabilities)].sort((a, b) => a - b),
      );
    }
    assert.equal(roleNamed("viewer").description, "Viewer Role (built-in)");
    assert.equal(OWNER_ROLE_UID, sha1("wharf:role:owner"));
    assert.equal(ADMIN_IDENTITY_UID, sha1("wharf:identity:admin"));
  });

  it("viewer holds every list capability and blob pulls, and nothing that writes", () => {
    const viewer = caps("viewer");
    for (const c of ALL_CAPABILITIES) {
      if (shortNameOf(c).endsWith(".list") && !isInternalOnly(c)) assert.ok(viewer.has(c), shortNameOf(c));
    }
    assert.ok(viewer.has(C.CAP_REPO_BLOBS_GET));
    assert.ok(viewer.has(C.CAP_TERMS_LIST));
    assert.ok(!viewer.has(C.CAP_REPO_CREATE));
    assert.ok(!viewer.has(C.CAP_EVENTS_SUBSCRIPTION_CREATE));
    assert.ok(!viewer.has(C.CAP_TERMS_ACCEPT));
  });

  it("editor is viewer plus subscription, repo, tag restore and vulnerability report writes, but no IAM writes", () => {
    const editor = caps("editor");
    for (const c of caps("viewer")) assert.ok(editor.has(c));
    for (const c of [
      C.CAP_EVENTS_SUBSCRIPTION_CREATE,
      C.CAP_EVENTS_SUBSCRIPTION_UPDATE,
      C.CAP_EVENTS_SUBSCRIPTION_DELETE,
      C.CAP_REPO_CREATE,
      C.CAP_REPO_UPDATE,
      C.CAP_REPO_DELETE,
      C.CAP_VULN_REPORT_CREATE,
      C.CAP_VULN_CREATE,
      C.CAP_TAG_UPDATE,
    ]) {
      assert.ok(editor.has(c), shortNameOf(c));
    }
    assert.equal(editor.size, caps("viewer").size + 9);
    assert.ok(!editor.has(C.CAP_IAM_ROLE_BINDINGS_CREATE));
    assert.ok(!editor.has(C.CAP_IAM_GROUPS_CREATE));
  });

  it("owner holds every capability except the internal-only ones and advisory writes", () => {
    const owner = caps("owner");
    assert.equal(owner.size, ALL_CAPABILITIES.length - 2 - 4);
    assert.ok(!owner.has(C.CAP_INTERNAL));
    assert.ok(!owner.has(C.CAP_REPO_INTERNAL_ADMIN));
    assert.ok(!owner.has(C.CAP_ADVISORIES_CREATE));
    assert.ok(!owner.has(C.CAP_ADVISORIES_APPROVE));
    assert.ok(owner.has(C.CAP_ADVISORIES_LIST));
    assert.ok(owner.has(C.CAP_IAM_ROLE_BINDINGS_CREATE));
  });

  it("registry roles follow the SDK bundles", () => {
    const pull = caps("registry.pull");
    assert.deepEqual(
      [...pull],
      [
        C.CAP_IAM_GROUPS_LIST,
        C.CAP_TENANT_RECORD_SIGNATURES_LIST,
        C.CAP_TENANT_SBOMS_LIST,
        C.CAP_TENANT_VULN_REPORTS_LIST,
        C.CAP_REPO_BLOBS_GET,
        C.CAP_REPO_LIST,
        C.CAP_MANIFEST_LIST,
        C.CAP_TAG_LIST,
        C.CAP_MANIFEST_METADATA_LIST,
        C.CAP_REFERRERS_LIST,
      ],
    );
    const push = caps("registry.push");
    for (const c of pull) assert.ok(push.has(c));
    for (const c of [C.CAP_TAG_CREATE, C.CAP_MANIFEST_DELETE, C.CAP_REPO_CREATE, C.CAP_IAM_GROUPS_CREATE]) {
      assert.ok(push.has(c), shortNameOf(c));
    }
    assert.ok(!push.has(C.CAP_IAM_GROUPS_DELETE));
    const creator = caps("registry.pull_token_creator");
    for (const c of pull) assert.ok(creator.has(c));
    assert.ok(creator.has(C.CAP_IAM_IDENTITY_CREATE));
    assert.ok(creator.has(C.CAP_IAM_ROLE_BINDINGS_CREATE));
    assert.ok(creator.has(C.CAP_IAM_ROLES_LIST));
    assert.ok(!creator.has(C.CAP_IAM_IDENTITY_LIST), "identity.list would expose every identity in scope");
  });
});

forEachEngine("seeding built-ins", (db) => {
  async function storedBuiltIns(store: Store) {
    return store.roles.getMany(BUILT_IN_ROLES.map((r) => r.uid));
  }

  it("seedBuiltInRoles stores every role, and a second run changes nothing", async () => {
    const store = await db.openFresh();
    await seedBuiltInRoles(store, T0);
    const first = await storedBuiltIns(store);
    assert.equal(first.length, BUILT_IN_ROLES.length);
    for (const role of BUILT_IN_ROLES) {
      const row = first.find((r) => r.uid === role.uid);
      assert.ok(row, role.name);
      assert.equal(row.name, role.name);
      assert.equal(row.description, role.description);
      assert.equal(row.builtIn, true);
      assert.deepEqual(row.capabilities, [...role.capabilities]);
      assert.equal(row.createTime, T0);
    }
    await seedBuiltInRoles(store, T0 + 60_000);
    const second = await storedBuiltIns(store);
    const byUid = (rows: typeof first) => [...rows].sort((a, b) => a.uid.localeCompare(b.uid));
    assert.deepEqual(byUid(second), byUid(first));
  });

  it("repairs a stale built-in role, keeping its createTime", async () => {
    const store = await db.openFresh();
    await seedBuiltInRoles(store, T0);
    const viewer = roleNamed("viewer");
    await store.roles.upsertBuiltIn({
      uid: viewer.uid,
      name: viewer.name,
      description: "old",
      capabilities: [C.CAP_REPO_LIST],
      builtIn: true,
      createTime: T0,
      updateTime: T0,
    });
    await seedBuiltInRoles(store, T0 + 5000);
    const row = await store.roles.get(viewer.uid);
    assert.equal(row?.description, viewer.description);
    assert.deepEqual(row?.capabilities, [...viewer.capabilities]);
    assert.equal(row?.createTime, T0);
    assert.equal(row?.updateTime, T0 + 5000);
  });

  it("tolerates several processes seeding at once", async () => {
    // Two handles on the suite's database (no other test of this suite uses it): two processes.
    const store = await db.open();
    const other = await db.open();
    await Promise.all([
      seedBuiltInRoles(store, T0),
      seedBuiltInRoles(other, T0),
      seedBuiltInRoles(store, T0),
    ]);
    assert.equal((await storedBuiltIns(store)).length, BUILT_IN_ROLES.length);
  });

  it("ensureAdminIdentity creates the administrator once and survives losing the race", async () => {
    const store = await db.openFresh();
    await ensureAdminIdentity(store, T0);
    const row = await store.identities.get(ADMIN_IDENTITY_UID);
    assert.equal(row?.name, "admin");
    assert.equal(row?.description, "Platform administrator (built-in)");
    assert.equal(row?.createTime, T0);
    await ensureAdminIdentity(store, T0 + 1000);
    assert.equal((await store.identities.get(ADMIN_IDENTITY_UID))?.createTime, T0);
    // Another process inserted between our read and our insert: the insert fails with ALREADY_EXISTS.
    const racing: Store = {
      ...store,
      identities: { ...store.identities, get: async () => undefined },
    };
    await ensureAdminIdentity(racing, T0 + 2000);
    assert.equal((await store.identities.get(ADMIN_IDENTITY_UID))?.createTime, T0);
  });
});
