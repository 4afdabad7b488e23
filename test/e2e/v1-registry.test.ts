import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  CreateTagRequestSchema,
  RepoFilterSchema,
  RepoListSchema,
  TagHistoryListSchema,
  TagHistoryRequestSchema,
  TagSchema,
} from "../../src/gen/platform/registry/v1/repos_tags_pb.js";
import { expectError, expectJson } from "../support/api-assertions.js";
import { onOneEngine } from "../support/databases.js";
import { grpcCall } from "../support/grpc-call.js";
import { registeredPerson } from "../support/registered-person.js";
import { type BuiltImage, buildImage, pushImage } from "../support/registry-push.js";
import { seedManifests } from "../support/seed-manifests.js";
import { startV1World, type V1World } from "../support/v1-world.js";
import type { ReceivedDelivery, WebhookReceiver } from "../support/webhook-receiver.js";
import type { TestServer } from "../support/wharf-server.js";

type Json = Record<string, unknown>;
interface V1Repo {
  id: string;
  name: string;
  description?: string;
  readme?: string;
  createTime: string;
  catalogTier?: string;
  bundles?: string[];
  aliases?: string[];
  activeTags?: string[];
  sync_config?: Json;
  customOverlay?: Json;
}
interface V1Tag {
  id: string;
  name: string;
  digest: string;
  lastUpdated: string;
  deprecated?: boolean;
}
interface History {
  updateTimestamp: string;
  digest: string;
}

const hex = (n: number) => n.toString(16).padStart(64, "0");
const itemsOf = <T>(body: { items?: T[] }): T[] => body.items ?? [];
/** ce-type of each delivery about `subject`, in arrival order. */
const typesAbout = (deliveries: ReceivedDelivery[], subject: string) =>
  deliveries.filter((d) => d.headers["ce-subject"] === subject).map((d) => String(d.headers["ce-type"]));

onOneEngine("v1 Registry: repos, tags, tag history, architectures and size", (db) => {
  let world: V1World;
  let wharf: TestServer;
  let receiver: WebhookReceiver;
  let admin: string;
  let orgA: string;
  let ownerB: string;
  let app: string;
  let image: BuiltImage;
  let image2: BuiltImage;

  const call = (path: string, init: { method?: string; body?: unknown; token?: string } = {}) =>
    wharf.api(path, { token: admin, ...init });
  const json = async <T = Json>(
    path: string,
    init: { method?: string; body?: unknown; token?: string } = {},
  ) => expectJson<T>(await call(path, init));

  before(async () => {
    world = await startV1World(db);
    ({ wharf, receiver, orgA, ownerB } = world);
    admin = wharf.adminToken;
    const registryToken = await wharf.registryToken();
    image = await pushImage(wharf, "acme/app", "v1", registryToken, buildImage("v1-app-1"));
    image2 = await pushImage(wharf, "acme/app", "v2", registryToken, buildImage("v1-app-2", ["a", "bb"]));
    const repos = await json<{ repos: { uid: string }[] }>(
      `/registry/v2/repos?uidp.children_of=${orgA}&name=app`,
    );
    app = repos.repos[0]?.uid as string;
    assert.ok(app);
  });
  after(() => world.close());

  it("a repo created through v1 reads back through v2 field by field, readme included", async () => {
    const created = await json<V1Repo>(`/registry/v1/repos/${orgA}`, {
      method: "POST",
      body: { name: "web", description: "web server", readme: "# web\n" },
    });
    assert.equal(created.name, "web");
    assert.equal(created.readme, "# web\n");
    const v2 = await json<Json>(`/registry/v2/repos/${created.id}`);
    assert.equal(v2.uid, created.id);
    assert.equal(v2.name, "web");
    assert.equal(v2.description, "web server");
    assert.equal(v2.createTime, created.createTime);
    const readme = await json<{ content: string }>(`/registry/v2/repos/${created.id}/readme`);
    assert.equal(readme.content, "# web\n");
  });

  it("a repo created through v2 reads back through v1 by an id filter, field by field", async () => {
    const v2 = await json<Json>(`/registry/v2/repos/${orgA}`, {
      method: "POST",
      body: { name: "db", description: "database" },
    });
    await json(`/registry/v2/repos/${v2.uid}/readme`, { method: "PATCH", body: { content: "# db" } });
    const listed = itemsOf(await json<{ items?: V1Repo[] }>(`/registry/v1/repos?id=${v2.uid}`));
    assert.deepEqual(listed, [
      { id: v2.uid, name: "db", description: "database", readme: "# db", createTime: v2.createTime },
    ]);
    const byName = itemsOf(
      await json<{ items?: V1Repo[] }>(`/registry/v1/repos?uidp.children_of=${orgA}&name=db`),
    );
    assert.deepEqual(
      byName.map((r) => r.id),
      [v2.uid],
    );
  });

  it("PUT is full replacement: omitted description and readme reset; unstored fields answer empty", async () => {
    const repo = await json<V1Repo>(`/registry/v1/repos/${orgA}`, {
      method: "POST",
      body: { name: "cache", description: "kept?", readme: "# cache" },
    });
    const replaced = await json<V1Repo>(`/registry/v1/repos/${repo.id}`, {
      method: "PUT",
      body: {
        name: "cache",
        catalogTier: "BASE",
        bundles: ["base"],
        aliases: ["cache:latest"],
        sync_config: { source: "chainguard/nginx" },
        customOverlay: { environment: { A: "b" } },
      },
    });
    assert.deepEqual(replaced, { id: repo.id, name: "cache", createTime: repo.createTime });
    const v2 = await json<Json>(`/registry/v2/repos/${repo.id}`);
    assert.equal(v2.description ?? "", "", "description reset");
    const readme = await json<{ content?: string }>(`/registry/v2/repos/${repo.id}/readme`);
    assert.equal(readme.content ?? "", "", "readme reset");
    await expectError(
      await call(`/registry/v1/repos/${repo.id}`, { method: "PUT", body: { name: "other" } }),
      {
        status: 400,
        code: 3,
        field: "name",
      },
    );
  });

  it("a create colliding on name updates the existing repo unless prevent_existing; the update needs repo.update", async () => {
    const first = await json<V1Repo>(`/registry/v1/repos/${orgA}`, {
      method: "POST",
      body: { name: "queue", description: "one" },
    });
    const again = await json<V1Repo>(`/registry/v1/repos/${orgA}`, {
      method: "POST",
      body: { name: "queue", description: "two", readme: "# q" },
    });
    assert.equal(again.id, first.id, "the existing repo");
    assert.equal(again.description, "two");
    assert.equal((await json<{ content: string }>(`/registry/v2/repos/${first.id}/readme`)).content, "# q");
    await expectError(
      await call(`/registry/v1/repos/${orgA}?prevent_existing=true`, {
        method: "POST",
        body: { name: "queue" },
      }),
      { status: 409, code: 6 },
    );

    // A caller who may create repos but not update them cannot update through a collision.
    const role = await wharf.create(`/iam/v2/roles/${orgA}`, {
      name: "creator",
      capabilities: ["CAP_REPO_CREATE"],
    });
    const { uid: creatorUid, token: creator } = await registeredPerson(wharf, "creator");
    await wharf.create(`/iam/v2/roleBindings/${orgA}`, { identityUid: creatorUid, roleUid: role });
    await expectError(
      await call(`/registry/v1/repos/${orgA}`, { method: "POST", body: { name: "queue" }, token: creator }),
      { status: 403, code: 7 },
    );
    await expectError(
      await call(`/registry/v1/repos/${orgA}`, {
        method: "POST",
        body: { name: "with-readme", readme: "# no" },
        token: creator,
      }),
      { status: 403, code: 7 },
    );
    const plain = await json<V1Repo>(`/registry/v1/repos/${orgA}`, {
      method: "POST",
      body: { name: "plain" },
      token: creator,
    });
    assert.equal(plain.name, "plain");
    assert.equal((await json<Json>(`/registry/v2/repos/${first.id}`)).description, "two", "unchanged");
  });

  it("a missing repo or tag answers 200 with no items; v1 answers carry no Deprecation or Sunset header", async () => {
    const missing = `${orgA}/${"0".repeat(16)}`;
    for (const path of [
      `/registry/v1/repos?id=${missing}`,
      `/registry/v1/tags?id=${missing}/${"1".repeat(16)}`,
      `/registry/v1/tags/${missing}/${"1".repeat(16)}/history`,
    ]) {
      const res = await call(path);
      assert.equal(res.headers.get("deprecation"), null, path);
      assert.equal(res.headers.get("sunset"), null, path);
      assert.deepEqual(itemsOf(await expectJson<{ items?: unknown[] }>(res)), [], path);
    }
    const listed = await call(`/registry/v1/repos?uidp.children_of=${orgA}`);
    assert.equal(listed.headers.get("deprecation"), null);
    assert.ok(itemsOf(await expectJson<{ items?: V1Repo[] }>(listed)).some((r) => r.id === app));
  });

  it("tags: v1 create reads back through v2, v2 create through v1; PUT moves the tag and resets deprecated", async () => {
    const created = await json<V1Tag>(`/registry/v1/tags/${app}`, {
      method: "POST",
      body: { name: "stable", digest: image.digest, deprecated: true },
    });
    const v2 = await json<Json>(`/registry/v2/tags/${created.id}`);
    assert.deepEqual(
      [v2.uid, v2.name, v2.digest, v2.deprecated, v2.updateTime],
      [created.id, "stable", image.digest, true, created.lastUpdated],
    );

    const viaV2 = await json<Json>(`/registry/v2/tags/${app}`, {
      method: "POST",
      body: { name: "edge", digest: image2.digest },
    });
    assert.deepEqual(itemsOf(await json<{ items?: V1Tag[] }>(`/registry/v1/tags?id=${viaV2.uid}`)), [
      { id: viaV2.uid, name: "edge", digest: image2.digest, lastUpdated: viaV2.updateTime },
    ]);

    const moved = await json<V1Tag>(`/registry/v1/tags/${created.id}`, {
      method: "PUT",
      body: { name: "stable", digest: image2.digest },
    });
    assert.equal(moved.digest, image2.digest);
    assert.equal(moved.deprecated ?? false, false, "omitted deprecated resets");
    const after = await json<Json>(`/registry/v2/tags/${created.id}`);
    assert.equal(after.digest, image2.digest);
    assert.equal(after.deprecated ?? false, false);
    await expectError(
      await call(`/registry/v1/tags/${created.id}`, {
        method: "PUT",
        body: { name: "renamed", digest: image.digest },
      }),
      { status: 400, code: 3, field: "name" },
    );
    await expectError(
      await call(`/registry/v1/tags/${app}`, {
        method: "POST",
        body: { name: "bad tag!", digest: image.digest },
      }),
      { status: 400, code: 3, field: "name" },
    );
  });

  it("lists tags with the exclude_* name filters, digest, name and updatedSince", async () => {
    const repo = await json<V1Repo>(`/registry/v1/repos/${orgA}`, {
      method: "POST",
      body: { name: "kinds" },
    });
    await seedManifests(wharf.store, repo.id, [`sha256:${hex(1)}`]);
    const names = ["latest", `sha256-${hex(9)}`, `sha256-${hex(9)}.sig`, "1.2-20240101", "1.2-r3", "1.2"];
    for (const name of names) {
      await json(`/registry/v1/tags/${repo.id}`, {
        method: "POST",
        body: { name, digest: `sha256:${hex(1)}` },
      });
    }
    const list = async (query: string) =>
      itemsOf(await json<{ items?: V1Tag[] }>(`/registry/v1/tags?uidp.children_of=${repo.id}${query}`))
        .map((t) => t.name)
        .sort();
    assert.deepEqual(await list(""), [...names].sort());
    assert.deepEqual(await list("&excludeReferrers=true"), ["1.2", "1.2-20240101", "1.2-r3", "latest"]);
    assert.deepEqual(await list("&exclude_dates=true&exclude_epochs=true"), [
      "1.2",
      "latest",
      `sha256-${hex(9)}`,
      `sha256-${hex(9)}.sig`,
    ]);
    assert.deepEqual(await list("&name=1.2"), ["1.2"]);
    assert.deepEqual(
      await list(`&digest=sha256:${hex(1)}&excludeReferrers=true&excludeDates=true&excludeEpochs=true`),
      ["1.2", "latest"],
    );
    assert.deepEqual(await list("&updatedSince=2999-01-01T00:00:00Z"), []);
    assert.equal((await list("&updatedSince=2000-01-01T00:00:00Z")).length, names.length);
  });

  it("tag history answers what the registry's Tag History API answers, with start and end", async () => {
    const tag = await json<V1Tag>(`/registry/v1/tags/${app}`, {
      method: "POST",
      body: { name: "hist", digest: image.digest },
    });
    for (const digest of [image2.digest, image.digest]) {
      await new Promise((r) => setTimeout(r, 5));
      await json(`/registry/v1/tags/${tag.id}`, { method: "PUT", body: { name: "hist", digest } });
    }
    const v1 = itemsOf(await json<{ items?: History[] }>(`/registry/v1/tags/${tag.id}/history`));
    assert.deepEqual(
      v1.map((h) => h.digest),
      [image.digest, image2.digest, image.digest],
      "oldest first",
    );
    const oci = await wharf.registry("/v2/acme/app/_service/history/hist", {
      token: await wharf.registryToken(),
    });
    assert.equal(oci.status, 200);
    assert.deepEqual(
      ((await oci.json()) as { history: History[] }).history,
      v1,
      "the same records as the registry's API",
    );

    const second = v1[1] as History;
    const third = v1[2] as History;
    const fromSecond = itemsOf(
      await json<{ items?: History[] }>(
        `/registry/v1/tags/${tag.id}/history?start=${second.updateTimestamp}`,
      ),
    );
    assert.deepEqual(fromSecond, [second, third], "start is inclusive");
    const beforeThird = itemsOf(
      await json<{ items?: History[] }>(`/registry/v1/tags/${tag.id}/history?end=${third.updateTimestamp}`),
    );
    assert.deepEqual(beforeThird, v1.slice(0, 2), "end is exclusive");
    await expectError(await call(`/registry/v1/tags/${tag.id}/history?start=yesterday`), {
      status: 400,
      code: 3,
    });
  });

  it("architectures and size answer the v2 ImagesService values with v1 names", async () => {
    const archs = await json<{ archs: string[] }>(
      `/registry/v1/repos/${app}/digests/${image2.digest}/architectures`,
    );
    const v2Archs = await json<{ architectures: string[] }>(
      `/registry/v2/repos/${app}/digests/${image2.digest}/architectures`,
    );
    assert.deepEqual(archs.archs, v2Archs.architectures);
    assert.deepEqual(archs.archs, ["amd64"]);
    const size = await json<{ size: string; arch: string }>(
      `/registry/v1/repos/${app}/digests/${image2.digest}/size?arch=amd64`,
    );
    const v2Size = await json<{ size: string; architecture: string }>(
      `/registry/v2/repos/${app}/digests/${image2.digest}/size?architecture=amd64`,
    );
    assert.deepEqual(size, { size: v2Size.size, arch: "amd64" });
    const expected = [...image2.blobs.values()].reduce((sum, b) => sum + b.length, 0);
    assert.equal(size.size, String(expected), "config and layers");
    await expectError(await call(`/registry/v1/repos/${app}/digests/${image2.digest}/size?arch=s390x`), {
      status: 404,
      code: 5,
    });
  });

  it("v1 changes emit the same CloudEvent types and subjects as the v2 ones", async () => {
    // The same life through each face: create, update, delete a repo; create, move, delete a tag.
    const v1Repo = await json<V1Repo>(`/registry/v1/repos/${orgA}`, {
      method: "POST",
      body: { name: "ev1" },
    });
    await json(`/registry/v1/repos/${v1Repo.id}`, { method: "PUT", body: { name: "ev1", description: "x" } });
    const v2Repo = await json<Json>(`/registry/v2/repos/${orgA}`, { method: "POST", body: { name: "ev2" } });
    await json(`/registry/v2/repos/${v2Repo.uid}`, { method: "PATCH", body: { description: "x" } });
    const v1Tag = await json<V1Tag>(`/registry/v1/tags/${app}`, {
      method: "POST",
      body: { name: "ev1", digest: image.digest },
    });
    await json(`/registry/v1/tags/${v1Tag.id}`, {
      method: "PUT",
      body: { name: "ev1", digest: image2.digest },
    });
    await json(`/registry/v1/tags/${v1Tag.id}`, { method: "DELETE" });
    const v2Tag = await json<Json>(`/registry/v2/tags/${app}`, {
      method: "POST",
      body: { name: "ev2", digest: image.digest },
    });
    await json(`/registry/v2/tags/${app}`, { method: "POST", body: { name: "ev2", digest: image2.digest } });
    await json(`/registry/v2/tags/${v2Tag.uid}`, { method: "DELETE" });
    await json(`/registry/v1/repos/${v1Repo.id}`, { method: "DELETE" });
    await json(`/registry/v2/repos/${v2Repo.uid}`, { method: "DELETE" });

    const repoLife = [
      "dev.wharf.api.registry.repo.created.v1",
      "dev.wharf.api.registry.repo.updated.v1",
      "dev.wharf.api.registry.repo.deleted.v1",
    ];
    const tagLife = [
      "dev.wharf.api.registry.tag.created.v1",
      "dev.wharf.api.registry.tag.updated.v1",
      "dev.wharf.api.registry.tag.deleted.v1",
    ];
    const subjects = [v1Repo.id, v2Repo.uid as string, v1Tag.id, v2Tag.uid as string];
    const all = await receiver.waitFor((a) => subjects.every((s) => typesAbout(a, s).length === 3));
    assert.deepEqual(typesAbout(all, v1Repo.id), repoLife);
    assert.deepEqual(typesAbout(all, v2Repo.uid as string), repoLife);
    assert.deepEqual(typesAbout(all, v1Tag.id), tagLife);
    assert.deepEqual(typesAbout(all, v2Tag.uid as string), tagLife);
  });

  it("the owner of another organization can neither read nor change organization A through v1", async () => {
    const tag = await json<V1Tag>(`/registry/v1/tags/${app}`, {
      method: "POST",
      body: { name: "private", digest: image.digest },
    });
    const asB = (path: string, init: { method?: string; body?: unknown } = {}) =>
      call(path, { ...init, token: ownerB });
    assert.deepEqual(
      itemsOf(await expectJson<{ items?: unknown[] }>(await asB(`/registry/v1/repos?id=${app}`))),
      [],
    );
    assert.deepEqual(
      itemsOf(
        await expectJson<{ items?: unknown[] }>(await asB(`/registry/v1/repos?uidp.descendants_of=${orgA}`)),
      ),
      [],
    );
    assert.deepEqual(
      itemsOf(await expectJson<{ items?: unknown[] }>(await asB(`/registry/v1/tags?id=${tag.id}`))),
      [],
    );
    const denied = { status: 403, code: 7 };
    await expectError(
      await asB(`/registry/v1/repos/${orgA}`, { method: "POST", body: { name: "evil" } }),
      denied,
    );
    await expectError(
      await asB(`/registry/v1/repos/${app}`, { method: "PUT", body: { name: "app" } }),
      denied,
    );
    await expectError(await asB(`/registry/v1/repos/${app}`, { method: "DELETE" }), denied);
    await expectError(
      await asB(`/registry/v1/tags/${app}`, { method: "POST", body: { name: "evil", digest: image.digest } }),
      denied,
    );
    await expectError(
      await asB(`/registry/v1/tags/${tag.id}`, {
        method: "PUT",
        body: { name: "private", digest: image2.digest },
      }),
      denied,
    );
    await expectError(await asB(`/registry/v1/tags/${tag.id}`, { method: "DELETE" }), denied);
    await expectError(await asB(`/registry/v1/tags/${tag.id}/history`), denied);
    await expectError(await asB(`/registry/v1/repos/${app}/digests/${image.digest}/architectures`), denied);
    await expectError(await asB(`/registry/v1/repos/${app}/digests/${image.digest}/size`), denied);
    assert.equal((await json<Json>(`/registry/v2/tags/${tag.id}`)).digest, image.digest, "unchanged");
  });

  it("answers the v1 Registry over gRPC (grpc-js)", async () => {
    const client = new grpc.Client(new URL(wharf.apiUrl).host, grpc.credentials.createInsecure());
    try {
      const listed = await grpcCall(
        client,
        "/platform.registry.v1.Registry/ListRepos",
        { input: RepoFilterSchema, output: RepoListSchema },
        create(RepoFilterSchema, { id: app }),
        admin,
      );
      assert.ifError(listed.error);
      assert.deepEqual(
        listed.response?.items.map((r) => [r.id, r.name]),
        [[app, "app"]],
      );
      const tagged = await grpcCall(
        client,
        "/platform.registry.v1.Registry/CreateTag",
        { input: CreateTagRequestSchema, output: TagSchema },
        create(CreateTagRequestSchema, { repoId: app, tag: { name: "grpc", digest: image.digest } }),
        admin,
      );
      assert.ifError(tagged.error);
      assert.equal(tagged.response?.digest, image.digest);
      const history = await grpcCall(
        client,
        "/platform.registry.v1.Registry/ListTagHistory",
        { input: TagHistoryRequestSchema, output: TagHistoryListSchema },
        create(TagHistoryRequestSchema, { parentId: tagged.response?.id ?? "" }),
        admin,
      );
      assert.deepEqual(
        history.response?.items.map((h) => h.digest),
        [image.digest],
      );
      const denied = await grpcCall(
        client,
        "/platform.registry.v1.Registry/CreateTag",
        { input: CreateTagRequestSchema, output: TagSchema },
        create(CreateTagRequestSchema, { repoId: app, tag: { name: "grpc-b", digest: image.digest } }),
        ownerB,
      );
      assert.equal(denied.error?.code, grpc.status.PERMISSION_DENIED);
    } finally {
      client.close();
    }
  });
});
