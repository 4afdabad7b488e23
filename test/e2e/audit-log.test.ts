import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, it } from "node:test";
import type { Clock } from "../../src/core/clock.js";
import { expectError, expectJson } from "../support/api-assertions.js";
import { cliChecks } from "../support/cli-checks.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { forEachEngine } from "../support/databases.js";
import { personWithRole, registeredPerson } from "../support/registered-person.js";
import { buildImage, pushImage, putManifest } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

interface Rec {
  uid: string;
  time: string;
  group?: string;
  actor?: { identity?: string; act?: Record<string, string> };
  action: string;
  resource?: string;
  result: { code: string; reason?: string };
  requestId?: string;
  sourceAddress?: string;
  userAgent?: string;
}
interface Page {
  records?: Rec[];
  nextPageToken?: string;
}

/** Polls `probe` until it returns a value or 10 s pass (then fails naming `what`). */
async function eventually<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

forEachEngine("audit log", (db) => {
  let wharf: TestServer;
  let alice: { uid: string; token: string };
  let bob: { uid: string; token: string };
  let acme: string;
  let globex: string;
  let repo: string;

  const list = async (query: string, token = alice.token): Promise<Rec[]> =>
    (await expectJson<Page>(await wharf.api(`/audit/v2/records?${query}`, { token }))).records ?? [];
  const ofAcme = (extra = "") => list(`uidp.descendants_of=${acme}&page_size=500${extra}`);

  before(async () => {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    wharf = await startTestServer({
      ...(databaseUrl ? { databaseUrl } : {}),
      config: { auditPulls: "true" },
      audit: { buffer: { flushMs: 20 } },
    });
    alice = await registeredPerson(wharf, "alice");
    bob = await registeredPerson(wharf, "bob");
    acme = await wharf.create("/iam/v2/groups", { name: "acme" }, alice.token);
    globex = await wharf.create("/iam/v2/groups", { name: "globex" }, bob.token);
    repo = await wharf.create(`/registry/v2/repos/${acme}`, { name: "app" }, alice.token);
  });
  after(() => wharf.close());

  it("records a mutating call in its transaction, with who, what, where from and the request id", async () => {
    const res = await fetch(`${wharf.apiUrl}/registry/v2/repos/${acme}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${alice.token}`,
        "content-type": "application/json",
        "user-agent": "audit-test/1.0",
        "x-request-id": "audit-create-1",
      },
      body: JSON.stringify({ name: "web" }),
    });
    const created = await expectJson<{ uid: string }>(res);
    // No waiting: the record committed with the repo.
    const [record] = await ofAcme(`&resource=${encodeURIComponent(created.uid)}`);
    assert.ok(record, "the create's record");
    assert.equal(record.action, "platform.registry.v2.ReposService/CreateRepo");
    assert.equal(record.result.code, "OK");
    assert.equal(record.actor?.identity, alice.uid);
    assert.equal(record.group, acme);
    assert.equal(record.requestId, "audit-create-1");
    assert.equal(record.userAgent, "audit-test/1.0");
    assert.match(record.sourceAddress ?? "", /127\.0\.0\.1/);
    assert.match(record.uid, /^[0-9a-f]{32}$/);
  });

  it("records nothing for reads", async () => {
    const before = (await list("page_size=500", wharf.adminToken)).length;
    await expectJson(await wharf.api(`/registry/v2/repos/${repo}`, { token: alice.token }));
    await expectJson(
      await wharf.api(`/registry/v2/repos?uidp.descendants_of=${acme}`, { token: alice.token }),
    );
    assert.equal((await list("page_size=500", wharf.adminToken)).length, before);
  });

  it("records a refused call as DENIED with its reason, visible to the organization it targeted", async () => {
    await expectError(await wharf.api(`/registry/v2/repos/${repo}`, { method: "DELETE", token: bob.token }), {
      status: 403,
      code: 7,
    });
    const [denied] = await ofAcme(`&actor=${bob.uid}`);
    assert.ok(denied, "bob's refused delete is in acme's log");
    assert.equal(denied.action, "platform.registry.v2.ReposService/DeleteRepo");
    assert.deepEqual(denied.result, { code: "DENIED", reason: "PERMISSION_DENIED" });
    assert.equal(denied.resource, repo);
    // Anonymous: UNAUTHENTICATED, no actor.
    await expectError(await wharf.api(`/registry/v2/repos/${repo}`, { method: "DELETE" }), {
      status: 401,
      code: 16,
    });
    const anonymous = (await ofAcme("&result=DENIED")).find((r) => !r.actor?.identity);
    assert.equal(anonymous?.result.reason, "UNAUTHENTICATED");
  });

  it("records failed calls as FAILED with the ErrorInfo reason or the PreconditionFailure type, and no OK record", async () => {
    const folder = await wharf.create(`/iam/v2/groups/${acme}`, { name: "team" }, alice.token);
    await wharf.create(`/registry/v2/repos/${folder}`, { name: "inner" }, alice.token);
    await expectError(await wharf.api(`/iam/v2/groups/${folder}`, { method: "DELETE", token: alice.token }), {
      status: 400,
      code: 9,
    });
    const records = await ofAcme(
      `&resource=${encodeURIComponent(folder)}&action=platform.iam.v2.GroupsService/DeleteGroup`,
    );
    assert.deepEqual(
      records.map((r) => r.result),
      [{ code: "FAILED", reason: "RESOURCE_NOT_EMPTY" }],
    );
    await expectError(
      await wharf.api(`/registry/v2/repos/${acme}`, {
        method: "POST",
        token: alice.token,
        body: { name: "Bad Name!" },
      }),
      { status: 400, code: 3 },
    );
    const [invalid] = await ofAcme("&result=FAILED&action=platform.registry.v2.ReposService/CreateRepo");
    assert.equal(invalid?.result.reason, "INVALID_ARGUMENT");
    // A duplicate name fails in the write: the transaction rolls back, and only FAILED is recorded.
    await expectError(
      await wharf.api(`/registry/v2/repos/${acme}`, {
        method: "POST",
        token: alice.token,
        body: { name: "app" },
      }),
      { status: 409, code: 6 },
    );
    const creates = await ofAcme(`&action=platform.registry.v2.ReposService/CreateRepo&resource=${acme}`);
    assert.deepEqual(
      creates.map((r) => r.result.code),
      ["FAILED", "FAILED"],
    );
  });

  it("records registry pushes and deletes in their transactions, and pulls with --audit-pulls", async () => {
    const token = await wharf.registryToken(alice.uid);
    const image = buildImage("audit-push");
    await pushImage(wharf, "acme/app", "v1", token, image);
    const [push] = await ofAcme("&action=registry.push");
    assert.equal(push?.resource, "acme/app:v1");
    assert.equal(push?.group, repo);
    assert.equal(push?.actor?.identity, alice.uid);
    assert.equal(push?.result.code, "OK");

    const pulled = await wharf.registry("/v2/acme/app/manifests/v1", {
      token,
      headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
    });
    assert.equal(pulled.status, 200);
    await pulled.arrayBuffer();
    const pull = await eventually(
      "the pull's record",
      async () => (await ofAcme("&action=registry.pull"))[0],
    );
    assert.equal(pull.resource, "acme/app:v1");

    const deleted = await wharf.registry("/v2/acme/app/manifests/v1", { method: "DELETE", token });
    assert.equal(deleted.status, 202);
    const [del] = await ofAcme("&action=registry.delete");
    assert.equal(del?.resource, "acme/app:v1");
    assert.equal(del?.result.code, "OK");

    const layer = image.layerDigests[0]!;
    const unlinked = await wharf.registry(`/v2/acme/app/blobs/${layer}`, { method: "DELETE", token });
    assert.equal(unlinked.status, 202);
    const [blobDelete] = await ofAcme("&action=registry.delete");
    assert.equal(blobDelete?.resource, `acme/app@${layer}`);
    assert.equal(blobDelete?.group, repo);
    assert.equal(blobDelete?.result.code, "OK");
  });

  it("records the REST uploads of reports and VEX (accepted, refused, failed) as their RPCs would be", async () => {
    const token = await wharf.registryToken(alice.uid);
    const image = buildImage("audit-scan");
    await pushImage(wharf, "acme/app", "scan", token, image);
    const upload = (path: string, body: string | Uint8Array, who: string, requestId: string) =>
      fetch(`${wharf.apiUrl}${path}/${repo}?digest=${image.digest}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${who}`,
          "user-agent": "audit-test/1.0",
          "x-request-id": requestId,
        },
        body,
      });
    const report = readFileSync(new URL("../fixtures/vulnreports/grype.json", import.meta.url));
    assert.equal(
      (await upload("/registry/v1/vuln_reports", report, alice.token, "audit-upload-1")).status,
      200,
    );
    const action = "platform.registry.v1.Vulnerabilities/CreateVulnReport";
    const [accepted] = await ofAcme(`&action=${encodeURIComponent(action)}&result=OK`);
    assert.equal(accepted?.resource, repo);
    assert.equal(accepted?.actor?.identity, alice.uid);
    assert.equal(accepted?.requestId, "audit-upload-1");
    assert.equal(accepted?.userAgent, "audit-test/1.0");
    assert.ok(accepted?.sourceAddress, "the client's address");

    assert.equal(
      (await upload("/registry/v1/vuln_reports", report, bob.token, "audit-upload-2")).status,
      403,
    );
    const [refused] = await ofAcme(`&action=${encodeURIComponent(action)}&result=DENIED`);
    assert.equal(refused?.actor?.identity, bob.uid);
    assert.equal(refused?.requestId, "audit-upload-2");

    const bad = await upload(
      "/registry/v1/vex",
      '{"@context": "https://openvex.dev/ns/v0.2.0"}',
      alice.token,
      "audit-vex-1",
    );
    assert.equal(bad.status, 400);
    const vexAction = encodeURIComponent("platform.registry.v1.Vex/CreateVexDocument");
    const [failed] = await ofAcme(`&action=${vexAction}`);
    assert.equal(failed?.result.code, "FAILED");
    assert.equal(failed?.requestId, "audit-vex-1");
    assert.equal(failed?.resource, repo);
  });

  it("records refused registry requests (403; 401 with credentials) but not the challenge", async () => {
    const bobToken = await wharf.registryToken(bob.uid);
    const refused = await putManifest(wharf, "acme/app", "evil", buildImage("evil").manifest, bobToken);
    assert.equal(refused.status, 403);
    await refused.arrayBuffer();
    const denied = await eventually(
      "bob's refused push",
      async () => (await ofAcme(`&actor=${bob.uid}&action=registry.push`))[0],
    );
    assert.deepEqual(denied.result, { code: "DENIED", reason: "DENIED" });
    assert.equal(denied.resource, "acme/app:evil");
    assert.equal(denied.group, repo);

    // The anonymous challenge first, then a bad token: once the second is written, the first would be.
    const challenge = await wharf.registry("/v2/acme/app/manifests/v9");
    assert.equal(challenge.status, 401);
    await challenge.arrayBuffer();
    const badToken = await wharf.registry("/v2/acme/app/manifests/v9", { token: "garbage" });
    assert.equal(badToken.status, 401);
    await badToken.arrayBuffer();
    const unauthorized = await eventually("the bad token's refusal", async () =>
      (await ofAcme("&resource=acme/app:v9")).length > 0 ? await ofAcme("&resource=acme/app:v9") : undefined,
    );
    assert.deepEqual(
      unauthorized.map((r) => [r.action, r.result.code, r.result.reason, r.actor?.identity ?? ""]),
      [["registry.pull", "DENIED", "UNAUTHORIZED", ""]],
    );
  });

  it("filters by actor, action, resource, result and time, and rejects bad filters", async () => {
    const all = await ofAcme();
    assert.ok(all.length >= 8, `acme has ${all.length} records`);
    const times = all.map((r) => Date.parse(r.time));
    assert.deepEqual(
      times,
      [...times].sort((a, b) => b - a),
      "newest first",
    );
    for (const r of await ofAcme("&result=DENIED")) assert.equal(r.result.code, "DENIED");
    for (const r of await ofAcme(`&actor=${alice.uid}`)) assert.equal(r.actor?.identity, alice.uid);
    const oldest = all.at(-1) as Rec;
    const since = await ofAcme(`&start=${encodeURIComponent(oldest.time)}`);
    assert.equal(since.length, all.length);
    const until = await ofAcme(`&end=${encodeURIComponent(oldest.time)}`);
    assert.equal(until.length, 0);
    await expectError(await wharf.api(`/audit/v2/records?result=MAYBE`, { token: alice.token }), {
      status: 400,
      code: 3,
    });
    await expectError(await wharf.api(`/audit/v2/records?start=yesterday`, { token: alice.token }), {
      status: 400,
      code: 3,
    });
  });

  it("pages newest first without gaps or repeats", async () => {
    const all = await ofAcme();
    const seen: string[] = [];
    let token = "";
    do {
      const page = await expectJson<Page>(
        await wharf.api(`/audit/v2/records?uidp.descendants_of=${acme}&page_size=3&page_token=${token}`, {
          token: alice.token,
        }),
      );
      assert.ok((page.records ?? []).length <= 3);
      seen.push(...(page.records ?? []).map((r) => r.uid));
      token = page.nextPageToken ?? "";
    } while (token !== "");
    assert.deepEqual(
      seen,
      all.map((r) => r.uid),
    );
  });

  it("wharf audit list filters by organization name, result, action and time", async () => {
    const cli = cliChecks(runCliInProcess, () => ({
      PATH: process.env.PATH,
      HOME: wharf.dataDir,
      WHARF_CONFIG_DIR: `${wharf.dataDir}/cli`,
      WHARF_API_URL: wharf.apiUrl,
      WHARF_TOKEN: alice.token,
    }));
    const denied = await cli.json<Rec[]>([
      "audit",
      "list",
      "--org",
      "acme",
      "--result",
      "denied",
      "--since",
      "1h",
    ]);
    assert.ok(denied.length >= 2);
    for (const r of denied) assert.equal(r.result.code, "DENIED");
    const pushes = await cli.json<Rec[]>([
      "audit",
      "list",
      "--org",
      "acme",
      "--action",
      "registry.push",
      "--limit",
      "1",
    ]);
    assert.equal(pushes.length, 1);
    assert.equal(
      (await cli.json<Rec[]>(["audit", "list", "--org", "acme", "--until", "2000-01-01T00:00:00Z"])).length,
      0,
    );
    await cli.fails(["audit", "list", "--result", "MAYBE"], 2, /OK, DENIED or FAILED/);
    await cli.fails(["audit", "list", "--since", "yesterday"], 2, /RFC 3339/);
    // globex is invisible to alice by name; by uid its log is refused.
    await cli.fails(["audit", "list", "--org", "globex"], 4, /not found/);
    await cli.fails(["audit", "list", "--org", globex], 5, /PERMISSION_DENIED/);
  });

  it("shows an owner of another organization none of acme's records, and refuses them acme's log", async () => {
    await expectError(
      await wharf.api(`/audit/v2/records?uidp.descendants_of=${acme}`, { token: bob.token }),
      {
        status: 403,
        code: 7,
      },
    );
    const bobs = await list("page_size=500", bob.token);
    assert.ok(bobs.length > 0, "bob sees globex's records");
    for (const r of bobs)
      assert.ok(r.group === globex || r.group?.startsWith(`${globex}/`), JSON.stringify(r));
    // Viewers and editors of acme are refused too: the log is the owner's.
    for (const role of ["viewer", "editor"] as const) {
      const person = await personWithRole(wharf, `${role}-of-acme`, acme, role);
      await expectError(
        await wharf.api(`/audit/v2/records?uidp.descendants_of=${acme}`, { token: person.token }),
        {
          status: 403,
          code: 7,
        },
      );
    }
    // The platform administrator sees both organizations' records.
    const everything = await list("page_size=500", wharf.adminToken);
    assert.ok(everything.some((r) => r.group === globex) && everything.some((r) => r.group === acme));
  });
});

forEachEngine("audit log retention", (db) => {
  let wharf: TestServer;
  let offset = -500 * 86_400_000;
  const clock: Clock = { now: () => Date.now() + offset };

  before(async () => {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    wharf = await startTestServer({
      ...(databaseUrl ? { databaseUrl } : {}),
      clock,
      config: { auditRetention: "400d" },
      audit: { retention: { intervalMs: 50, batch: 2 } },
    });
  });
  after(() => wharf.close());

  it("prunes records older than --audit-retention and keeps newer ones", async () => {
    const old = await registeredPerson(wharf, "old");
    for (const name of ["o1", "o2", "o3"]) await wharf.create("/iam/v2/groups", { name }, old.token);
    assert.equal((await wharf.store.audit.list({ actor: old.uid }, { limit: 10 })).length, 3);
    offset = 0;
    const now = await registeredPerson(wharf, "now");
    const fresh = await wharf.create("/iam/v2/groups", { name: "n1" }, now.token);
    // The job runs every 50 ms, deleting two records per statement until none is older than 400 days.
    await eventually("the prune", async () =>
      (await wharf.store.audit.list({ actor: old.uid }, { limit: 10 })).length === 0 ? true : undefined,
    );
    const kept = await wharf.store.audit.list({ actor: now.uid }, { limit: 10 });
    assert.deepEqual(
      kept.map((r) => r.row.resource),
      [fresh],
    );
  });

  it("records no pulls without --audit-pulls", async () => {
    const person = await registeredPerson(wharf, "puller");
    await wharf.create("/iam/v2/groups", { name: "pulls" }, person.token);
    const token = await wharf.registryToken(person.uid);
    await pushImage(wharf, "pulls/app", "v1", token, "no-pull-audit");
    const pulled = await wharf.registry("/v2/pulls/app/manifests/v1", {
      token,
      headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
    });
    assert.equal(pulled.status, 200);
    await pulled.arrayBuffer();
    // A refusal queued after the pull: once it is written, a recorded pull would be too.
    const refused = await wharf.registry("/v2/pulls/app/manifests/v1", { token: "garbage" });
    assert.equal(refused.status, 401);
    await refused.arrayBuffer();
    await eventually("the refusal's record", async () =>
      (await wharf.store.audit.list({ action: "registry.pull", resultCode: "DENIED" }, { limit: 10 }))
        .length > 0
        ? true
        : undefined,
    );
    assert.deepEqual(
      await wharf.store.audit.list({ action: "registry.pull", resultCode: "OK" }, { limit: 10 }),
      [],
    );
    assert.equal((await wharf.store.audit.list({ action: "registry.push" }, { limit: 10 })).length, 1);
  });
});
