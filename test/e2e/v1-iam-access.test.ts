import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { BUILT_IN_ROLE_UIDS } from "../../src/authz/built-in-roles.js";
import { capabilityFromEnumName, shortNameOf } from "../../src/authz/capabilities.js";
import {
  GroupInviteRequestSchema,
  GroupInviteSchema,
  GroupInvites,
} from "../../src/gen/platform/iam/v1/group_invites_pb.js";
import {
  IdentityProviderFilterSchema,
  IdentityProviderListSchema,
  IdentityProviders,
} from "../../src/gen/platform/iam/v1/identity_providers_pb.js";
import { expectError, expectJson } from "../support/api-assertions.js";
import { onOneEngine } from "../support/databases.js";
import { grpcCall } from "../support/grpc-call.js";
import { registeredPerson } from "../support/registered-person.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

type Json = Record<string, unknown>;
const VIEWER = BUILT_IN_ROLE_UIDS.viewer;
const OIDC = { issuer: "https://login.example.com", clientId: "wharf", clientSecret: "s3cret" };

/** The friendly name of a capability enum name (`CAP_REPO_LIST` → `repo.list`). */
const friendly = (enumName: string) => shortNameOf(capabilityFromEnumName(enumName)!);

onOneEngine(
  "v1 IAM access resources: identity providers, account associations, invites, group mappings",
  (db) => {
    let wharf: TestServer;
    let receiver: WebhookReceiver;
    let grpcClient: grpc.Client;
    let ownerA: { uid: string; token: string };
    let ownerB: { uid: string; token: string };
    let orgA: string;
    let orgB: string;
    let counter = 0;
    const name = (prefix: string) => `${prefix}-${++counter}`;

    const person = (who: string) => registeredPerson(wharf, who);

    /** Calls the API as `token`, asserts 200 and no Deprecation/Sunset header, answers the JSON. */
    async function ok<T = Json>(method: string, path: string, token: string, body?: unknown): Promise<T> {
      const res = await wharf.api(path, { method, token, ...(body === undefined ? {} : { body }) });
      assert.equal(res.headers.get("deprecation"), null, `${method} ${path}: no Deprecation header`);
      assert.equal(res.headers.get("sunset"), null, `${method} ${path}: no Sunset header`);
      return expectJson<T>(res);
    }
    const call = (method: string, path: string, token: string, body?: unknown) =>
      wharf.api(path, { method, token, ...(body === undefined ? {} : { body }) });

    /** The CloudEvent types delivered about `subject` once `count` of them arrived, in order. */
    async function eventTypes(subject: string, count: number): Promise<string[]> {
      const about = (all: { headers: Record<string, unknown> }[]) =>
        all.filter((d) => d.headers["ce-subject"] === subject).map((d) => String(d.headers["ce-type"]));
      return about(await receiver.waitFor((all) => about(all).length >= count));
    }

    before(async () => {
      const databaseUrl = db.engine === "postgres" ? (await db.freshOptions()).databaseUrl : undefined;
      wharf = await startTestServer({
        ...(databaseUrl ? { databaseUrl } : {}),
        config: { eventsAllowLoopback: "true" },
        events: { backoffBaseMs: 40, backoffMaxMs: 200, pollMs: 50 },
      });
      receiver = await startWebhookReceiver();
      grpcClient = new grpc.Client(new URL(wharf.apiUrl).host, grpc.credentials.createInsecure());
      ownerA = await person("owner-a");
      ownerB = await person("owner-b");
      orgA = await wharf.create("/iam/v2/groups", { name: "acme" }, ownerA.token);
      orgB = await wharf.create("/iam/v2/groups", { name: "globex" }, ownerB.token);
      await wharf.create(`/events/v2/subscriptions/${orgA}`, { sink: receiver.url() }, ownerA.token);
    });
    after(async () => {
      grpcClient.close();
      await wharf.close();
      await receiver.close();
    });

    it("identity providers: v1 ↔ v2 parity, the secret never returned, id filter, missing → empty", async () => {
      const v1 = await ok<Json>("POST", `/iam/v1/identityProviders/${orgA}`, ownerA.token, {
        name: name("sso"),
        description: "made by v1",
        defaultRole: VIEWER,
        oidc: { ...OIDC, additionalScopes: ["email"], groupsClaim: "groups" },
      });
      assert.match(String(v1.id), new RegExp(`^${orgA}/[0-9a-f]{16}$`), "id, a child of the group");
      assert.equal(v1.uid, undefined, "v1 says id, not uid");
      assert.equal((v1.oidc as Json).clientSecret, undefined, "the secret is not returned on create");
      const asV2 = await ok<Json>("GET", `/iam/v2/identityProviders/${v1.id}`, ownerA.token);
      assert.deepEqual(
        [asV2.uid, asV2.name, asV2.description, asV2.defaultRole, asV2.oidc],
        [v1.id, v1.name, v1.description, v1.defaultRole, v1.oidc],
        "read back through v2, field by field",
      );

      const v2 = await ok<Json>("POST", `/iam/v2/identityProviders/${orgA}`, ownerA.token, {
        name: name("sso"),
        description: "made by v2",
        defaultRole: VIEWER,
        oidc: { ...OIDC, pkceEnabled: true, correlationRule: "CORRELATION_RULE_SUB_EQUALS_EXTERNAL_ID" },
      });
      const listed = await ok<{ items: Json[] }>(
        "GET",
        `/iam/v1/identityProviders?id=${v2.uid}`,
        ownerA.token,
      );
      assert.equal(listed.items.length, 1, "a filter on id answers exactly that provider");
      const [asV1] = listed.items as [Json];
      assert.deepEqual(
        [asV1.id, asV1.name, asV1.description, asV1.defaultRole, asV1.oidc],
        [v2.uid, v2.name, v2.description, v2.defaultRole, v2.oidc],
        "read back through v1, field by field",
      );
      assert.equal((asV1.oidc as Json).clientSecret, undefined, "never in lists");

      const all = await ok<{ items: Json[]; nextPageToken?: string }>(
        "GET",
        `/iam/v1/identityProviders?uidp.children_of=${orgA}`,
        ownerA.token,
      );
      assert.deepEqual(Object.keys(all).sort(), ["items"], "an unpaged {items} list");
      assert.deepEqual(all.items.map((p) => p.id).sort(), [v1.id, v2.uid].sort(), "uidp filter");
      const missing = await ok<Json>(
        "GET",
        `/iam/v1/identityProviders?id=${orgA}/0000000000000000`,
        ownerA.token,
      );
      assert.deepEqual(missing, {}, "a missing provider is an empty 200 (no items)");
      await expectError(await call("GET", "/iam/v1/identityProviders?id=nope", ownerA.token), {
        status: 400,
        code: 3,
        field: "id",
      });
      await expectError(
        await call("POST", `/iam/v1/identityProviders/${orgA}`, ownerA.token, {
          defaultRole: VIEWER,
          oidc: OIDC,
        }),
        { status: 400, code: 3, field: "name" },
      );
    });

    it("identity providers: PUT replaces every field, keeping the write-only secret", async () => {
      const created = await ok<Json>("POST", `/iam/v1/identityProviders/${orgA}`, ownerA.token, {
        name: name("sso"),
        description: "to be reset",
        defaultRole: VIEWER,
        oidc: { ...OIDC, additionalScopes: ["email", "profile"], groupsClaim: "groups" },
      });
      const replaced = await ok<Json>("PUT", `/iam/v1/identityProviders/${created.id}`, ownerA.token, {
        name: "renamed",
        defaultRole: VIEWER,
        oidc: { issuer: OIDC.issuer, clientId: "other-client" },
      });
      assert.deepEqual(
        replaced,
        {
          id: created.id,
          name: "renamed",
          defaultRole: VIEWER,
          oidc: { issuer: OIDC.issuer, clientId: "other-client" },
        },
        "description, scopes and groups claim omitted → reset",
      );
      const stored = await wharf.store.identityProviders.get(String(created.id));
      assert.equal(stored?.oidc.clientSecret, OIDC.clientSecret, "an omitted secret keeps the stored one");
      const viaV2 = await ok<Json>("GET", `/iam/v2/identityProviders/${created.id}`, ownerA.token);
      assert.equal(viaV2.description, undefined, "v2 sees the reset too");
      await expectError(
        await call("PUT", `/iam/v1/identityProviders/${created.id}`, ownerA.token, { name: "x", oidc: OIDC }),
        { status: 400, code: 3, field: "name" },
      );
    });

    it("account associations: keyed by group, v1 ↔ v2 parity, PUT reset, idempotent delete", async () => {
      const folder = await wharf.create(`/iam/v2/groups/${orgA}`, { name: name("f") }, ownerA.token);
      const v1 = await ok<Json>("POST", `/iam/v1/account_associations/${folder}`, ownerA.token, {
        name: "clouds",
        description: "made by v1",
        amazon: { account: "123456789012" },
        google: { projectId: "my-project-1", projectNumber: "1234" },
      });
      assert.deepEqual(
        Object.keys(v1).sort(),
        ["amazon", "description", "google", "group", "name"],
        "no timestamps",
      );
      const asV2 = await ok<Json>("GET", `/iam/v2/accountAssociations/${folder}`, ownerA.token);
      assert.deepEqual(
        [asV2.uid, asV2.name, asV2.description, asV2.amazon, asV2.google],
        [v1.group, v1.name, v1.description, v1.amazon, v1.google],
        "read back through v2",
      );

      const other = await wharf.create(`/iam/v2/groups/${orgA}`, { name: name("f") }, ownerA.token);
      const v2 = await ok<Json>("POST", `/iam/v2/accountAssociations/${other}`, ownerA.token, {
        name: "azure-only",
        azure: {
          tenantId: "12345678-1234-1234-1234-123456789012",
          clientIds: { ingester: "11111111-1111-1111-1111-111111111111" },
        },
      });
      const listed = await ok<{ items: Json[] }>(
        "GET",
        `/iam/v1/account_associations?group=${other}`,
        ownerA.token,
      );
      assert.deepEqual(
        listed.items,
        [{ group: v2.uid, name: v2.name, azure: v2.azure }],
        "read back through v1",
      );
      const byName = await ok<{ items: Json[] }>(
        "GET",
        "/iam/v1/account_associations?name=azure-only",
        ownerA.token,
      );
      assert.deepEqual(
        byName.items.map((a) => a.group),
        [other],
        "name filter",
      );
      assert.deepEqual(
        await ok("GET", `/iam/v1/account_associations?group=${orgB}`, ownerA.token),
        {},
        "a group without one (or out of reach) is an empty 200",
      );

      const replaced = await ok<Json>("PUT", `/iam/v1/account_associations/${folder}`, ownerA.token, {
        name: "clouds",
        google: { projectId: "my-project-2", projectNumber: "99" },
      });
      assert.deepEqual(
        replaced,
        { group: folder, name: "clouds", google: { projectId: "my-project-2", projectNumber: "99" } },
        "description and the amazon block omitted → removed",
      );
      const afterPut = await ok<Json>("GET", `/iam/v2/accountAssociations/${folder}`, ownerA.token);
      assert.equal(afterPut.amazon, undefined, "v2 sees the block gone");

      await ok("DELETE", `/iam/v1/account_associations/${folder}`, ownerA.token);
      await ok("DELETE", `/iam/v1/account_associations/${folder}`, ownerA.token);
      await expectError(await call("GET", `/iam/v2/accountAssociations/${folder}`, ownerA.token), {
        status: 404,
        code: 5,
      });
      await expectError(
        await call("POST", `/iam/v1/account_associations/${other}`, ownerA.token, {
          amazon: { account: "1" },
        }),
        { status: 400, code: 3 },
      );
    });

    it("account associations :check: READY with the provider's block, NOT_READY without, bad type refused", async () => {
      const folder = await wharf.create(`/iam/v2/groups/${orgA}`, { name: name("f") }, ownerA.token);
      const check = (accountType: string) =>
        ok<Json>("POST", `/iam/v1/account_associations/${folder}:check`, ownerA.token, { accountType });
      assert.deepEqual(
        await check("ACCOUNT_TYPE_AMAZON"),
        {
          status: "CHECK_STATUS_NOT_READY",
          reason: "ASSOCIATION_MISSING",
          message: "the group has no account association; create one with its amazon block",
        },
        "no association",
      );
      await ok("POST", `/iam/v1/account_associations/${folder}`, ownerA.token, {
        name: "clouds",
        amazon: { account: "123456789012" },
      });
      assert.equal((await check("ACCOUNT_TYPE_AMAZON")).status, "CHECK_STATUS_READY");
      const google = await check("ACCOUNT_TYPE_GOOGLE");
      assert.deepEqual([google.status, google.reason], ["CHECK_STATUS_NOT_READY", "PROVIDER_NOT_CONFIGURED"]);
      await expectError(
        await call("POST", `/iam/v1/account_associations/${folder}:check`, ownerA.token, {}),
        { status: 400, code: 3, field: "account_type" },
      );
    });

    it("group invites: the code only on create, v1 ↔ v2 parity with timestamps, filters, unpaged list", async () => {
      const folder = await wharf.create(`/iam/v2/groups/${orgA}`, { name: name("f") }, ownerA.token);
      const v1 = await ok<Json>("POST", `/iam/v1/group_invites/${folder}`, ownerA.token, {
        ttl: "3600s",
        role: VIEWER,
        email: "carol@example.com",
        singleUse: true,
      });
      assert.match(String(v1.code), /^wharf_inv_/, "the code, on create only");
      assert.equal(
        Date.parse(String(v1.expiration)) - Date.parse(String(v1.createdAt)),
        3_600_000,
        "expiration",
      );
      const role = v1.role as { id: string; name: string; capabilities: string[] };
      assert.equal(role.id, VIEWER, "the role, as a v1 Role");
      assert.ok(role.capabilities.includes("repo.list"), "with friendly capability names");
      const asV2 = await ok<Json>("GET", `/iam/v2/groupInvites/${v1.id}`, ownerA.token);
      assert.deepEqual(
        [asV2.uid, asV2.expirationTime, asV2.createTime, asV2.keyId, asV2.email, asV2.singleUse, asV2.code],
        [v1.id, v1.expiration, v1.createdAt, v1.keyId, v1.email, v1.singleUse, undefined],
        "read back through v2, timestamps included",
      );
      const v2Role = asV2.role as { uid: string; capabilities: string[] };
      assert.deepEqual(
        [v2Role.uid, v2Role.capabilities.map(friendly)],
        [role.id, role.capabilities],
        "same role",
      );

      const v2 = await ok<Json>("POST", `/iam/v2/groupInvites/${folder}`, ownerA.token, {
        roleUid: VIEWER,
        ttl: "60s",
      });
      const byId = await ok<{ items: Json[] }>("GET", `/iam/v1/group_invites?id=${v2.uid}`, ownerA.token);
      assert.equal(byId.items.length, 1, "id filter");
      const [item] = byId.items as [Json];
      assert.deepEqual(
        [item.id, item.expiration, item.createdAt, item.keyId, (item.role as Json).id, item.code],
        [v2.uid, v2.expirationTime, v2.createTime, v2.keyId, VIEWER, undefined],
        "read back through v1, without the code",
      );
      const byKey = await ok<{ items: Json[] }>(
        "GET",
        `/iam/v1/group_invites?keyId=${v1.keyId}`,
        ownerA.token,
      );
      assert.deepEqual(
        byKey.items.map((i) => i.id),
        [v1.id],
        "keyId filter",
      );
      assert.deepEqual(
        await ok("GET", `/iam/v1/group_invites?id=${folder}/0000000000000000`, ownerA.token),
        {},
        "a missing invite is an empty 200",
      );

      // More invites than one v2 page (50 by default): the v1 list answers them all, newest first.
      for (let i = 0; i < 50; i++) {
        await ok("POST", `/iam/v1/group_invites/${folder}`, ownerA.token, { ttl: "600s", role: VIEWER });
      }
      const all = await ok<{ items: Json[] }>("GET", `/iam/v1/group_invites?group=${folder}`, ownerA.token);
      assert.equal(all.items.length, 52, "every invite of the group, unpaged");
      assert.equal(all.items.filter((i) => i.code !== undefined).length, 0, "no codes in lists");
      assert.deepEqual(
        all.items.slice(-2).map((i) => i.id),
        [v2.uid, v1.id],
        "newest first",
      );
      const v2Page = await ok<Json>("GET", `/iam/v2/groupInvites?uidp.children_of=${folder}`, ownerA.token);
      assert.ok(v2Page.nextPageToken, "v2 pages the same list");

      await ok("DELETE", `/iam/v1/group_invites/${v1.id}`, ownerA.token);
      await expectError(await call("GET", `/iam/v2/groupInvites/${v1.id}`, ownerA.token), {
        status: 404,
        code: 5,
      });
      await expectError(
        await call("POST", `/iam/v1/group_invites/${folder}`, ownerA.token, { ttl: "0s", role: VIEWER }),
        { status: 400, code: 3, field: "ttl" },
      );
    });

    it("external group role mappings: v1 ↔ v2 parity, Get, provider filter, batch delete", async () => {
      const idp = await wharf.create(
        `/iam/v2/identityProviders/${orgA}`,
        { name: name("sso"), defaultRole: VIEWER, oidc: OIDC },
        ownerA.token,
      );
      const v1 = await ok<Json>("POST", `/iam/v1/externalGroupRoleMappings/${idp}`, ownerA.token, {
        externalGroupId: "Engineering",
        roleUidp: VIEWER,
      });
      const asV2 = await ok<Json>("GET", `/iam/v2/externalGroupRoleMappings/${v1.id}`, ownerA.token);
      assert.deepEqual(
        [asV2.uid, asV2.identityProviderUid, asV2.externalGroupId, asV2.roleUid, asV2.scope, asV2.createTime],
        [v1.id, v1.identityProviderUidp, v1.externalGroupId, v1.roleUidp, v1.scope, v1.createdAt],
        "read back through v2, timestamp included",
      );
      assert.equal(v1.identityProviderUidp, idp, "under the provider");
      const v2 = await ok<Json>("POST", `/iam/v2/externalGroupRoleMappings/${idp}`, ownerA.token, {
        externalGroupId: "Ops",
        roleUid: VIEWER,
      });
      const got = await ok<Json>("GET", `/iam/v1/externalGroupRoleMappings/${v2.uid}`, ownerA.token);
      assert.deepEqual(
        got,
        {
          id: v2.uid,
          identityProviderUidp: v2.identityProviderUid,
          externalGroupId: "Ops",
          roleUidp: VIEWER,
          scope: v2.scope,
          createdAt: v2.createTime,
        },
        "read back through v1",
      );
      const listed = await ok<{ items: Json[] }>(
        "GET",
        `/iam/v1/externalGroupRoleMappings?identityProviderUidp=${idp}`,
        ownerA.token,
      );
      assert.deepEqual(listed.items.map((m) => m.id).sort(), [v1.id, v2.uid].sort(), "provider filter");
      const batch = await ok<{ parentId: string; items: Json[] }>(
        "POST",
        "/iam/v1/externalGroupRoleMappings:batchDelete",
        ownerA.token,
        { parentId: idp, ids: [v1.id, `${idp}/0000000000000000`] },
      );
      assert.deepEqual([batch.parentId, batch.items.map((m) => m.id)], [idp, [v1.id]], "gone ids skipped");
      await ok("DELETE", `/iam/v1/externalGroupRoleMappings/${v2.uid}`, ownerA.token);
      assert.deepEqual(
        await ok("GET", `/iam/v1/externalGroupRoleMappings?identityProviderUidp=${idp}`, ownerA.token),
        {},
        "both gone",
      );
      await expectError(await call("GET", `/iam/v1/externalGroupRoleMappings/${v2.uid}`, ownerA.token), {
        status: 404,
        code: 5,
      });
      await expectError(
        await call("POST", `/iam/v1/externalGroupRoleMappings/${idp}`, ownerA.token, { roleUidp: VIEWER }),
        { status: 400, code: 3, field: "external_group_id" },
      );
    });

    it("a change through v1 emits the same CloudEvents (type and subject) as through v2", async () => {
      // Identity providers: create, update, delete, once through each face.
      const idpBody = { name: name("sso"), defaultRole: VIEWER, oidc: OIDC };
      const viaV1 = String(
        (await ok<Json>("POST", `/iam/v1/identityProviders/${orgA}`, ownerA.token, idpBody)).id,
      );
      const viaV2 = await wharf.create(
        `/iam/v2/identityProviders/${orgA}`,
        { ...idpBody, name: name("sso") },
        ownerA.token,
      );
      await ok("PUT", `/iam/v1/identityProviders/${viaV1}`, ownerA.token, { ...idpBody, description: "x" });
      await ok("PATCH", `/iam/v2/identityProviders/${viaV2}`, ownerA.token, { description: "x" });

      // Mappings under each (created and batch-deleted through each face).
      const mapV1 = String(
        (
          await ok<Json>("POST", `/iam/v1/externalGroupRoleMappings/${viaV1}`, ownerA.token, {
            externalGroupId: "devs",
            roleUidp: VIEWER,
          })
        ).id,
      );
      const mapV2 = await wharf.create(
        `/iam/v2/externalGroupRoleMappings/${viaV2}`,
        { externalGroupId: "devs", roleUid: VIEWER },
        ownerA.token,
      );
      await ok("DELETE", `/iam/v1/externalGroupRoleMappings/${mapV1}`, ownerA.token);
      await ok("DELETE", `/iam/v2/externalGroupRoleMappings/${mapV2}`, ownerA.token);
      await ok("DELETE", `/iam/v1/identityProviders/${viaV1}`, ownerA.token);
      await ok("DELETE", `/iam/v2/identityProviders/${viaV2}`, ownerA.token);
      const idpTypes = await eventTypes(viaV1, 3);
      assert.deepEqual(idpTypes, [
        "dev.wharf.api.iam.identity_providers.created.v1",
        "dev.wharf.api.iam.identity_providers.updated.v1",
        "dev.wharf.api.iam.identity_providers.deleted.v1",
      ]);
      assert.deepEqual(await eventTypes(viaV2, 3), idpTypes, "identity providers: same as v2");
      const mapTypes = await eventTypes(mapV1, 2);
      assert.deepEqual(await eventTypes(mapV2, 2), mapTypes, "mappings: same as v2");
      assert.equal(mapTypes[0], "dev.wharf.api.iam.external_group_role_mappings.created.v1");

      // Invites: create and delete.
      const invV1 = String(
        (await ok<Json>("POST", `/iam/v1/group_invites/${orgA}`, ownerA.token, { ttl: "60s", role: VIEWER }))
          .id,
      );
      const invV2 = await wharf.create(
        `/iam/v2/groupInvites/${orgA}`,
        { ttl: "60s", roleUid: VIEWER },
        ownerA.token,
      );
      await ok("DELETE", `/iam/v1/group_invites/${invV1}`, ownerA.token);
      await ok("DELETE", `/iam/v2/groupInvites/${invV2}`, ownerA.token);
      const invTypes = await eventTypes(invV1, 2);
      assert.deepEqual(invTypes, [
        "dev.wharf.api.iam.group_invite.created.v1",
        "dev.wharf.api.iam.group_invite.deleted.v1",
      ]);
      assert.deepEqual(await eventTypes(invV2, 2), invTypes, "invites: same as v2");

      // Account associations: create, update, delete (subject: the group).
      const [g1, g2] = [
        await wharf.create(`/iam/v2/groups/${orgA}`, { name: name("f") }, ownerA.token),
        await wharf.create(`/iam/v2/groups/${orgA}`, { name: name("f") }, ownerA.token),
      ];
      const assoc = { name: "clouds", amazon: { account: "123456789012" } };
      await ok("POST", `/iam/v1/account_associations/${g1}`, ownerA.token, assoc);
      await ok("POST", `/iam/v2/accountAssociations/${g2}`, ownerA.token, assoc);
      await ok("PUT", `/iam/v1/account_associations/${g1}`, ownerA.token, { ...assoc, description: "x" });
      await ok("PATCH", `/iam/v2/accountAssociations/${g2}`, ownerA.token, { description: "x" });
      await ok("DELETE", `/iam/v1/account_associations/${g1}`, ownerA.token);
      await ok("DELETE", `/iam/v2/accountAssociations/${g2}`, ownerA.token);
      const assocTypes = (await eventTypes(g1, 4)).filter((t) => t.includes("account_associations"));
      assert.deepEqual(assocTypes, [
        "dev.wharf.api.iam.account_associations.created.v1",
        "dev.wharf.api.iam.account_associations.updated.v1",
        "dev.wharf.api.iam.account_associations.deleted.v1",
      ]);
      assert.deepEqual(
        (await eventTypes(g2, 4)).filter((t) => t.includes("account_associations")),
        assocTypes,
        "associations: same as v2",
      );
    });

    it("keeps another organization's owner out of A through v1", async () => {
      const idp = await wharf.create(
        `/iam/v2/identityProviders/${orgA}`,
        { name: name("sso"), defaultRole: VIEWER, oidc: OIDC },
        ownerA.token,
      );
      const invite = await wharf.create(
        `/iam/v2/groupInvites/${orgA}`,
        { roleUid: VIEWER, ttl: "60s" },
        ownerA.token,
      );
      const mapping = await wharf.create(
        `/iam/v2/externalGroupRoleMappings/${idp}`,
        { externalGroupId: "devs", roleUid: VIEWER },
        ownerA.token,
      );
      await ok("POST", `/iam/v1/account_associations/${orgA}`, ownerA.token, {
        name: "clouds",
        amazon: { account: "123456789012" },
      });
      const asB = ownerB.token;
      for (const path of [
        `/iam/v1/identityProviders?id=${idp}`,
        `/iam/v1/identityProviders?uidp.children_of=${orgA}`,
        `/iam/v1/group_invites?id=${invite}`,
        `/iam/v1/group_invites?group=${orgA}`,
        `/iam/v1/account_associations?group=${orgA}`,
        `/iam/v1/externalGroupRoleMappings?identityProviderUidp=${idp}`,
      ]) {
        assert.deepEqual(await ok("GET", path, asB), {}, `${path}: nothing of A`);
      }
      const denied = { status: 403, code: 7 };
      await expectError(await call("GET", `/iam/v1/externalGroupRoleMappings/${mapping}`, asB), denied);
      await expectError(
        await call("POST", `/iam/v1/identityProviders/${orgA}`, asB, {
          name: "evil",
          defaultRole: VIEWER,
          oidc: OIDC,
        }),
        denied,
      );
      await expectError(
        await call("PUT", `/iam/v1/identityProviders/${idp}`, asB, {
          name: "evil",
          defaultRole: VIEWER,
          oidc: OIDC,
        }),
        denied,
      );
      await expectError(await call("DELETE", `/iam/v1/identityProviders/${idp}`, asB), denied);
      await expectError(
        await call("POST", `/iam/v1/group_invites/${orgA}`, asB, { ttl: "60s", role: VIEWER }),
        denied,
      );
      await expectError(await call("DELETE", `/iam/v1/group_invites/${invite}`, asB), denied);
      await expectError(
        await call("PUT", `/iam/v1/account_associations/${orgA}`, asB, { name: "evil" }),
        denied,
      );
      await expectError(
        await call("POST", `/iam/v1/account_associations/${orgA}:check`, asB, {
          accountType: "ACCOUNT_TYPE_AMAZON",
        }),
        denied,
      );
      await expectError(await call("DELETE", `/iam/v1/account_associations/${orgA}`, asB), denied);
      await expectError(
        await call("POST", "/iam/v1/externalGroupRoleMappings:batchDelete", asB, {
          parentId: idp,
          ids: [mapping],
        }),
        denied,
      );
      // All still there.
      await ok("GET", `/iam/v2/identityProviders/${idp}`, ownerA.token);
      await ok("GET", `/iam/v2/groupInvites/${invite}`, ownerA.token);
      await ok("GET", `/iam/v2/externalGroupRoleMappings/${mapping}`, ownerA.token);
      await ok("GET", `/iam/v2/accountAssociations/${orgA}`, ownerA.token);
      await expectError(await call("GET", `/iam/v1/group_invites?group=${orgB}`, ""), {
        status: 401,
        code: 16,
      });
    });

    it("serves the v1 services over gRPC (@grpc/grpc-js)", async () => {
      const created = await grpcCall(
        grpcClient,
        `/${GroupInvites.typeName}/Create`,
        { input: GroupInvites.method.create.input, output: GroupInviteSchema },
        create(GroupInviteRequestSchema, { group: orgA, role: VIEWER, ttl: { seconds: 120n } }),
        ownerA.token,
      );
      assert.equal(created.error, undefined, String(created.error?.details));
      assert.match(created.response!.code, /^wharf_inv_/, "the code over gRPC");
      assert.equal(created.response!.role?.id, VIEWER);
      const idp = await wharf.create(
        `/iam/v2/identityProviders/${orgA}`,
        { name: name("sso"), defaultRole: VIEWER, oidc: OIDC },
        ownerA.token,
      );
      const listed = await grpcCall(
        grpcClient,
        `/${IdentityProviders.typeName}/List`,
        { input: IdentityProviderFilterSchema, output: IdentityProviderListSchema },
        create(IdentityProviderFilterSchema, { id: idp }),
        ownerA.token,
      );
      assert.deepEqual(
        listed.response?.items.map((p) => [p.id, p.defaultRole]),
        [[idp, VIEWER]],
      );
      const missing = await grpcCall(
        grpcClient,
        `/${IdentityProviders.typeName}/List`,
        { input: IdentityProviderFilterSchema, output: IdentityProviderListSchema },
        create(IdentityProviderFilterSchema, { id: `${orgA}/${randomBytes(8).toString("hex")}` }),
        ownerA.token,
      );
      assert.deepEqual(missing.response?.items, [], "missing → empty over gRPC too");
      const denied = await grpcCall(
        grpcClient,
        `/${GroupInvites.typeName}/Create`,
        { input: GroupInvites.method.create.input, output: GroupInviteSchema },
        create(GroupInviteRequestSchema, { group: orgA, role: VIEWER, ttl: { seconds: 120n } }),
        ownerB.token,
      );
      assert.equal(denied.error?.code, grpc.status.PERMISSION_DENIED, "B's owner refused over gRPC");
    });
  },
);
