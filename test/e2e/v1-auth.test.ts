import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { createIssuer } from "../../src/auth/issuer.js";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import { BUILT_IN_ROLE_UIDS, OWNER_ROLE_UID } from "../../src/authz/built-in-roles.js";
import { systemClock } from "../../src/core/clock.js";
import {
  Auth,
  RegistrationRequestSchema,
  RegistrationResponseSchema,
  WhoAmIRequestSchema,
  WhoAmISchema,
} from "../../src/gen/platform/auth/v1/auth_pb.js";
import {
  PingRequestSchema,
  PingResponseSchema,
  PingService,
} from "../../src/gen/platform/ping/v1/ping_pb.js";
import { expectError, expectJson } from "../support/api-assertions.js";
import { onOneEngine } from "../support/databases.js";
import { grpcCall } from "../support/grpc-call.js";
import { registeredPerson } from "../support/registered-person.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

type Json = Record<string, unknown>;
const VIEWER = BUILT_IN_ROLE_UIDS.viewer;

onOneEngine("v1 Auth (ok, register, delete) and v1 Ping", (db) => {
  let wharf: TestServer;
  let receiver: WebhookReceiver;
  let grpcClient: grpc.Client;
  let alice: { uid: string; token: string };
  let acme: string;

  const person = (who: string) => registeredPerson(wharf, who);
  const call = (method: string, path: string, token: string, body?: unknown) =>
    wharf.api(path, { method, token, ...(body === undefined ? {} : { body }) });
  /** A v1 invite code to the viewer role at acme. */
  const inviteCode = async () =>
    String(
      (
        await expectJson<Json>(
          await call("POST", `/iam/v1/group_invites/${acme}`, alice.token, { ttl: "600s", role: VIEWER }),
        )
      ).code,
    );

  before(async () => {
    const databaseUrl = db.engine === "postgres" ? (await db.freshOptions()).databaseUrl : undefined;
    wharf = await startTestServer({
      ...(databaseUrl ? { databaseUrl } : {}),
      config: { eventsAllowLoopback: "true" },
      events: { backoffBaseMs: 40, backoffMaxMs: 200, pollMs: 50 },
    });
    receiver = await startWebhookReceiver();
    grpcClient = new grpc.Client(new URL(wharf.apiUrl).host, grpc.credentials.createInsecure());
    alice = await person("alice");
    acme = await wharf.create("/iam/v2/groups", { name: "acme" }, alice.token);
    await wharf.create(`/events/v2/subscriptions/${acme}`, { sink: receiver.url() }, alice.token);
  });
  after(async () => {
    grpcClient.close();
    await wharf.close();
    await receiver.close();
  });

  it("GET /auth/v1/ok answers the WhoAmI of the reference, and Wharf's earlier fields beside it", async () => {
    const me = await expectJson<Json>(await call("GET", "/auth/v1/ok", alice.token));
    assert.equal(me.issuer, wharf.apiUrl, "iss");
    assert.equal(me.subject, alice.uid, "sub");
    assert.deepEqual(me.audience, [wharf.apiUrl], "aud");
    assert.equal(Date.parse(String(me.expiry)) - Date.parse(String(me.issuedAt)), 3_600_000, "exp − iat");
    assert.equal(me.email, "alice@example.com");
    assert.deepEqual(me.profile, { name: "alice" });
    const grants = me.capabilities as {
      group: Json;
      role: Json & { capabilities: string[] };
      capabilities: string[];
    }[];
    assert.equal(grants.length, 1, "one binding");
    const [grant] = grants as [(typeof grants)[number]];
    assert.deepEqual([grant.group.id, grant.group.name], [acme, "acme"], "a v1 Group");
    assert.deepEqual([grant.role.id, grant.role.name], [OWNER_ROLE_UID, "owner"], "a v1 Role");
    assert.ok(grant.role.capabilities.includes("groups.create"), "the role's capabilities, friendly names");
    assert.deepEqual(grant.capabilities, grant.role.capabilities, "an unrestricted token gets them all");
    assert.deepEqual(
      me.identity,
      { uid: alice.uid, name: "alice", email: "alice@example.com" },
      "earlier shape",
    );
    assert.deepEqual(
      (me.groups as Json[]).map((g) => [g.uid, g.name, (g.role as Json).name]),
      [[acme, "acme", "owner"]],
      "earlier shape: groups",
    );
    assert.equal(me.admin, undefined, "not the administrator");

    const narrowed = await createIssuer({
      store: wharf.store,
      issuerUrl: wharf.apiUrl,
      clock: systemClock,
    }).mint({
      subject: alice.uid,
      audience: wharf.apiUrl,
      ttlSeconds: 600,
      extraClaims: { cap: ["repo.list"] },
    });
    const restricted = await expectJson<{ capabilities: { capabilities: string[] }[] }>(
      await call("GET", "/auth/v1/ok", narrowed),
    );
    assert.deepEqual(restricted.capabilities[0]?.capabilities, ["repo.list"], "the token's `cap` narrows");
    await expectError(await call("GET", "/auth/v1/ok", ""), { status: 401, code: 16 });
  });

  it("serves Validate over gRPC, refusing callers without a token", async () => {
    const schemas = { input: WhoAmIRequestSchema, output: WhoAmISchema };
    const path = `/${Auth.typeName}/Validate`;
    const { response, error } = await grpcCall(
      grpcClient,
      path,
      schemas,
      create(WhoAmIRequestSchema),
      alice.token,
    );
    assert.equal(error, undefined);
    assert.equal(response?.subject, alice.uid);
    assert.deepEqual(
      response?.capabilities.map((c) => c.group?.id),
      [acme],
    );
    const anonymous = await grpcCall(grpcClient, path, schemas, create(WhoAmIRequestSchema));
    assert.equal(anonymous.error?.code, grpc.status.UNAUTHENTICATED);
  });

  it("POST /auth/v1/register redeems a v1 invite for the caller only, and records the registration event", async () => {
    const carol = await person("carol");
    const dave = await person("dave");
    const code = await inviteCode();
    await expectError(await call("POST", "/auth/v1/register", carol.token, { code, identityId: dave.uid }), {
      status: 403,
      code: 7,
    });
    await expectError(await call("POST", "/auth/v1/register", carol.token, {}), {
      status: 400,
      code: 3,
      field: "code",
    });
    const res = await expectJson<Json>(
      await call("POST", "/auth/v1/register", carol.token, { code, identityId: carol.uid }),
    );
    assert.deepEqual([res.identity, res.group], [carol.uid, acme], "{identity, group}");
    assert.match(String(res.roleBinding), new RegExp(`^${acme}/[0-9a-f]{16}$`), "and the binding");
    const event = (
      await receiver.waitFor((all) => all.some((d) => d.headers["ce-subject"] === carol.uid))
    ).find((d) => d.headers["ce-subject"] === carol.uid);
    assert.equal(event?.headers["ce-type"], "dev.wharf.api.auth.registered.v1", "the registration event");
    assert.equal(event?.body.includes(code), false, "without the code");

    const schemas = { input: RegistrationRequestSchema, output: RegistrationResponseSchema };
    const overGrpc = await grpcCall(
      grpcClient,
      `/${Auth.typeName}/Register`,
      schemas,
      create(RegistrationRequestSchema, { code: await inviteCode() }),
      dave.token,
    );
    assert.equal(overGrpc.error, undefined, String(overGrpc.error?.details));
    assert.deepEqual([overGrpc.response?.identity, overGrpc.response?.group], [dave.uid, acme], "over gRPC");
    const daves = await expectJson<{ roleBindings: Json[] }>(
      await call("GET", `/iam/v2/roleBindings?group=${acme}&identity=${dave.uid}`, alice.token),
    );
    assert.ok(
      daves.roleBindings.some((b) => b.identityUid === dave.uid && b.roleUid === VIEWER),
      "bound",
    );
  });

  it("DELETE /auth/v1/delete/{id} deletes only the caller's own root identity, once it has no bindings", async () => {
    const erin = await person("erin");
    const frank = await person("frank");
    const denied = { status: 403, code: 7 };
    await expectError(await call("DELETE", `/auth/v1/delete/${frank.uid}`, erin.token), denied);
    const bot = await wharf.create(
      `/iam/v2/identities/${acme}`,
      { name: "ci-bot", claimMatch: { issuer: "https://ci.example.com", subject: "bot" } },
      alice.token,
    );
    await expectError(await call("DELETE", `/auth/v1/delete/${bot}`, await wharf.tokenFor(bot)), denied);
    await expectError(
      await call("DELETE", `/auth/v1/delete/${ADMIN_IDENTITY_UID}`, wharf.adminToken),
      denied,
    );

    // Bound somewhere: v2's rule (delete the bindings first) applies.
    await expectJson(await call("POST", "/auth/v1/register", frank.token, { code: await inviteCode() }));
    await expectError(await call("DELETE", `/auth/v1/delete/${frank.uid}`, frank.token), {
      status: 400,
      code: 9,
    });

    assert.deepEqual(await expectJson(await call("DELETE", `/auth/v1/delete/${erin.uid}`, erin.token)), {});
    assert.equal(await wharf.store.identities.get(erin.uid), undefined, "gone");
    await expectError(await call("GET", `/iam/v2/identities/${erin.uid}`, wharf.adminToken), {
      status: 404,
      code: 5,
    });
    await expectError(await call("DELETE", `/auth/v1/delete/${frank.uid}`, ""), { status: 401, code: 16 });
  });

  it("GET /ping/v1/ping answers as v2 does, without a token, over REST and gRPC", async () => {
    const v1 = await expectJson(await fetch(`${wharf.apiUrl}/ping/v1/ping`));
    assert.deepEqual(v1, await expectJson(await fetch(`${wharf.apiUrl}/ping/v2/ping`)));
    assert.deepEqual(v1, { response: "pong" });
    const { response } = await grpcCall(
      grpcClient,
      `/${PingService.typeName}/Ping`,
      { input: PingRequestSchema, output: PingResponseSchema },
      create(PingRequestSchema),
    );
    assert.equal(response?.response, "pong");
  });
});
