import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { BUILT_IN_ROLES } from "../../src/authz/built-in-roles.js";
import { ErrorInfoSchema, PreconditionFailureSchema } from "../../src/gen/google/rpc/error_details_pb.js";
import { IdentitiesService } from "../../src/gen/platform/iam/v2/identities_pb.js";
import { detail, expectError, expectJson, type StatusBody } from "../support/api-assertions.js";
import { forEachEngine } from "../support/databases.js";
import {
  type ReceivedDelivery,
  startWebhookReceiver,
  type WebhookReceiver,
} from "../support/webhook-receiver.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const API = "dev.wharf.api";

interface Violation {
  type: string;
  subject: string;
  description: string;
}

/** The PreconditionFailure violations of an error body. */
function violationsOf(body: StatusBody): Violation[] {
  const failure = detail(body, "PreconditionFailure") as { violations?: Violation[] } | undefined;
  assert.ok(failure, `PreconditionFailure missing in ${JSON.stringify(body)}`);
  return failure.violations ?? [];
}

/**
 * Spec: a role binding is deleted before the identity it references. An identity delete while
 * bindings reference it is FAILED_PRECONDITION naming each binding (RESOURCE_IN_USE, subject = the
 * binding uid), deletes nothing and reports nothing; once the bindings are deleted (each its own
 * `rolebindings.deleted` event) the identity delete works. REST and gRPC, SQLite and PostgreSQL.
 */
forEachEngine("identity delete is blocked by its role bindings", (db) => {
  let wharf: TestServer;
  let receiver: WebhookReceiver;
  let org: string;
  let seen = 0;

  async function call(method: string, path: string, body?: unknown): Promise<Response> {
    return wharf.api(path, { method, token: wharf.adminToken, ...(body === undefined ? {} : { body }) });
  }
  const ok = async <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
    expectJson<T>(await call(method, path, body));

  /** The next event delivered for the organization (deliveries arrive in event order). */
  async function nextEvent(): Promise<ReceivedDelivery> {
    const all = await receiver.waitFor((a) => a.length > seen);
    return all[seen++] as ReceivedDelivery;
  }
  /** Skips the events delivered so far and those of `count` more changes known to be on their way. */
  async function skipEvents(count: number): Promise<void> {
    for (let i = 0; i < count; i++) await nextEvent();
  }
  /** A change that is one event; asserts it is the very next one (so nothing came in between). */
  async function expectNothingSince(what: string): Promise<void> {
    await ok("PATCH", `/iam/v2/groups/${org}`, { description: `marker after ${what}` });
    const event = await nextEvent();
    assert.equal(event.headers["ce-type"], `${API}.iam.group.updated.v1`, `no event from ${what}`);
  }

  async function identity(name: string): Promise<string> {
    const created = await ok<{ uid: string }>("POST", `/iam/v2/identities/${org}`, {
      name,
      claimMatch: { issuer: "https://ci.example.com", subject: name },
    });
    await skipEvents(1);
    return created.uid;
  }
  async function bind(group: string, identityUid: string, roleUid: string): Promise<string> {
    const binding = await ok<{ uid: string }>("POST", `/iam/v2/roleBindings/${group}`, {
      identityUid,
      roleUid,
    });
    await skipEvents(1);
    return binding.uid;
  }

  before(async () => {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    // The receiver listens on loopback.
    const config = { eventsAllowLoopback: "true" };
    wharf = await startTestServer(databaseUrl ? { databaseUrl, config } : { config });
    receiver = await startWebhookReceiver();
    org = await wharf.create("/iam/v2/groups", { name: "acme" });
    await ok("POST", `/events/v2/subscriptions/${org}`, { sink: receiver.url() });
    await skipEvents(1);
  });
  after(async () => {
    await wharf?.close();
    await receiver?.close();
  });

  it("REST: refused with one RESOURCE_IN_USE violation per binding; nothing deleted, no event", async () => {
    const folder = await ok<{ uid: string }>("POST", `/iam/v2/groups/${org}`, { name: "team" });
    await skipEvents(1);
    const bot = await identity("ci-bot");
    const viewer = BUILT_IN_ROLES[0]!.uid;
    const bindings = [await bind(org, bot, viewer), await bind(folder.uid, bot, viewer)].sort();

    const body = await expectError(await call("DELETE", `/iam/v2/identities/${bot}`), {
      status: 400,
      code: 9,
      reason: "FAILED_PRECONDITION",
    });
    assert.equal(
      body.message,
      `Precondition failed: identity ${bot} is still referenced by 2 role bindings; delete them first`,
    );
    const violations = violationsOf(body);
    assert.deepEqual(
      violations.map((v) => [v.type, v.subject]),
      bindings.map((uid) => ["RESOURCE_IN_USE", uid]),
    );
    assert.match(
      violations[0]?.description ?? "",
      new RegExp(`role binding ${violations[0]?.subject} grants role`),
    );

    await ok("GET", `/iam/v2/identities/${bot}`);
    for (const uid of bindings) await ok("GET", `/iam/v2/roleBindings/${uid}`);
    await expectNothingSince("the refused delete");

    // Bindings first (each its own event), then the identity.
    await ok("DELETE", `/iam/v2/roleBindings/${bindings[0]}`);
    const first = await nextEvent();
    assert.equal(first.headers["ce-type"], `${API}.iam.rolebindings.deleted.v1`);
    assert.equal(first.headers["ce-subject"], bindings[0]);
    const still = await expectError(await call("DELETE", `/iam/v2/identities/${bot}`), {
      status: 400,
      code: 9,
    });
    assert.deepEqual(
      violationsOf(still).map((v) => v.subject),
      [bindings[1]],
      "one binding left, one violation",
    );
    assert.match(still.message, /referenced by 1 role binding; delete it first$/);
    await ok("DELETE", `/iam/v2/roleBindings/${bindings[1]}`);
    assert.equal((await nextEvent()).headers["ce-type"], `${API}.iam.rolebindings.deleted.v1`);

    await ok("DELETE", `/iam/v2/identities/${bot}`);
    const deleted = await nextEvent();
    assert.equal(deleted.headers["ce-type"], `${API}.iam.identity.deleted.v1`);
    assert.equal(deleted.headers["ce-subject"], bot);
    await expectError(await call("GET", `/iam/v2/identities/${bot}`), { status: 404, code: 5 });
    await expectError(await call("DELETE", `/iam/v2/identities/${bot}`), { status: 404, code: 5 });
  });

  it("names at most 20 bindings and says how many there are", async () => {
    const bot = await identity("many-bindings");
    const groups = [org];
    for (const name of ["one", "two", "three"]) {
      groups.push((await ok<{ uid: string }>("POST", `/iam/v2/groups/${org}`, { name })).uid);
      await skipEvents(1);
    }
    const all: string[] = [];
    for (const group of groups) for (const role of BUILT_IN_ROLES) all.push(await bind(group, bot, role.uid));
    assert.equal(all.length, 24);

    const body = await expectError(await call("DELETE", `/iam/v2/identities/${bot}`), {
      status: 400,
      code: 9,
    });
    assert.match(body.message, /referenced by 24 role bindings \(the first 20 are listed\)/);
    assert.deepEqual(
      violationsOf(body).map((v) => v.subject),
      all.sort().slice(0, 20),
    );
    await ok("GET", `/iam/v2/identities/${bot}`);
    const left = await ok<{ totalCount: string }>("GET", `/iam/v2/roleBindings?identity=${bot}`);
    assert.equal(String(left.totalCount), "24", "every binding kept");
    await expectNothingSince("the refused delete of many");
  });

  it("gRPC: FAILED_PRECONDITION with ErrorInfo and the PreconditionFailure violation", async () => {
    const bot = await identity("grpc-bot");
    const binding = await bind(org, bot, BUILT_IN_ROLES[0]!.uid);
    const client = createClient(IdentitiesService, createGrpcTransport({ baseUrl: wharf.apiUrl }));
    const headers = { authorization: `Bearer ${wharf.adminToken}` };
    const err = await client.deleteIdentity({ uid: bot }, { headers }).catch((e: unknown) => e);
    assert.ok(err instanceof ConnectError, String(err));
    assert.equal(err.code, Code.FailedPrecondition);
    assert.equal(err.findDetails(ErrorInfoSchema)[0]?.reason, "FAILED_PRECONDITION");
    assert.deepEqual(
      err.findDetails(PreconditionFailureSchema)[0]?.violations.map((v) => [v.type, v.subject]),
      [["RESOURCE_IN_USE", binding]],
    );
    assert.equal((await client.getIdentity({ uid: bot }, { headers })).uid, bot, "still there");
    await expectNothingSince("the refused gRPC delete");
  });
});
