// The replication copier (ADR 0055) against real remotes: CNCF distribution (Debian's
// docker-registry, anonymous and with htpasswd Basic auth, behind a counting proxy) and a second
// Wharf (the Bearer token flow, a storage quota). Wharf's side runs in process over the store of
// each engine and a filesystem blob store.
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import { after, before, describe, it } from "node:test";
import { systemClock } from "../../src/core/clock.js";
import { newChildUid } from "../../src/core/uidp.js";
import { createSinkAddressPolicy } from "../../src/events/sink-address-policy.js";
import { parseDigest } from "../../src/registry/digest.js";
import { createRemoteRegistry } from "../../src/registry/remote/remote-client.js";
import type { RemoteRegistry } from "../../src/registry/remote/remote-registry.js";
import type { ReplicationRuleConfig } from "../../src/registry/replication/replication-contract.js";
import {
  createReplicationCopier,
  ReplicationHaltedError,
} from "../../src/registry/replication/replication-copier.js";
import { createFilesystemBlobDriver } from "../../src/storage/blobs/filesystem/filesystem-blob-driver.js";
import type { GroupRow } from "../../src/storage/iam-store.js";
import { forEachEngine } from "../support/databases.js";
import { type Distribution, distributionSkip, startDistribution } from "../support/distribution.js";
import { buildImage, sha256 } from "../support/registry-push.js";
import {
  asManifest,
  type BuiltManifest,
  blobBytes,
  buildIndex,
  buildSignature,
  COSIGN_SIGNATURE,
  OCI_INDEX,
} from "../support/replication-images.js";
import { type LocalWharf, localWharf, progressSink } from "../support/replication-world.js";
import { runSkopeo, skopeoSkip } from "../support/skopeo.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const LOOPBACK = createSinkAddressPolicy({ allow: [], allowLoopback: true });
const ACCEPT = [
  "application/vnd.oci.image.manifest.v1+json",
  OCI_INDEX,
  "application/vnd.docker.distribution.manifest.v2+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
].join(", ");

/** An HTTP proxy in front of `target` that logs `<METHOD> <path> <status>` of every request. */
async function countingProxy(
  target: string,
): Promise<{ url: string; log: string[]; close(): Promise<void> }> {
  const upstream = new URL(target);
  const log: string[] = [];
  const server: Server = createServer((req, res) => {
    const out = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => {
        log.push(`${req.method} ${req.url} ${answer.statusCode}`);
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on("error", () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    log,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** GET of a manifest on a registry over HTTP: its status and digest. */
async function manifestAt(base: string, name: string, reference: string, auth?: string) {
  const res = await fetch(`${base}/v2/${name}/manifests/${reference}`, {
    headers: { accept: ACCEPT, ...(auth ? { authorization: auth } : {}) },
  });
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, digest: res.headers.get("docker-content-digest"), body };
}

forEachEngine("replication copy against real registries", (db) => {
  let wharf: LocalWharf;
  let blobDir: string;
  let orgs = 0;

  before(async () => {
    blobDir = await mkdtemp(join(tmpdir(), "wharf-replication-"));
    wharf = localWharf(await db.open(), createFilesystemBlobDriver({ root: blobDir }));
  });
  after(() => rm(blobDir, { recursive: true, force: true }));

  const newOrg = () => wharf.organization(`org${++orgs}`);

  function rule(org: GroupRow, over: Partial<ReplicationRuleConfig>): ReplicationRuleConfig {
    return {
      uid: newChildUid(org.uid),
      orgUid: org.uid,
      orgName: org.name,
      name: "rule",
      direction: "PUSH",
      remote: { url: "", username: "", password: "" },
      repoPattern: "",
      tagPattern: "",
      destination: "",
      ...over,
    };
  }

  async function run(r: ReplicationRuleConfig) {
    const progress = progressSink();
    const copier = createReplicationCopier({
      ...wharf,
      retry: { attempts: 3, delaysMs: [50, 200], maxRetryAfterMs: 2000 },
      remoteFor: (x) =>
        createRemoteRegistry({
          url: x.remote.url,
          ...(x.remote.username === "" ? {} : { credentials: x.remote }),
          policy: LOOPBACK,
          allowHttp: true,
          clock: systemClock,
        }),
    });
    let halted: unknown;
    await copier.run(r, progress, new AbortController().signal).catch((err: unknown) => {
      halted = err;
    });
    return { ...progress, halted };
  }

  describe("CNCF distribution", { skip: distributionSkip }, () => {
    let registry: Distribution;
    let secured: Distribution;
    before(async () => {
      [registry, secured] = await Promise.all([
        startDistribution(),
        startDistribution({ users: { alice: "s3cret" } }),
      ]);
    });
    after(async () => {
      await registry?.close();
      await secured?.close();
    });

    it("PUSH copies two repos' matching tags, a multi-arch index and a signature; a second run copies nothing", async () => {
      const org = await newOrg();
      const base = "a shared base layer, big enough to notice ".repeat(200);
      const a = asManifest(buildImage(`${org.name}-a`, [base, "a's own layer"]));
      const multi = buildIndex(`${org.name}-multi`, ["linux/amd64", "linux/arm64"]);
      const signature = buildSignature(a);
      const b = asManifest(buildImage(`${org.name}-b`, [base, "b's own layer"]));
      await wharf.push(`${org.name}/app1`, "v1", a);
      await wharf.push(`${org.name}/app1`, "v2", multi);
      await wharf.push(`${org.name}/app1`, "dev", asManifest(buildImage(`${org.name}-dev`)));
      await wharf.push(`${org.name}/app1`, signature.digest, signature);
      await wharf.push(`${org.name}/team/app2`, "v1", b);
      const proxy = await countingProxy(registry.url);
      try {
        const r = rule(org, {
          remote: { url: proxy.url, username: "", password: "" },
          tagPattern: "v*",
          destination: `mirror-${org.name}`,
        });

        const first = await run(r);
        assert.deepEqual(first.failures, []);
        assert.equal(first.halted, undefined);
        const dest = `mirror-${org.name}`;
        assert.equal((await manifestAt(registry.url, `${dest}/app1`, "v1")).digest, a.digest);
        assert.equal((await manifestAt(registry.url, `${dest}/app1`, "v2")).digest, multi.digest);
        for (const child of multi.children) {
          assert.equal((await manifestAt(registry.url, `${dest}/app1`, child.digest)).status, 200);
        }
        assert.equal((await manifestAt(registry.url, `${dest}/app1`, "dev")).status, 404, "dev is not v*");
        assert.equal((await manifestAt(registry.url, `${dest}/team/app2`, "v1")).digest, b.digest);
        // distribution 2.8 has no referrers API: the signature is found through the fallback tag.
        assert.equal((await manifestAt(registry.url, `${dest}/app1`, signature.digest)).status, 200);
        const fallback = await manifestAt(registry.url, `${dest}/app1`, `sha256-${a.digest.slice(7)}`);
        assert.equal(fallback.status, 200);
        const listed = JSON.parse(fallback.body.toString()) as {
          manifests: { digest: string; artifactType: string }[];
        };
        assert.deepEqual(
          listed.manifests.map((m) => [m.digest, m.artifactType]),
          [[signature.digest, COSIGN_SIGNATURE]],
        );
        // The shared base went over the wire once: the second repo mounted it.
        const mounts = proxy.log.filter(
          (l) => l.startsWith("POST") && l.includes("mount=") && l.endsWith(" 201"),
        );
        assert.equal(mounts.length, 1, proxy.log.join("\n"));
        const distinct = blobBytes(a, multi, signature, b);
        assert.equal(first.counters.copiedBytes, distinct);
        assert.equal(first.counters.copiedManifests, 6);

        // Pullable by a real client.
        if (!skopeoSkip) {
          const inspected = await runSkopeo([
            "inspect",
            "--raw",
            "--tls-verify=false",
            `docker://${registry.host}/${dest}/app1:v2`,
          ]);
          assert.equal(inspected.code, 0, inspected.stderr);
          assert.equal(JSON.parse(inspected.stdout).mediaType, OCI_INDEX);
        }

        proxy.log.length = 0;
        const second = await run(r);
        assert.deepEqual(second.failures, []);
        assert.deepEqual(
          { ...second.counters, skippedBlobs: 0 },
          { copiedManifests: 0, copiedBlobs: 0, copiedBytes: 0, skippedBlobs: 0 },
        );
        assert.deepEqual(
          proxy.log.filter((l) => !l.startsWith("GET") && !l.startsWith("HEAD")),
          [],
          "a second run writes nothing",
        );
      } finally {
        await proxy.close();
      }
    });

    it("PULL mirrors a remote repo with its tags into <org>/<destination>/<path>, recorded like a push", async () => {
      const org = await newOrg();
      const client = remoteOf(registry.url);
      const path = `library/${org.name}-alpine`;
      const single = asManifest(buildImage(`${org.name}-3.19`));
      const multi = buildIndex(`${org.name}-3.20`, ["linux/amd64", "linux/arm64"], "base");
      const signature = buildSignature(single);
      await seed(client, path, "3.19", single);
      await seed(client, path, "3.20", multi);
      await seed(client, path, signature.digest, signature);
      const fallback: BuiltManifest = {
        ...referrersIndex([signature]),
        blobs: new Map(),
        children: [],
      };
      await seed(client, path, `sha256-${single.digest.slice(7)}`, fallback);
      const r = rule(org, {
        direction: "PULL",
        remote: { url: registry.url, username: "", password: "" },
        repoPattern: path,
        tagPattern: "3.*",
        destination: "hub",
      });
      const pushesBefore = wharf.pushes.length;

      const first = await run(r);
      assert.deepEqual(first.failures, []);
      const name = `${org.name}/hub/${path}`;
      const repo = (await wharf.resolver.resolve(name)).repo ?? assert.fail(`${name} not created`);
      assert.deepEqual(await wharf.content.tagNames(repo.uid, { limit: 10 }), ["3.19", "3.20"]);
      assert.equal(await wharf.content.tagDigest(repo.uid, "3.20"), multi.digest);
      for (const child of multi.children) assert.ok(await wharf.store.manifests.has(repo.uid, child.digest));
      const referrers = await wharf.content.referrers(repo.uid, single.digest, undefined);
      assert.deepEqual(
        referrers.map((x) => x.digest),
        [signature.digest],
      );
      for (const [digest, bytes] of multi.blobs) {
        const sink = new PassThrough();
        const read = buffer(sink);
        await wharf.content.pipeBlob(parseDigest(digest), sink);
        assert.deepEqual(await read, bytes);
      }
      const history = await wharf.store.tags.history({ repoUid: repo.uid, tagName: "3.19", limit: 10 });
      assert.deepEqual(
        history.map((h) => h.digest),
        [single.digest],
      );
      const pushes = wharf.pushes.slice(pushesBefore);
      assert.deepEqual(
        pushes
          .filter((p) => p.body.tag !== undefined)
          .map((p) => `${p.body.repository}:${p.body.tag}`)
          .sort(),
        [`${name}:3.19`, `${name}:3.20`],
      );
      assert.ok(pushes.every((p) => p.actor.subject === r.uid));

      const second = await run(r);
      assert.deepEqual(second.failures, []);
      assert.deepEqual(second.counters, {
        copiedManifests: 0,
        copiedBlobs: 0,
        copiedBytes: 0,
        skippedBlobs: 0,
      });

      // A glob reads the catalog.
      const globbed = await run({ ...r, repoPattern: `library/${org.name}-*`, destination: "globbed" });
      assert.deepEqual(globbed.failures, []);
      assert.ok((await wharf.resolver.resolve(`${org.name}/globbed/${path}`)).repo);
    });

    it("a bad password stops the run with one failure; the right one copies through Basic auth", async () => {
      const org = await newOrg();
      for (const tag of ["v1", "v2", "v3"]) {
        await wharf.push(`${org.name}/app`, tag, asManifest(buildImage(`${org.name}-${tag}`)));
      }
      const wrong = await run(
        rule(org, {
          remote: { url: secured.url, username: "alice", password: "wrong" },
          destination: org.name,
        }),
      );
      assert.ok(wrong.halted instanceof ReplicationHaltedError, String(wrong.halted));
      assert.equal(wrong.failures.length, 1);
      assert.equal(wrong.failures[0]?.reference, secured.url);
      assert.match(wrong.failures[0]?.message ?? "", /HTTP 401: the remote refused the credentials/);
      assert.doesNotMatch(wrong.failures[0]?.message ?? "", /wrong/);

      const right = await run(
        rule(org, {
          remote: { url: secured.url, username: "alice", password: "s3cret" },
          destination: org.name,
        }),
      );
      assert.deepEqual(right.failures, []);
      assert.equal(right.counters.copiedManifests, 3);
      const basic = `Basic ${Buffer.from("alice:s3cret").toString("base64")}`;
      assert.equal((await manifestAt(secured.url, `${org.name}/app`, "v3", basic)).status, 200);
    });
  });

  describe("a second Wharf (Bearer token flow)", () => {
    let remote: TestServer;
    let token: string;
    before(async () => {
      remote = await startTestServer();
      token = await remote.registryToken();
    });
    after(() => remote?.close());

    it("PUSH lands in the other Wharf with its referrers, PULL brings it back", async () => {
      const org = await newOrg();
      await remote.create("/iam/v2/groups", { name: `dst-${org.name}` });
      const image = asManifest(buildImage(`${org.name}-w`));
      const signature = buildSignature(image);
      await wharf.push(`${org.name}/app`, "v1", image);
      await wharf.push(`${org.name}/app`, signature.digest, signature);
      const credentials = { username: "_token", password: token };
      const pushed = await run(
        rule(org, {
          remote: { url: remote.registryUrl, ...credentials },
          destination: `dst-${org.name}/copies`,
        }),
      );
      assert.deepEqual(pushed.failures, []);
      const name = `dst-${org.name}/copies/app`;
      assert.equal(
        (await manifestAt(remote.registryUrl, name, "v1", `Bearer ${token}`)).digest,
        image.digest,
      );
      const referrers = await remote.registry(`/v2/${name}/referrers/${image.digest}`, { token });
      const listed = (await referrers.json()) as { manifests: { digest: string }[] };
      assert.deepEqual(
        listed.manifests.map((m) => m.digest),
        [signature.digest],
      );
      const tags = await remote.registry(`/v2/${name}/tags/list`, { token });
      assert.deepEqual(
        ((await tags.json()) as { tags: string[] }).tags,
        ["v1"],
        "Wharf needs no fallback tag",
      );

      const pulled = await run(
        rule(org, {
          direction: "PULL",
          remote: { url: remote.registryUrl, ...credentials },
          repoPattern: name,
          destination: "back",
        }),
      );
      assert.deepEqual(pulled.failures, []);
      const back =
        (await wharf.resolver.resolve(`${org.name}/back/${name}`)).repo ?? assert.fail("not pulled");
      assert.equal(await wharf.content.tagDigest(back.uid, "v1"), image.digest);
      assert.equal((await wharf.content.referrers(back.uid, image.digest, undefined)).length, 1);
    });

    it("a remote over its storage quota answers 403: each tag's failure carries its message", async () => {
      const org = await newOrg();
      const tiny = await remote.create("/iam/v2/groups", { name: `tiny-${org.name}` });
      const quota = await remote.api(`/registry/v2/quotas/${tiny}`, {
        method: "PATCH",
        token: remote.adminToken,
        body: { storageBytes: "64" },
      });
      assert.equal(quota.status, 200, await quota.text());
      for (const tag of ["v1", "v2"]) {
        await wharf.push(
          `${org.name}/app`,
          tag,
          asManifest(buildImage(`${org.name}-${tag}`, ["x".repeat(500)])),
        );
      }
      const refused = await run(
        rule(org, {
          remote: { url: remote.registryUrl, username: "_token", password: token },
          destination: `tiny-${org.name}`,
        }),
      );
      assert.equal(refused.halted, undefined, "the remote answered before refusing: the run goes on");
      assert.deepEqual(
        refused.failures.map((f) => f.reference),
        [`${org.name}/app:v1`, `${org.name}/app:v2`],
      );
      for (const f of refused.failures) assert.match(f.message, /quota exceeded/);
    });
  });
});

/** A remote client for a loopback registry without credentials. */
function remoteOf(url: string): RemoteRegistry {
  return createRemoteRegistry({ url, policy: LOOPBACK, allowHttp: true, clock: systemClock });
}

/** Pushes `m` (blobs, children by digest, then it) with the remote client. */
async function seed(
  remote: RemoteRegistry,
  name: string,
  reference: string,
  m: BuiltManifest,
): Promise<void> {
  for (const [digest, bytes] of m.blobs) {
    if (!(await remote.hasBlob(name, digest)))
      await remote.pushBlob(name, digest, bytes.length, Readable.from([bytes]));
  }
  for (const child of m.children) await seed(remote, name, child.digest, child);
  await remote.putManifest(name, reference, m.mediaType, m.manifest);
}

/** The OCI referrers fallback index listing `referrers`. */
function referrersIndex(
  referrers: BuiltManifest[],
): Pick<BuiltManifest, "digest" | "mediaType" | "manifest"> {
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_INDEX,
      manifests: referrers.map((r) => ({
        mediaType: r.mediaType,
        digest: r.digest,
        size: r.manifest.length,
        artifactType: COSIGN_SIGNATURE,
      })),
    }),
  );
  return { digest: sha256(manifest), mediaType: OCI_INDEX, manifest };
}
