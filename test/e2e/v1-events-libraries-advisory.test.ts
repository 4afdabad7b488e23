import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { builtInRoleUid } from "../../src/authz/built-in-roles.js";
import {
  ListVulnerabilityMetadataRequestSchema,
  VulnerabilityMetadataListSchema,
} from "../../src/gen/platform/advisory/v1/security_advisory_pb.js";
import {
  SubscriptionFilterSchema,
  SubscriptionListSchema,
} from "../../src/gen/platform/events/v1/subscriptions_pb.js";
import {
  ArtifactListSchema,
  ListArtifactsRequestSchema,
} from "../../src/gen/platform/libraries/v1/artifacts_pb.js";
import { Ecosystem } from "../../src/gen/platform/libraries/v2/artifacts_pb.js";
import { artifactUid } from "../../src/libraries/library-ids.js";
import { storeLibraryVersions } from "../../src/libraries/library-import.js";
import { expectError, expectJson } from "../support/api-assertions.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { onOneEngine } from "../support/databases.js";
import { grpcCall } from "../support/grpc-call.js";
import { registeredPerson } from "../support/registered-person.js";
import { startV1World, type V1World } from "../support/v1-world.js";
import type { ReceivedDelivery, WebhookReceiver } from "../support/webhook-receiver.js";
import type { TestServer } from "../support/wharf-server.js";

type Json = Record<string, unknown>;
const FIXTURES = fileURLToPath(new URL("../fixtures/advisories/", import.meta.url));
const itemsOf = <T>(body: { items?: T[] }): T[] => body.items ?? [];
const typesAbout = (deliveries: ReceivedDelivery[], subject: string) =>
  deliveries.filter((d) => d.headers["ce-subject"] === subject).map((d) => String(d.headers["ce-type"]));

const DAY = 86_400_000;
const JAN_1 = Date.parse("2025-01-01T00:00:00Z");

onOneEngine("v1 Subscriptions, Artifacts and SecurityAdvisory", (db) => {
  let world: V1World;
  let wharf: TestServer;
  let receiver: WebhookReceiver;
  let grpcClient: grpc.Client;
  let admin: string;
  let orgA: string;
  let ownerB: string;
  let viewerA: string;

  const call = (path: string, init: { method?: string; body?: unknown; token?: string } = {}) =>
    wharf.api(path, { token: admin, ...init });
  const json = async <T = Json>(
    path: string,
    init: { method?: string; body?: unknown; token?: string } = {},
  ) => expectJson<T>(await call(path, init));

  before(async () => {
    world = await startV1World(db);
    ({ wharf, receiver, orgA, ownerB } = world);
    const { databaseUrl } = world;
    admin = wharf.adminToken;
    grpcClient = new grpc.Client(new URL(wharf.apiUrl).host, grpc.credentials.createInsecure());
    const viewer = await registeredPerson(wharf, "viewer-a");
    await wharf.create(`/iam/v2/roleBindings/${orgA}`, {
      identityUid: viewer.uid,
      roleUid: builtInRoleUid("viewer"),
    });
    viewerA = viewer.token;

    await wharf.store.transaction((tx) =>
      storeLibraryVersions(
        tx,
        [
          ["org.example:core", "1.0", JAN_1, false],
          ["org.example:core", "1.1", JAN_1 + DAY, false],
          ["org.example:core", "1.1-0.cgr.1", JAN_1 + 2 * DAY, true],
          ["org.example:util", "2.0", JAN_1 + 3 * DAY, false],
        ].map(([name, version, publishTime, remediated]) => ({
          ecosystem: "JAVA" as const,
          name: name as string,
          version: version as string,
          description: `${name} ${version}`,
          publishTime: publishTime as number,
          sizeBytes: 1000n,
          remediated: remediated as boolean,
        })),
        { count: () => undefined, advance: () => undefined },
      ),
    );
    const location = databaseUrl ? [] : ["--data-dir", wharf.dataDir];
    const env = { ...process.env, ...(databaseUrl ? { WHARF_DATABASE_URL: databaseUrl } : {}) };
    // In this process through runCli (the parser bin/wharf.js runs): this suite needs the data, not
    // the process boundary (advisories.test.ts and cli-vulns.test.ts spawn the shipped import).
    for (const [kind, dir] of [
      ["advisories", "yaml"],
      ["vulnmeta", "vulnmeta"],
    ] as const) {
      const run = await runCliInProcess(["import", kind, ...location, `${FIXTURES}${dir}`], env);
      assert.equal(run.code, 0, run.stderr);
    }
  });
  after(async () => {
    grpcClient.close();
    await world.close();
  });

  it("subscriptions: v1 create reads back through v2, v2 create through v1, by id", async () => {
    const v1 = await json<{ id: string; sink: string }>(`/events/v1/subscriptions/${orgA}`, {
      method: "POST",
      body: { sink: receiver.url("/v1") },
    });
    assert.equal(v1.sink, receiver.url("/v1"));
    const v2 = await json<Json>(`/events/v2/subscriptions/${v1.id}`);
    assert.deepEqual([v2.uid, v2.sink], [v1.id, v1.sink]);

    const made = await json<Json>(`/events/v2/subscriptions/${orgA}`, {
      method: "POST",
      body: { sink: receiver.url("/v2") },
    });
    assert.deepEqual(itemsOf(await json<{ items?: Json[] }>(`/events/v1/subscriptions?id=${made.uid}`)), [
      { id: made.uid, sink: receiver.url("/v2") },
    ]);
    const all = itemsOf(await json<{ items?: Json[] }>(`/events/v1/subscriptions?uidp.children_of=${orgA}`));
    assert.ok(
      [v1.id, made.uid].every((id) => all.some((s) => s.id === id)),
      "both in the list",
    );
    await json(`/events/v1/subscriptions/${v1.id}`, { method: "DELETE" });
    await json(`/events/v1/subscriptions/${made.uid}`, { method: "DELETE" });
  });

  it("subscriptions: a missing id is an empty 200 without deprecation headers; bad sinks fail as in v2", async () => {
    const res = await call(`/events/v1/subscriptions?id=${orgA}/${"0".repeat(16)}`);
    assert.equal(res.headers.get("deprecation"), null);
    assert.equal(res.headers.get("sunset"), null);
    assert.deepEqual(itemsOf(await expectJson<{ items?: unknown[] }>(res)), []);
    await expectError(
      await call(`/events/v1/subscriptions/${orgA}`, { method: "POST", body: { sink: "not a url" } }),
      { status: 400, code: 3, field: "sink" },
    );
  });

  it("subscriptions: v1 changes emit the same CloudEvents as v2 ones", async () => {
    const v1 = await json<{ id: string }>(`/events/v1/subscriptions/${orgA}`, {
      method: "POST",
      body: { sink: receiver.url("/ev1") },
    });
    await json(`/events/v1/subscriptions/${v1.id}`, { method: "DELETE" });
    const v2 = await json<{ uid: string }>(`/events/v2/subscriptions/${orgA}`, {
      method: "POST",
      body: { sink: receiver.url("/ev2") },
    });
    await json(`/events/v2/subscriptions/${v2.uid}`, { method: "DELETE" });
    const life = [
      "dev.wharf.api.events.subscription.created.v1",
      "dev.wharf.api.events.subscription.deleted.v1",
    ];
    const seen = await receiver.waitFor((a) =>
      [v1.id, v2.uid].every((s) => typesAbout(a, s).filter((t) => t.endsWith("deleted.v1")).length === 1),
    );
    // The main subscription hears both changes; count its deliveries only.
    const main = seen.filter((d) => d.path === "/hook");
    assert.deepEqual(typesAbout(main, v1.id), life);
    assert.deepEqual(typesAbout(main, v2.uid), life);
  });

  it("subscriptions: the owner of another organization can neither list, create nor delete A's", async () => {
    const sub = await json<{ id: string }>(`/events/v1/subscriptions/${orgA}`, {
      method: "POST",
      body: { sink: receiver.url("/private") },
    });
    assert.deepEqual(
      itemsOf(
        await expectJson<{ items?: unknown[] }>(
          await call(`/events/v1/subscriptions?id=${sub.id}`, { token: ownerB }),
        ),
      ),
      [],
    );
    await expectError(
      await call(`/events/v1/subscriptions/${orgA}`, {
        method: "POST",
        body: { sink: "https://x.example" },
        token: ownerB,
      }),
      { status: 403, code: 7 },
    );
    await expectError(await call(`/events/v1/subscriptions/${sub.id}`, { method: "DELETE", token: ownerB }), {
      status: 403,
      code: 7,
    });
    assert.equal(
      itemsOf(await json<{ items?: unknown[] }>(`/events/v1/subscriptions?id=${sub.id}`)).length,
      1,
    );
    const grpcList = await grpcCall(
      grpcClient,
      "/platform.events.v1.Subscriptions/List",
      { input: SubscriptionFilterSchema, output: SubscriptionListSchema },
      create(SubscriptionFilterSchema, { id: sub.id }),
      admin,
    );
    assert.deepEqual(
      grpcList.response?.items.map((s) => s.id),
      [sub.id],
    );
  });

  it("artifacts: the v1 list pages as v2 does, with v1 names, and reads back the v2 fields", async () => {
    const v2 = await json<{ artifacts: Json[] }>("/libraries/v2/artifacts?ecosystems=ECOSYSTEM_JAVA");
    const first = await json<{ items: Json[]; nextPageToken?: string; totalArtifacts: string }>(
      "/libraries/v1/artifacts?ecosystems=ECOSYSTEM_JAVA",
    );
    assert.equal(first.totalArtifacts, "2");
    assert.deepEqual(
      first.items,
      v2.artifacts.map((a) => ({
        id: a.uid,
        name: a.name,
        description: a.description,
        ecosystem: "ECOSYSTEM_JAVA",
        latestVersion: a.latestVersion,
        createdAt: a.createTime,
        updatedAt: a.updateTime,
      })),
    );
    assert.equal(first.nextPageToken ?? "", "", "one page");
    const core = first.items[0] as Json;
    assert.deepEqual(
      [core.name, core.createdAt, core.updatedAt],
      ["org.example:core", "2025-01-01T00:00:00Z", "2025-01-03T00:00:00Z"],
    );
    const skipped = await json<{ items: Json[]; totalArtifacts: string }>(
      "/libraries/v1/artifacts?ecosystems=ECOSYSTEM_JAVA&skip=1&includeUpstream=true",
    );
    assert.deepEqual(
      skipped.items.map((a) => a.name),
      ["org.example:util"],
    );
    const remediated = await json<{ items?: Json[] }>(
      "/libraries/v1/artifacts?ecosystems=ECOSYSTEM_JAVA&remediated=true",
    );
    assert.deepEqual(
      itemsOf(remediated).map((a) => a.name),
      ["org.example:core"],
    );
    await expectError(await call("/libraries/v1/artifacts"), { status: 400, code: 3, field: "ecosystems" });
    const grpcList = await grpcCall(
      grpcClient,
      "/platform.libraries.v1.Artifacts/List",
      { input: ListArtifactsRequestSchema, output: ArtifactListSchema },
      create(ListArtifactsRequestSchema, { ecosystems: [Ecosystem.JAVA], query: "util" }),
      viewerA,
    );
    assert.deepEqual(
      grpcList.response?.items.map((a) => a.name),
      ["org.example:util"],
    );
  });

  it("artifacts: versions whole with their source type; counts per ecosystem", async () => {
    const id = artifactUid("JAVA", "org.example:core");
    const versions = await json<{ items: Json[] }>(
      `/libraries/v1/artifacts/${id}/versions?includeUpstream=true`,
    );
    assert.deepEqual(
      versions.items.map((v) => [v.version, v.sourceType, v.sizeBytes]),
      [
        ["1.1-0.cgr.1", "INTERNAL_REMEDIATED", "1000"],
        ["1.1", "INTERNAL", "1000"],
        ["1.0", "INTERNAL", "1000"],
      ],
    );
    const v2 = await json<{ artifactVersions: Json[] }>(`/libraries/v2/artifacts/${id}/versions`);
    assert.deepEqual(
      versions.items.map((v) => [v.id, v.name, v.createdAt, v.updatedAt]),
      v2.artifactVersions.map((v) => [v.uid, v.name, v.createTime, v.updateTime]),
    );
    await expectError(await call(`/libraries/v1/artifacts/${"0".repeat(40)}/versions`), {
      status: 404,
      code: 5,
    });
    const counts = await json<{ items: Json[] }>("/libraries/v1/artifacts/count?ecosystems=ECOSYSTEM_JAVA");
    assert.deepEqual(counts.items, [{ ecosystem: "ECOSYSTEM_JAVA", count: "2" }]);
    // The catalogue belongs to no organization: holding libraries.artifacts.list anywhere reads it.
    assert.equal((await call("/libraries/v1/artifacts/count", { token: ownerB })).status, 200);
    assert.equal((await wharf.api("/libraries/v1/artifacts/count")).status, 401, "anonymous");
  });

  it("advisory feed: documents and metadata without a token, wrapped as items, severity named so", async () => {
    const v2Docs = await expectJson<{ documents: Json[] }>(
      await wharf.api("/advisory/v2/documents?id=sample"),
    );
    const v1Docs = await expectJson<{ items: Json[] }>(await wharf.api("/advisory/v1/documents?id=sample"));
    assert.ok(v1Docs.items.length > 0);
    assert.deepEqual(v1Docs.items, v2Docs.documents);
    const byCve = await expectJson<{ items?: Json[] }>(
      await wharf.api("/advisory/v1/documents?cves=CVE-2025-20001"),
    );
    assert.deepEqual(
      itemsOf(byCve).map((d) => d.id),
      ["sample"],
    );

    const v2Meta = await expectJson<{ vulnerabilityMetadata: Json[] }>(
      await wharf.api("/advisory/v2/metadata?ids=GHSA-9r2v-3w4x-hjmp&id=CVE-2025-10003"),
    );
    const v1Meta = await expectJson<{ items: Json[] }>(
      await wharf.api("/advisory/v1/metadata?ids=GHSA-9r2v-3w4x-hjmp&id=CVE-2025-10003"),
    );
    assert.deepEqual(
      v1Meta.items,
      v2Meta.vulnerabilityMetadata.map(({ severities, ...rest }) => ({
        ...rest,
        ...(severities ? { severity: severities } : {}),
      })),
    );
    assert.ok(
      v1Meta.items.some((m) => Array.isArray(m.severity)),
      "severity carries the severities",
    );
    assert.ok(v1Meta.items.every((m) => !("severities" in m)));
    const tooMany = Array.from({ length: 1001 }, (_, i) => `ids=${i}`).join("&");
    await expectError(await wharf.api(`/advisory/v1/metadata?${tooMany}`), {
      status: 400,
      code: 3,
      field: "ids",
    });

    const grpcMeta = await grpcCall(
      grpcClient,
      "/platform.advisory.v1.SecurityAdvisory/ListVulnerabilityMetadata",
      { input: ListVulnerabilityMetadataRequestSchema, output: VulnerabilityMetadataListSchema },
      create(ListVulnerabilityMetadataRequestSchema, { id: "CVE-2025-10003" }),
    );
    assert.deepEqual(
      grpcMeta.response?.items.map((m) => m.id),
      ["CVE-2025-10003"],
    );
  });

  it("advisory feed: resolved_vulns takes from/to, needs a token and the capabilities at each repo", async () => {
    const repo = await wharf.create(`/registry/v2/repos/${orgA}`, { name: "app" });
    const body = {
      imageRefs: [{ repo, tags: ["latest"] }],
      from: "2026-01-01T00:00:00Z",
      to: "2026-01-03T00:00:00Z",
    };
    const v1 = await json<{ items: Array<{ date: string; resolvedVulns?: unknown[] }> }>(
      "/advisory/v1/images/resolved_vulns:query",
      { method: "POST", body },
    );
    const v2 = await json<{ resolvedVulnsReports: Json[] }>("/advisory/v2/images/resolvedVulns:query", {
      method: "POST",
      body: { imageRefs: body.imageRefs, startTime: body.from, endTime: body.to },
    });
    assert.deepEqual(v1.items, v2.resolvedVulnsReports);
    assert.deepEqual(
      v1.items.map((r) => r.date),
      ["2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"],
    );
    await expectError(await wharf.api("/advisory/v1/images/resolved_vulns:query", { method: "POST", body }), {
      status: 401,
      code: 16,
    });
    await expectError(
      await call("/advisory/v1/images/resolved_vulns:query", { method: "POST", body, token: ownerB }),
      {
        status: 403,
        code: 7,
      },
    );
    await expectError(await call("/advisory/v1/images/resolved_vulns:query", { method: "POST", body: {} }), {
      status: 400,
      code: 3,
      field: "image_refs",
    });
  });

  it("vulnerabilities v1: advisories with the v2 filters, named by id, listed whole", async () => {
    const query = "artifact_names=curlish&latest_event_type=EVENT_TYPE_FILTER_FIXED";
    const v2 = await json<{ advisories: Json[] }>(`/vulnerabilities/v2/advisories?${query}`);
    const v1 = await json<{ items: Json[] }>(`/vulnerabilities/v1/advisories?${query}`);
    assert.ok(v1.items.length > 0);
    assert.deepEqual(
      v1.items,
      v2.advisories.map(({ uid, createTime, updateTime, ...same }) => ({
        ...same,
        id: uid,
        createdAt: createTime,
        updatedAt: updateTime,
      })),
    );
    const one = v1.items[0] as Json;
    assert.deepEqual(itemsOf(await json<{ items?: Json[] }>(`/vulnerabilities/v1/advisories?id=${one.id}`)), [
      one,
    ]);
    const missing = `${"0".repeat(40)}`;
    assert.deepEqual(
      itemsOf(await json<{ items?: Json[] }>(`/vulnerabilities/v1/advisories?id=${missing}`)),
      [],
    );
    await expectError(await wharf.api("/vulnerabilities/v1/advisories"), { status: 401, code: 16 });
  });
});
