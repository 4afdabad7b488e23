import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { decodeJwt } from "jose";
import { personWithRole } from "../support/registered-person.js";
import { type BuiltImage, ociErrorOf, pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

// The transparent mirror's name mapping over HTTP, with no client daemon (ADR 0053): which
// repository each kind of request is served from, the tokens `/token` issues for mirror names,
// and that another organization's members gain nothing through it. The mapped repositories hold
// content pushed straight into Wharf (no Upstream resource), so only the mapping is under test.

const OCI_ACCEPT = "application/vnd.oci.image.manifest.v1+json";

describe("transparent mirror: the name mapping", () => {
  let wharf: TestServer;
  let admin: string;
  let hubApp: BuiltImage;
  let quayApp: BuiltImage;
  let ownApp: BuiltImage;
  let acmeUid: string;

  before(async () => {
    wharf = await startTestServer({ config: { mirrorUpstream: "docker.io=acme/hub,quay.io=acme/quay" } });
    admin = await wharf.registryToken();
    acmeUid = await wharf.create("/iam/v2/groups", { name: "acme" });
    await wharf.create("/iam/v2/groups", { name: "bitnami" });
    hubApp = await pushImage(wharf, "acme/hub/library/app", "1", admin, "hub app");
    quayApp = await pushImage(wharf, "acme/quay/library/app", "1", admin, "quay app");
    ownApp = await pushImage(wharf, "bitnami/redis", "1", admin, "bitnami's own redis");
    await pushImage(wharf, "acme/hub/bitnami/redis", "1", admin, "hub's redis");
  });
  after(async () => wharf?.close());

  const manifestDigest = async (path: string, token = admin): Promise<string | null> => {
    const res = await wharf.registry(path, { token, headers: { accept: OCI_ACCEPT } });
    await res.arrayBuffer();
    return res.status === 200 ? res.headers.get("docker-content-digest") : `HTTP ${res.status}`;
  };

  it("serves ?ns= of a mapped host from its upstream, and of another host as usual", async () => {
    assert.equal(await manifestDigest("/v2/library/app/manifests/1?ns=docker.io"), hubApp.digest);
    assert.equal(await manifestDigest("/v2/library/app/manifests/1?ns=quay.io"), quayApp.digest);
    assert.equal(await manifestDigest("/v2/library/app/manifests/1?ns=Quay.IO"), quayApp.digest);
    assert.equal(await manifestDigest("/v2/bitnami/redis/manifests/1?ns=ghcr.io"), ownApp.digest);
    const line = wharf.logLines.findLast((l) => l.msg === "request" && l.ns === "ghcr.io");
    assert.equal(line?.mirroredTo, undefined, "an unmapped ns maps nothing");
  });

  it("serves a path without ns from docker.io's upstream unless an organization has its first name", async () => {
    assert.equal(await manifestDigest("/v2/library/app/manifests/1"), hubApp.digest);
    assert.equal(
      await manifestDigest("/v2/bitnami/redis/manifests/1"),
      ownApp.digest,
      "the organization wins",
    );
    assert.equal(
      await manifestDigest("/v2/bitnami/redis/manifests/1?ns=docker.io"),
      (await manifestDigest("/v2/acme/hub/bitnami/redis/manifests/1")) as string,
      "ns=docker.io reaches the Hub namespace the organization hides",
    );
    assert.equal(await manifestDigest("/v2/acme/hub/library/app/manifests/1"), hubApp.digest, "full path");
  });

  it("maps blobs, tag lists and referrers too", async () => {
    const blob = await wharf.registry(`/v2/library/app/blobs/${hubApp.configDigest}?ns=docker.io`, {
      token: admin,
    });
    assert.equal(blob.status, 200);
    assert.deepEqual(Buffer.from(await blob.arrayBuffer()), hubApp.blobs.get(hubApp.configDigest));
    const tags = await wharf.registry("/v2/library/app/tags/list", { token: admin });
    assert.equal(tags.status, 200);
    assert.deepEqual(((await tags.json()) as { tags: string[] }).tags, ["1"]);
    const referrers = await wharf.registry(`/v2/library/app/referrers/${hubApp.digest}?ns=quay.io`, {
      token: admin,
    });
    assert.equal(referrers.status, 200);
    await referrers.arrayBuffer();
    const unknown = await wharf.registry("/v2/library/nothing/manifests/1?ns=docker.io", { token: admin });
    assert.equal(unknown.status, 404);
    assert.match(
      (await ociErrorOf(unknown)).message,
      /acme\/hub\/library\/nothing/,
      "errors name the mapped repo",
    );
  });

  it("challenges with the mapped repository's scope", async () => {
    const res = await wharf.registry("/v2/library/app/manifests/1?ns=docker.io");
    assert.equal(res.status, 401);
    await res.arrayBuffer();
    assert.match(
      res.headers.get("www-authenticate") ?? "",
      /scope="repository:acme\/hub\/library\/app:pull"/,
    );
  });

  it("issues /token for a Hub name (Docker's own scope) as the mapped repository", async () => {
    const basic = `Basic ${Buffer.from(`_token:${admin}`).toString("base64")}`;
    const res = await wharf.registry(
      `/token?service=x&scope=${encodeURIComponent("repository:library/app:pull")}&scope=${encodeURIComponent("repository:acme/hub/library/app:pull")}`,
      { headers: { authorization: basic } },
    );
    assert.equal(res.status, 200);
    const { token } = (await res.json()) as { token: string };
    const access = decodeJwt(token).access as { name: string; actions: string[] }[];
    assert.deepEqual(
      access.map((a) => [a.name, a.actions]),
      [
        ["acme/hub/library/app", ["pull"]],
        ["acme/hub/library/app", ["pull"]],
      ],
    );
    assert.equal(await manifestDigest("/v2/library/app/manifests/1", token), hubApp.digest);
    const own = await wharf.registry(`/token?scope=${encodeURIComponent("repository:bitnami/redis:pull")}`, {
      headers: { authorization: basic },
    });
    const ownAccess = decodeJwt(((await own.json()) as { token: string }).token).access as { name: string }[];
    assert.deepEqual(
      ownAccess.map((a) => a.name),
      ["bitnami/redis"],
      "an organization's own name is not mapped",
    );
  });

  it("gives a member of another organization nothing through the mirror", async () => {
    const beta = await wharf.create("/iam/v2/groups", { name: "beta" });
    const outsider = await personWithRole(wharf, "outsider", beta, "registry.pull");
    const token = await wharf.registryToken(outsider.uid);
    const basic = `Basic ${Buffer.from(`_token:${token}`).toString("base64")}`;
    const res = await wharf.registry(`/token?scope=${encodeURIComponent("repository:library/app:pull")}`, {
      headers: { authorization: basic },
    });
    assert.equal(res.status, 200);
    const issued = (await res.json()) as { token: string };
    assert.deepEqual(decodeJwt(issued.token).access, [], "no pull granted on acme/hub/library/app");
    const denied = await wharf.registry("/v2/library/app/manifests/1?ns=docker.io", { token });
    assert.equal(denied.status, 403);
    assert.equal((await ociErrorOf(denied)).code, "DENIED");
    assert.equal(await manifestDigest("/v2/library/app/manifests/1", issued.token), "HTTP 401");
  });

  it("gives a puller of the organization the mirror", async () => {
    const puller = await personWithRole(wharf, "puller", acmeUid, "registry.pull");
    const token = await wharf.registryToken(puller.uid);
    assert.equal(await manifestDigest("/v2/library/app/manifests/1?ns=docker.io", token), hubApp.digest);
    assert.equal(await manifestDigest("/v2/library/app/manifests/1", token), hubApp.digest);
  });
});
