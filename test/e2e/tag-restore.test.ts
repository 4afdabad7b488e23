import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import * as tags from "../../src/gen/platform/registry/v2/tags_pb.js";
import { expectError, expectJson, type StatusBody } from "../support/api-assertions.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { forEachEngine } from "../support/databases.js";
import { grpcCall } from "../support/grpc-call.js";
import { personWithRole } from "../support/registered-person.js";
import { buildImage, pushImage } from "../support/registry-push.js";
import {
  type ReceivedDelivery,
  startWebhookReceiver,
  type WebhookReceiver,
} from "../support/webhook-receiver.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

type Json = Record<string, unknown>;
interface ApiTag {
  uid: string;
  name: string;
  digest: string;
  updateTime: string;
}

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

/** The PreconditionFailure violation types of an error body. */
function violationTypes(body: StatusBody): string[] {
  const failure = body.details.find((d) => d["@type"].endsWith("PreconditionFailure")) as unknown as
    | { violations: { type: string }[] }
    | undefined;
  return failure?.violations.map((v) => v.type) ?? [];
}

forEachEngine("tag restore: by digest or time, deleted tags, and what garbage collection leaves", (db) => {
  let wharf: TestServer;
  let receiver: WebhookReceiver;
  let client: grpc.Client;
  let admin: string;
  let push: string;
  let org: string;
  let repo: string;
  let storeFlags: string[];
  // The server's clock runs `offset` ms from the wall clock: the test dates pushes in the past, and
  // `wharf gc` (wall clock) then sees them at their age. It only ever moves forward.
  let offset = -10 * DAY;
  const clock = { now: () => Date.now() + offset };
  /** Moves the clock to `ageMs` before the wall clock, and mints tokens valid from then (for a day). */
  const at = async (ageMs: number) => {
    const target = -ageMs;
    assert.ok(target >= offset, "the test clock only moves forward");
    offset = target;
    admin = await wharf.tokenFor(ADMIN_IDENTITY_UID, 86_400);
    push = await wharf.registryToken(ADMIN_IDENTITY_UID, 86_400);
  };
  const a = buildImage("restore-a");
  const b = buildImage("restore-b");
  const c = buildImage("restore-c");
  const d = buildImage("restore-d");
  const times: Record<string, number> = {};

  const api = (path: string, init: { method?: string; body?: unknown; token?: string } = {}) =>
    wharf.api(path, { token: admin, ...init });
  const json = async <T = Json>(
    path: string,
    init: { method?: string; body?: unknown; token?: string } = {},
  ) => expectJson<T>(await api(path, init));
  const tagOf = async (name: string) =>
    (await json<{ tags?: ApiTag[] }>(`/registry/v2/tags?uidp.children_of=${repo}&name=${name}`)).tags?.[0];
  const restore = (uid: string, body: unknown, token = admin) =>
    api(`/registry/v2/tags/${uid}:restore`, { method: "POST", body, token });
  const refused = async (res: Response, type: string, status = 400, code = 9) => {
    const body = await expectError(res, { status, code });
    assert.deepEqual(violationTypes(body), [type], JSON.stringify(body));
    return body;
  };
  const history = async (tag: string) =>
    (
      await expectJson<{ history: { digest: string }[] }>(
        await wharf.registry(`/v2/acme/app/_service/history/${tag}`, { token: push }),
      )
    ).history.map((r) => r.digest);
  const pushAt = async (ageMs: number, tag: string, image: ReturnType<typeof buildImage>) => {
    await at(ageMs);
    await pushImage(wharf, "acme/app", tag, push, image);
    times[`${tag}:${image.digest}`] = clock.now();
  };

  before(async () => {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    wharf = await startTestServer({
      ...(databaseUrl ? { databaseUrl } : {}),
      clock,
      config: { eventsAllowLoopback: "true" },
    });
    storeFlags = ["--data-dir", wharf.dataDir, ...(databaseUrl ? ["--database-url", databaseUrl] : [])];
    await at(10 * DAY);
    client = new grpc.Client(new URL(wharf.apiUrl).host, grpc.credentials.createInsecure());
    receiver = await startWebhookReceiver();
    org = await wharf.create("/iam/v2/groups", { name: "acme" }, admin);
    await wharf.create(`/events/v2/subscriptions/${org}`, { sink: receiver.url("/hook") }, admin);
    // latest: A (10 days ago), B (6 days ago), D (3 days ago), C (2 days ago).
    await pushAt(10 * DAY, "latest", a);
    await pushAt(6 * DAY, "latest", b);
    await pushAt(3 * DAY, "latest", d);
    await pushAt(2 * DAY, "latest", c);
    // gone: D then C (inside the garbage collection window below).
    await pushAt(2 * DAY - HOUR, "gone", d);
    await pushAt(2 * DAY - 2 * HOUR, "gone", c);
    const repos = await json<{ repos: { uid: string }[] }>(
      `/registry/v2/repos?uidp.children_of=${org}&name=app`,
    );
    repo = repos.repos[0]?.uid as string;
    await at(0);
  });
  after(async () => {
    client?.close();
    await wharf?.close();
    await receiver?.close();
  });

  it("refuses bad input: both or neither of digest and time, a malformed digest or time, an unknown uid", async () => {
    const latest = (await tagOf("latest")) as ApiTag;
    await expectError(await restore(latest.uid, {}), { status: 400, code: 3, field: "digest" });
    await expectError(await restore(latest.uid, { digest: a.digest, time: "2026-01-01T00:00:00Z" }), {
      status: 400,
      code: 3,
      field: "digest",
    });
    await expectError(await restore(latest.uid, { digest: "sha256:beef" }), {
      status: 400,
      code: 3,
      field: "digest",
    });
    const badTime = await restore(latest.uid, { time: "yesterday" });
    assert.equal(badTime.status, 400, await badTime.clone().text());
    assert.match(((await badTime.json()) as StatusBody).message, /time/);
    await expectError(await restore(`${repo}/0123456789abcdef`, { digest: a.digest }), {
      status: 404,
      code: 5,
    });
    await expectError(await restore("not-a-uid", { digest: a.digest }), { status: 400, code: 3 });
    // A digest the tag never named, and a time before its first record.
    await refused(await restore(latest.uid, { digest: buildImage("never").digest }), "NOT_IN_HISTORY");
    await refused(
      await restore(latest.uid, { time: new Date(Date.now() - 11 * DAY).toISOString() }),
      "NOT_IN_HISTORY",
    );
    assert.equal((await tagOf("latest"))?.digest, c.digest, "nothing moved");
  });

  it("restores by digest and by time, appending history and emitting tag.updated; B's owner cannot", async () => {
    const latest = (await tagOf("latest")) as ApiTag;
    const byDigest = await expectJson<ApiTag>(await restore(latest.uid, { digest: b.digest }));
    assert.equal(byDigest.uid, latest.uid);
    assert.equal(byDigest.digest, b.digest);
    assert.deepEqual(await history("latest"), [a.digest, b.digest, d.digest, c.digest, b.digest]);

    // 2.5 days ago the tag named D.
    const byTime = await expectJson<ApiTag>(
      await restore(latest.uid, { time: new Date(Date.now() - 2.5 * DAY).toISOString() }),
    );
    assert.equal(byTime.digest, d.digest);
    // Restoring to the digest it names changes nothing.
    const same = await expectJson<ApiTag>(await restore(latest.uid, { digest: d.digest }));
    assert.equal(same.updateTime, byTime.updateTime);
    assert.equal((await history("latest")).length, 6);

    const orgB = await wharf.create("/iam/v2/groups", { name: "other" }, admin);
    const ownerB = (await personWithRole(wharf, "bob", orgB, "owner", { bindingToken: admin })).token;
    await expectError(await restore(latest.uid, { digest: c.digest }, ownerB), { status: 403, code: 7 });
    const editor = (await personWithRole(wharf, "eve", org, "editor", { bindingToken: admin })).token;
    const byEditor = await expectJson<ApiTag>(await restore(latest.uid, { digest: c.digest }, editor));
    assert.equal(byEditor.digest, c.digest);

    const updates = (all: ReceivedDelivery[]) =>
      all.filter(
        (e) =>
          e.headers["ce-subject"] === latest.uid &&
          e.headers["ce-type"] === "dev.wharf.api.registry.tag.updated.v1",
      );
    const delivered = await receiver.waitFor((all) => updates(all).length === 3);
    assert.deepEqual(
      updates(delivered).map((e) => (JSON.parse(e.body) as { body: { digest: string } }).body.digest),
      [b.digest, d.digest, c.digest],
    );
  });

  it("brings a deleted tag back with its uid, as tag.created, also over gRPC", async () => {
    const gone = (await tagOf("gone")) as ApiTag;
    await json(`/registry/v2/tags/${gone.uid}`, { method: "DELETE" });
    await expectError(await api(`/registry/v2/tags/${gone.uid}`), { status: 404, code: 5 });
    // At the time of the delete record it named nothing.
    await refused(
      await restore(gone.uid, { time: new Date(Date.now() + 1000).toISOString() }),
      "NOT_IN_HISTORY",
    );

    const back = await grpcCall(
      client,
      "/platform.registry.v2.TagsService/RestoreTag",
      { input: tags.RestoreTagRequestSchema, output: tags.TagSchema },
      create(tags.RestoreTagRequestSchema, { uid: gone.uid, digest: d.digest }),
      admin,
    );
    assert.equal(back.error, undefined, back.error?.details);
    assert.equal(back.response?.uid, gone.uid);
    assert.equal(back.response?.digest, d.digest);
    assert.equal((await tagOf("gone"))?.uid, gone.uid);
    assert.deepEqual(await history("gone"), [d.digest, c.digest, "", d.digest]);

    // By time over gRPC: what it named when C was pushed to it.
    const byTime = await grpcCall(
      client,
      "/platform.registry.v2.TagsService/RestoreTag",
      { input: tags.RestoreTagRequestSchema, output: tags.TagSchema },
      create(tags.RestoreTagRequestSchema, {
        uid: gone.uid,
        time: timestampFromMs(times[`gone:${c.digest}`] as number),
      }),
      admin,
    );
    assert.equal(byTime.error, undefined, byTime.error?.details);
    assert.equal(byTime.response?.digest, c.digest);
    const neither = await grpcCall(
      client,
      "/platform.registry.v2.TagsService/RestoreTag",
      { input: tags.RestoreTagRequestSchema, output: tags.TagSchema },
      create(tags.RestoreTagRequestSchema, { uid: gone.uid }),
      admin,
    );
    assert.equal(neither.error?.code, grpc.status.INVALID_ARGUMENT);

    const created = await receiver.waitFor((all) =>
      all.some(
        (e) =>
          e.headers["ce-subject"] === gone.uid &&
          e.headers["ce-type"] === "dev.wharf.api.registry.tag.created.v1",
      ),
    );
    assert.ok(created.length > 0);
  });

  it("after `wharf gc --window 96h`, restores what the tag named inside the window; older history is MANIFEST_GONE", async () => {
    // latest's history: A (10 d), B (6 d), D (3 d), C (2 d), then restores (now). The window starts
    // 4 days ago: B (named then), D and C stay; A, named only before the window, goes.
    const gc = await runCliInProcess(["gc", "--window", "96h", "--grace", "1h", ...storeFlags], process.env);
    assert.equal(gc.code, 0, gc.stderr);
    assert.equal((JSON.parse(gc.stdout) as { manifests: number }).manifests, 1, gc.stdout);
    const manifest = (digest: string) => wharf.registry(`/v2/acme/app/manifests/${digest}`, { token: push });
    assert.equal((await manifest(a.digest)).status, 404, "A was collected");
    for (const kept of [b, c, d]) assert.equal((await manifest(kept.digest)).status, 200);

    const latest = (await tagOf("latest")) as ApiTag;
    const b1 = await expectJson<ApiTag>(await restore(latest.uid, { digest: b.digest }));
    assert.equal(b1.digest, b.digest, "B, named at the window's start, restores");
    await refused(await restore(latest.uid, { digest: a.digest }), "MANIFEST_GONE");
    await refused(
      await restore(latest.uid, { time: new Date(Date.now() - 8 * DAY).toISOString() }),
      "MANIFEST_GONE",
    );
    const d1 = await expectJson<ApiTag>(
      await restore(latest.uid, { time: new Date(Date.now() - 2.5 * DAY).toISOString() }),
    );
    assert.equal(d1.digest, d.digest);
  });
});
