import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { systemClock } from "../../src/core/clock.js";
import { createSinkAddressPolicy } from "../../src/events/sink-address-policy.js";
import { createRemoteRegistry } from "../../src/registry/remote/remote-client.js";
import {
  type RemoteCredentials,
  RemoteError,
  type RemoteErrorKind,
  type RemoteRegistry,
} from "../../src/registry/remote/remote-registry.js";
import { type Distribution, distributionSkip, startDistribution } from "../support/distribution.js";
import { startHostileRegistry } from "../support/hostile-registry.js";
import {
  blob,
  collect,
  image,
  index,
  OCI_INDEX,
  pushImage,
  readAll,
  sha256,
} from "../support/remote-content.js";
import { probeRemote } from "../support/remote-probe.js";
import { makeThrowawayCa, opensslSkip } from "../support/throwaway-ca.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const LOOPBACK = createSinkAddressPolicy({ allow: [], allowLoopback: true });

function remoteOf(url: string, credentials?: RemoteCredentials, pageSize?: number): RemoteRegistry {
  return createRemoteRegistry({
    url,
    credentials,
    policy: LOOPBACK,
    allowHttp: true,
    clock: systemClock,
    timeoutMs: 10_000,
    pageSize,
  });
}

async function kindOf(promise: Promise<unknown>): Promise<RemoteErrorKind> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof RemoteError, String(err));
    return err.kind;
  }
  assert.fail("expected a RemoteError");
}

describe("remote client against docker-registry (CNCF distribution)", { skip: distributionSkip }, () => {
  let open: Distribution;
  let remote: RemoteRegistry;
  const app = image([2048, 70_000]);

  before(async () => {
    open = await startDistribution();
    remote = remoteOf(open.url, undefined, 2);
  });
  after(async () => {
    await remote?.close();
    await open?.close();
  });

  it("pushes blobs and a manifest, then reads them back verified (head, get, blob)", async () => {
    assert.equal(await remote.hasBlob("team/app", app.layers[0]?.digest as string), false);
    assert.equal(await pushImage(remote, "team/app", app, "v1"), app.digest);
    assert.equal(await remote.hasBlob("team/app", app.layers[0]?.digest as string), true);
    assert.deepEqual(await remote.headManifest("team/app", "v1"), {
      digest: app.digest,
      mediaType: app.mediaType,
      size: app.manifest.length,
    });
    assert.equal((await remote.headManifest("team/app", app.digest))?.digest, app.digest);
    const byTag = await remote.getManifest("team/app", "v1");
    assert.equal(byTag.digest, app.digest);
    assert.deepEqual(Buffer.from(byTag.content), app.manifest);
    const layer = app.layers[1];
    assert.ok(layer);
    const fetched = await remote.getBlob("team/app", layer.digest);
    assert.equal(fetched.size, layer.bytes.length);
    assert.deepEqual(await readAll(fetched.body), layer.bytes);
  });

  it("says what is missing: no manifest, no blob, no repo", async () => {
    assert.equal(await remote.headManifest("team/app", "nope"), undefined);
    assert.equal(await kindOf(remote.getManifest("team/app", "nope")), "not-found");
    assert.equal(await kindOf(remote.getBlob("team/app", sha256(Buffer.from("absent")))), "not-found");
    assert.equal(await kindOf(collect(remote.tags("no/such"))), "not-found");
  });

  it("mounts a blob across repos, and says false (cancelling the upload) when the source lacks it", async () => {
    const layer = app.layers[0];
    assert.ok(layer);
    assert.equal(await remote.mountBlob("team/copy", layer.digest, "team/app"), true);
    assert.equal(await remote.hasBlob("team/copy", layer.digest), true);
    const absent = blob(10);
    assert.equal(await remote.mountBlob("team/copy", absent.digest, "team/app"), false);
    assert.equal(await remote.hasBlob("team/copy", absent.digest), false);
  });

  it("puts an index over two images and reads it back as an index", async () => {
    const arm = image([512]);
    await pushImage(remote, "team/multi", app);
    await pushImage(remote, "team/multi", arm);
    const idx = index([app, arm]);
    assert.equal(await remote.putManifest("team/multi", "latest", idx.mediaType, idx.content), idx.digest);
    const got = await remote.getManifest("team/multi", "latest");
    assert.equal(got.mediaType, OCI_INDEX);
    assert.equal(got.digest, idx.digest);
  });

  it("lists tags across pages (n=2) and the catalog", async () => {
    for (const tag of ["v2", "v3", "v4", "v5"]) {
      await remote.putManifest("team/app", tag, app.mediaType, app.manifest);
    }
    assert.deepEqual((await collect(remote.tags("team/app"))).sort(), ["v1", "v2", "v3", "v4", "v5"]);
    assert.deepEqual((await collect(remote.catalog())).sort(), ["team/app", "team/copy", "team/multi"]);
  });

  it("a URL prefix is a namespace on the remote", async () => {
    const team = remoteOf(`${open.url}/team`, undefined, 1);
    try {
      assert.equal((await team.getManifest("app", "v1")).digest, app.digest);
      assert.deepEqual((await collect(team.catalog())).sort(), ["app", "copy", "multi"]);
    } finally {
      await team.close();
    }
  });

  it("finds referrers through the fallback tag (distribution 2.8 has no referrers API)", async () => {
    assert.deepEqual(await remote.referrers("team/app", app.digest), []);
    const sbom = image([64], {
      artifactType: "application/spdx+json",
      subject: { mediaType: app.mediaType, digest: app.digest, size: app.manifest.length },
    });
    await pushImage(remote, "team/app", sbom);
    const fallback = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI_INDEX,
        manifests: [
          {
            mediaType: sbom.mediaType,
            digest: sbom.digest,
            size: sbom.manifest.length,
            artifactType: "application/spdx+json",
          },
        ],
      }),
    );
    await remote.putManifest("team/app", `sha256-${app.digest.slice(7)}`, OCI_INDEX, fallback);
    assert.deepEqual(await remote.referrers("team/app", app.digest), [
      {
        mediaType: sbom.mediaType,
        digest: sbom.digest,
        size: sbom.manifest.length,
        artifactType: "application/spdx+json",
      },
    ]);
  });

  it("is unreachable while stopped, and answers again after a restart on the same port and storage", async () => {
    await open.stop();
    assert.equal(await kindOf(remote.getManifest("team/app", "v1")), "unreachable");
    await open.restart();
    assert.equal((await remote.getManifest("team/app", "v1")).digest, app.digest);
  });
});

describe("remote client against docker-registry with htpasswd Basic auth", { skip: distributionSkip }, () => {
  let locked: Distribution;
  const password = "c0rrect-horse";

  before(async () => {
    locked = await startDistribution({ users: { alice: password } });
  });
  after(() => locked?.close());

  it("pushes and pulls with the right password", async () => {
    const remote = remoteOf(locked.url, { username: "alice", password });
    try {
      const img = image([300]);
      await pushImage(remote, "alice/app", img, "v1");
      assert.equal((await remote.getManifest("alice/app", "v1")).digest, img.digest);
      assert.deepEqual(await collect(remote.catalog()), ["alice/app"]);
    } finally {
      await remote.close();
    }
  });

  it("is unauthorized with a wrong password or none, and the password is in no message", async () => {
    for (const credentials of [{ username: "alice", password: "wr0ng-horse" }, undefined]) {
      const remote = remoteOf(locked.url, credentials);
      try {
        await remote.getManifest("alice/app", "v1");
        assert.fail("expected unauthorized");
      } catch (err) {
        assert.ok(err instanceof RemoteError);
        assert.equal(err.kind, "unauthorized");
        assert.equal(err.status, 401);
        assert.match(err.message, new RegExp(`alice/app:v1 at ${locked.url}`));
        assert.ok(!err.message.includes("wr0ng-horse") && !err.message.includes(password));
      } finally {
        await remote.close();
      }
    }
  });
});

describe("remote client against a second Wharf (Bearer token flow)", () => {
  let wharf: TestServer;
  let token: string;

  before(async () => {
    wharf = await startTestServer();
    await wharf.create("/iam/v2/groups", { name: "acme" });
    token = await wharf.registryToken();
  });
  after(() => wharf?.close());

  it("pushes and pulls with the token flow (username and password exchanged at Wharf's /token)", async () => {
    const challenge = await fetch(`${wharf.registryUrl}/v2/acme/app/manifests/v1`);
    assert.equal(challenge.status, 401);
    assert.match(challenge.headers.get("www-authenticate") ?? "", /^Bearer realm="[^"]+\/token"/);
    const remote = remoteOf(wharf.registryUrl, { username: "_token", password: token });
    try {
      const img = image([1000, 5000]);
      assert.equal(await pushImage(remote, "acme/app", img, "v1"), img.digest);
      assert.equal((await remote.getManifest("acme/app", "v1")).digest, img.digest);
      assert.equal((await remote.headManifest("acme/app", "v1"))?.digest, img.digest);
      const layer = img.layers[1];
      assert.ok(layer);
      assert.deepEqual(await readAll((await remote.getBlob("acme/app", layer.digest)).body), layer.bytes);
      assert.deepEqual(await collect(remote.tags("acme/app")), ["v1"]);
      assert.equal(await remote.mountBlob("acme/other", layer.digest, "acme/app"), true);
    } finally {
      await remote.close();
    }
  });

  it("lists referrers through the OCI referrers API", async () => {
    const remote = remoteOf(wharf.registryUrl, { username: "_token", password: token });
    try {
      const subject = image([100]);
      await pushImage(remote, "acme/signed", subject, "v1");
      const sig = image([50], {
        artifactType: "application/vnd.example.sig",
        subject: { mediaType: subject.mediaType, digest: subject.digest, size: subject.manifest.length },
      });
      await pushImage(remote, "acme/signed", sig);
      const found = await remote.referrers("acme/signed", subject.digest);
      assert.deepEqual(
        found.map((d) => [d.digest, d.artifactType]),
        [[sig.digest, "application/vnd.example.sig"]],
      );
    } finally {
      await remote.close();
    }
  });

  it("is unauthorized with a bad password, and anonymous pulls of a private repo are refused", async () => {
    const bad = remoteOf(wharf.registryUrl, { username: "_token", password: "not-a-jwt-secret" });
    const anonymous = remoteOf(wharf.registryUrl);
    try {
      const err = await bad.getManifest("acme/app", "v1").catch((e: unknown) => e);
      assert.ok(err instanceof RemoteError);
      assert.equal(err.kind, "unauthorized");
      assert.ok(!err.message.includes("not-a-jwt-secret"), err.message);
      const kind = await kindOf(anonymous.getManifest("acme/app", "v1"));
      assert.ok(kind === "unauthorized" || kind === "denied" || kind === "not-found", kind);
    } finally {
      await bad.close();
      await anonymous.close();
    }
  });
});

describe("remote client over https (child process trusting a throwaway CA)", { skip: opensslSkip }, () => {
  let dir: string;
  let close: () => Promise<void> = async () => undefined;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "wharf-remote-tls-"));
  });
  after(async () => {
    await close();
    await rm(dir, { recursive: true, force: true });
  });

  it("refuses a redirect from https to plain http when allowHttp is false, without connecting there", async () => {
    const ca = await makeThrowawayCa(dir);
    const leaf = await ca.issue("registry");
    const content = blob(4000);
    const plain = await startHostileRegistry((_req, res) => {
      res.writeHead(200, { "content-length": content.bytes.length });
      res.end(content.bytes);
    });
    const tls = createHttpsServer(
      { cert: await readFile(leaf.certFile), key: await readFile(leaf.keyFile) },
      (_req, res) => {
        res.writeHead(302, { location: `${plain.url}/blob` });
        res.end();
      },
    );
    await new Promise<void>((resolve) => tls.listen(0, "127.0.0.1", resolve));
    close = async () => {
      tls.closeAllConnections();
      await new Promise((resolve) => tls.close(resolve));
      await plain.close();
    };
    const url = `https://127.0.0.1:${(tls.address() as AddressInfo).port}`;
    const refused = await probeRemote(ca.certFile, {
      url,
      allowHttp: false,
      repo: "app",
      digest: content.digest,
    });
    assert.ok("kind" in refused, JSON.stringify(refused));
    assert.equal(refused.kind, "address-refused");
    assert.match(refused.message, /redirected to http:\/\/127\.0\.0\.1:\d+\): .* is plain http/);
    assert.equal(plain.connections(), 0);
    // The same redirect is followed when plain http is allowed: the https leg itself works.
    const followed = await probeRemote(ca.certFile, {
      url,
      allowHttp: true,
      repo: "app",
      digest: content.digest,
    });
    assert.deepEqual(followed, { ok: true, bytes: 4000 });
  });
});
