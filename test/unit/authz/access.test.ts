import assert from "node:assert/strict";
import { before, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { createAccessResolver } from "../../../src/authz/access.js";
import { ADMIN_IDENTITY_UID } from "../../../src/authz/admin-identity.js";
import { BUILT_IN_ROLE_UIDS, seedBuiltInRoles } from "../../../src/authz/built-in-roles.js";
import type { Principal } from "../../../src/core/context.js";
import { DomainError } from "../../../src/core/errors.js";
import { newChildUid, newRootUid } from "../../../src/core/uidp.js";
import { Capability as C } from "../../../src/gen/platform/capabilities/capabilities_pb.js";
import type { Store } from "../../../src/storage/store.js";
import { forEachEngine } from "../../support/databases.js";

const T0 = Date.parse("2026-01-28T12:00:00.000Z");

function steppingClock() {
  let t = T0;
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

function principal(identityUid: string, claims: Record<string, unknown> = {}): Principal {
  return {
    identityUid,
    isAdmin: identityUid === ADMIN_IDENTITY_UID,
    claims: { sub: identityUid, ...claims },
  };
}

// orgA ─┬─ teamA1 ── deep
//       └─ teamA2
// orgB
const orgA = newRootUid();
const teamA1 = newChildUid(orgA);
const teamA2 = newChildUid(orgA);
const deep = newChildUid(teamA1);
const orgB = newRootUid();

forEachEngine("access", (db) => {
  let store: Store;
  let repoCreatorRole: string;

  async function bind(identityUid: string, groupUid: string, roleUid: string): Promise<string> {
    const uid = newChildUid(groupUid);
    await store.roleBindings.insert({ uid, groupUid, identityUid, roleUid, createTime: T0, updateTime: T0 });
    return uid;
  }

  before(async () => {
    store = await db.openFresh();
    await seedBuiltInRoles(store, T0);
    repoCreatorRole = newChildUid(orgA);
    await store.roles.insert({
      uid: repoCreatorRole,
      name: "repo-creator",
      description: "",
      capabilities: [C.CAP_REPO_CREATE],
      builtIn: false,
      createTime: T0,
      updateTime: T0,
    });
  });

  it("a binding at an org grants on the org and its descendants, not elsewhere", async () => {
    const alice = newRootUid();
    await bind(alice, orgA, BUILT_IN_ROLE_UIDS.viewer);
    const access = createAccessResolver({ store, clock: steppingClock() }).accessFor(principal(alice));
    for (const scope of [orgA, teamA1, teamA2, deep]) {
      assert.equal(await access.has(scope, [C.CAP_REPO_LIST, C.CAP_TAG_LIST]), true, scope);
    }
    assert.equal(await access.has(orgB, [C.CAP_REPO_LIST]), false);
    assert.equal(await access.has(orgA, [C.CAP_REPO_CREATE]), false, "viewer cannot create");
    assert.equal(await access.has(orgA, [C.CAP_REPO_LIST, C.CAP_REPO_CREATE]), false, "needs all caps");
  });

  it("a binding at a subgroup covers its subtree but not its parent or siblings", async () => {
    const bob = newRootUid();
    await bind(bob, teamA1, BUILT_IN_ROLE_UIDS.viewer);
    const access = createAccessResolver({ store, clock: steppingClock() }).accessFor(principal(bob));
    assert.equal(await access.has(teamA1, [C.CAP_REPO_LIST]), true);
    assert.equal(await access.has(deep, [C.CAP_REPO_LIST]), true);
    assert.equal(await access.has(teamA2, [C.CAP_REPO_LIST]), false);
    assert.equal(await access.has(orgA, [C.CAP_REPO_LIST]), false);
    await assert.rejects(access.require(teamA2, [C.CAP_REPO_LIST]), (err: unknown) => {
      assert.ok(err instanceof DomainError);
      assert.equal(err.code, Code.PermissionDenied);
      assert.match(err.message, /CAP_REPO_LIST/);
      return true;
    });
    await access.require(deep, [C.CAP_REPO_LIST]);
  });

  it("combines capabilities of different grants that all apply at the scope", async () => {
    const carol = newRootUid();
    await bind(carol, orgA, BUILT_IN_ROLE_UIDS["registry.pull"]);
    await bind(carol, teamA1, repoCreatorRole);
    const access = createAccessResolver({ store, clock: steppingClock() }).accessFor(principal(carol));
    const both = [C.CAP_REPO_LIST, C.CAP_REPO_CREATE];
    assert.equal(await access.has(teamA1, both), true);
    assert.equal(await access.has(deep, both), true);
    assert.equal(await access.has(orgA, both), false);
    assert.equal(await access.has(teamA2, both), false);
    assert.deepEqual(await access.scopesWith([C.CAP_REPO_LIST]), { all: false, uids: [orgA] });
    assert.deepEqual(await access.scopesWith(both), { all: false, uids: [teamA1] });
    assert.deepEqual(await access.scopesWith([C.CAP_REPO_DELETE]), { all: false, uids: [] });
  });

  it("scopesWith returns the minimal subtree roots", async () => {
    const dave = newRootUid();
    await bind(dave, teamA1, BUILT_IN_ROLE_UIDS.viewer);
    await bind(dave, orgA, BUILT_IN_ROLE_UIDS.viewer);
    await bind(dave, deep, BUILT_IN_ROLE_UIDS.editor);
    await bind(dave, orgB, BUILT_IN_ROLE_UIDS.viewer);
    const access = createAccessResolver({ store, clock: steppingClock() }).accessFor(principal(dave));
    assert.deepEqual(await access.scopesWith([C.CAP_REPO_LIST]), { all: false, uids: [orgA, orgB].sort() });
    assert.deepEqual(await access.scopesWith([C.CAP_REPO_LIST, C.CAP_REPO_CREATE]), {
      all: false,
      uids: [deep],
    });
    const nobody = createAccessResolver({ store, clock: steppingClock() }).accessFor(principal(newRootUid()));
    assert.deepEqual(await nobody.scopesWith([C.CAP_REPO_LIST]), { all: false, uids: [] });
    assert.equal(await nobody.has(orgA, [C.CAP_REPO_LIST]), false);
  });

  it("the administrator holds everything everywhere without any binding", async () => {
    const access = createAccessResolver({ store, clock: steppingClock() }).accessFor(
      principal(ADMIN_IDENTITY_UID),
    );
    assert.equal(await access.has(orgB, [C.CAP_IAM_GROUPS_DELETE, C.CAP_REPO_INTERNAL_ADMIN]), true);
    assert.equal(await access.has(newRootUid(), [C.CAP_IAM_ROLE_BINDINGS_CREATE]), true);
    assert.deepEqual(await access.scopesWith([C.CAP_REPO_LIST]), { all: true });
    assert.equal((await store.roleBindings.grantsOf(ADMIN_IDENTITY_UID)).length, 0);
  });

  it("anonymous callers hold nothing", async () => {
    const access = createAccessResolver({ store, clock: steppingClock() }).accessFor(undefined);
    assert.equal(await access.has(orgA, [C.CAP_REPO_LIST]), false);
    assert.deepEqual(await access.scopesWith([C.CAP_REPO_LIST]), { all: false, uids: [] });
    await assert.rejects(access.require(orgA, [C.CAP_REPO_LIST]), { code: Code.PermissionDenied });
  });

  it("token scope and cap restrictions only narrow what bindings give", async () => {
    const erin = newRootUid();
    await bind(erin, orgA, BUILT_IN_ROLE_UIDS.viewer);
    const resolver = createAccessResolver({ store, clock: steppingClock() });

    const scoped = resolver.accessFor(principal(erin, { scope: [teamA1, orgB] }));
    assert.equal(await scoped.has(deep, [C.CAP_REPO_LIST]), true);
    assert.equal(await scoped.has(orgA, [C.CAP_REPO_LIST]), false);
    assert.equal(await scoped.has(teamA2, [C.CAP_REPO_LIST]), false);
    assert.equal(await scoped.has(orgB, [C.CAP_REPO_LIST]), false, "scope does not grant");
    assert.deepEqual(await scoped.scopesWith([C.CAP_REPO_LIST]), { all: false, uids: [teamA1] });

    const capped = resolver.accessFor(principal(erin, { cap: ["repo.list"] }));
    assert.equal(await capped.has(orgA, [C.CAP_REPO_LIST]), true);
    assert.equal(await capped.has(orgA, [C.CAP_TAG_LIST]), false, "viewer has tag.list, the token does not");
    assert.deepEqual(await capped.scopesWith([C.CAP_TAG_LIST]), { all: false, uids: [] });

    const unreadable = resolver.accessFor(principal(erin, { scope: 7 }));
    assert.equal(await unreadable.has(orgA, [C.CAP_REPO_LIST]), false);

    const admin = resolver.accessFor(principal(ADMIN_IDENTITY_UID, { scope: [teamA2], cap: ["repo.list"] }));
    assert.equal(await admin.has(teamA2, [C.CAP_REPO_LIST]), true);
    assert.equal(await admin.has(teamA1, [C.CAP_REPO_LIST]), false);
    assert.equal(await admin.has(teamA2, [C.CAP_REPO_DELETE]), false);
    assert.deepEqual(await admin.scopesWith([C.CAP_REPO_LIST]), { all: false, uids: [teamA2] });
  });

  it("a deleted binding stops working once the cache ttl has passed, or at once after invalidate", async () => {
    const frank = newRootUid();
    const binding = await bind(frank, orgA, BUILT_IN_ROLE_UIDS.viewer);
    const clock = steppingClock();
    const resolver = createAccessResolver({ store, clock, ttlMs: 1000 });
    const access = resolver.accessFor(principal(frank));
    assert.equal(await access.has(orgA, [C.CAP_REPO_LIST]), true);

    // Deleted by "another process": this one still serves its cached grants within the ttl…
    assert.equal(await store.roleBindings.delete(binding), true);
    clock.advance(999);
    assert.equal(await access.has(orgA, [C.CAP_REPO_LIST]), true);
    // …and re-reads them once it has passed.
    clock.advance(2);
    assert.equal(await access.has(orgA, [C.CAP_REPO_LIST]), false);
    assert.equal(await resolver.accessFor(principal(frank)).has(orgA, [C.CAP_REPO_LIST]), false);

    // A binding written by this process counts immediately after invalidate.
    await bind(frank, orgA, BUILT_IN_ROLE_UIDS.viewer);
    assert.equal(await access.has(orgA, [C.CAP_REPO_LIST]), false, "still cached");
    resolver.invalidate(frank);
    assert.equal(await access.has(orgA, [C.CAP_REPO_LIST]), true);
  });
});
