import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { newChildUid } from "../../src/core/uidp.js";
import { expectJson } from "../support/api-assertions.js";
import { type CountingProxy, startCountingProxy } from "../support/counting-proxy.js";
import { forEachEngine } from "../support/databases.js";
import { type Distribution, distributionSkip, startDistribution } from "../support/distribution.js";
import {
  type ImageLayoutResult,
  layoutBlob,
  type MultiArchLayoutResult,
  writeImageLayout,
  writeMultiArchLayout,
} from "../support/oci-layout.js";
import { podmanSandbox } from "../support/podman.js";
import { personWithRole } from "../support/registered-person.js";
import { commandAvailable, runSkopeo, type SkopeoResult, skopeoSkip } from "../support/skopeo.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const skip = skopeoSkip || distributionSkip;
const TAG_TTL_MS = 1500;

function ok(r: SkopeoResult, what: string): string {
  assert.equal(r.code, 0, `${what} failed: ${r.stderr}`);
  return r.stdout;
}

/** Polls `check` until it returns a value other than undefined, or fails after `ms`. */
async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

forEachEngine("pull-through cache against a real docker-registry", (db) => {
  describe("pulls", { skip }, () => {
    let upstream: Distribution;
    let proxy: CountingProxy;
    let wharf: TestServer;
    let work: string;
    let source: string;
    let host: string;
    let token: string;
    let acme: string;
    let v1: ImageLayoutResult;
    let v2: ImageLayoutResult;
    let multi: MultiArchLayoutResult;

    const seed = async (ref: string, dest: string) =>
      ok(
        await runSkopeo([
          "copy",
          "--all",
          "--dest-tls-verify=false",
          `oci:${source}:${ref}`,
          `docker://${upstream.host}/${dest}`,
        ]),
        `seeding ${dest}`,
      );
    const pull = (reference: string, dest: string, extra: string[] = []) =>
      runSkopeo([
        "copy",
        ...extra,
        "--src-tls-verify=false",
        "--src-creds",
        `_token:${token}`,
        `docker://${host}/${reference}`,
        `oci:${join(work, dest)}:x`,
      ]);
    const manifestDigest = async (name: string, reference: string) => {
      const res = await wharf.registry(`/v2/${name}/manifests/${reference}`, {
        token,
        headers: {
          accept: "application/vnd.oci.image.manifest.v1+json,application/vnd.oci.image.index.v1+json",
        },
      });
      await res.arrayBuffer();
      return res.status === 200
        ? (res.headers.get("docker-content-digest") ?? undefined)
        : `status ${res.status}`;
    };

    before(async () => {
      upstream = await startDistribution();
      proxy = await startCountingProxy(upstream.url);
      const databaseUrl = db.engine === "postgres" ? (await db.freshOptions()).databaseUrl : undefined;
      wharf = await startTestServer({
        ...(databaseUrl ? { databaseUrl } : {}),
        config: { eventsAllowLoopback: "true", eventsAllowHttp: "true" },
      });
      host = new URL(wharf.registryUrl).host;
      token = await wharf.registryToken();
      acme = await wharf.create("/iam/v2/groups", { name: "acme" });
      const now = Date.now();
      await wharf.store.upstreams.insert({
        uid: newChildUid(acme),
        orgUid: acme,
        name: "hub",
        url: proxy.url,
        username: "",
        passwordSealed: "",
        tagTtlMs: TAG_TTL_MS,
        createTime: now,
        updateTime: now,
      });
      work = await mkdtemp(join(tmpdir(), "wharf-pull-through-"));
      source = join(work, "source");
      v1 = await writeImageLayout(source, {
        tag: "v1",
        files: { "etc/version": "1\n", "bin/app": "one\n" },
        layers: 2,
      });
      v2 = await writeImageLayout(source, {
        tag: "v2",
        files: { "etc/version": "2\n", "bin/app": "two\n" },
        layers: 2,
      });
      multi = await writeMultiArchLayout(source, {
        tag: "multi",
        platforms: [
          { architecture: "amd64", os: "linux", files: { "arch.txt": "amd64\n" } },
          {
            architecture: "arm64",
            os: "linux",
            files: { "arch.txt": "arm64\n", "lib/x.so": Buffer.alloc(4096, 7) },
          },
        ],
      });
      await seed("v1", "library/app:v1");
      await seed("v1", "library/app:moving");
      await seed("multi", "library/multi:latest");
      for (let i = 0; i < 3; i++) {
        await writeImageLayout(source, {
          tag: `storm${i}`,
          files: { "storm.txt": `storm ${i}\n` },
          layers: 3,
        });
      }
      await seed("storm0", "library/storm:cold");
    });
    after(async () => {
      await wharf?.close();
      await proxy?.close();
      await upstream?.close();
      if (work) await rm(work, { recursive: true, force: true });
    });

    it("skopeo pulls by tag through the cache, recording repo, folders and tag; a second pull is local", async () => {
      const before = proxy.requests.length;
      ok(await pull("acme/hub/library/app:v1", "by-tag"), "pull by tag");
      const fetched = proxy.requests.slice(before);
      for (const blob of [v1.configDigest, ...v1.layerDigests]) {
        assert.equal(fetched.filter((r) => r === `GET /v2/library/app/blobs/${blob}`).length, 1, blob);
      }
      assert.equal(await manifestDigest("acme/hub/library/app", "v1"), v1.manifestDigest);
      const repos = await expectJson<{ repos?: { uid: string; name: string }[] }>(
        await wharf.api(`/registry/v2/repos?uidp.descendants_of=${acme}&name=app`, {
          token: wharf.adminToken,
        }),
      );
      assert.equal(repos.repos?.length, 1, "the repo was created under acme/hub/library");
      const again = proxy.requests.length;
      ok(await pull("acme/hub/library/app:v1", "by-tag-again"), "second pull");
      assert.deepEqual(
        proxy.requests.slice(again).filter((r) => r.startsWith("GET") && r.includes("/blobs/")),
        [],
        "no blob is fetched twice",
      );
    });

    it("pulls by digest, and a stored digest never asks the upstream", async () => {
      ok(await pull(`acme/hub/library/app@${v1.manifestDigest}`, "by-digest"), "pull by digest");
      const before = proxy.requests.length;
      assert.equal(await manifestDigest("acme/hub/library/app", v1.manifestDigest), v1.manifestDigest);
      assert.deepEqual(proxy.requests.slice(before), []);
    });

    it("a multi-arch index brings its child manifests; pulling one platform fetches only its blobs", async () => {
      const before = proxy.requests.length;
      ok(await pull("acme/hub/library/multi:latest", "arm", ["--override-arch", "arm64"]), "pull arm64");
      const fetched = proxy.requests.slice(before);
      const [amd, arm] = multi.platforms;
      assert.ok(amd && arm);
      const blobsOf = (digest: string) => {
        const m = JSON.parse(layoutBlob(source, digest).toString()) as {
          config: { digest: string };
          layers: { digest: string }[];
        };
        return [m.config.digest, ...m.layers.map((l) => l.digest)];
      };
      for (const blob of blobsOf(arm.manifestDigest)) {
        assert.equal(fetched.filter((r) => r === `GET /v2/library/multi/blobs/${blob}`).length, 1, blob);
      }
      for (const blob of blobsOf(amd.manifestDigest)) {
        assert.equal(fetched.filter((r) => r.endsWith(`/blobs/${blob}`)).length, 0, `amd64 ${blob}`);
      }
      const local = proxy.requests.length;
      for (const p of [amd, arm]) {
        assert.equal(await manifestDigest("acme/hub/library/multi", p.manifestDigest), p.manifestDigest);
      }
      assert.deepEqual(proxy.requests.slice(local), [], "both children were recorded with the index");
    });

    it("podman pulls through the cache", {
      skip: !commandAvailable("podman") && "podman not installed",
    }, async () => {
      // podman refuses a run root path over 50 characters: a short folder of its own.
      const podmanWork = await mkdtemp(join(tmpdir(), "wpt-"));
      try {
        const { podman, policy } = await podmanSandbox(podmanWork);
        const r = await podman([
          "pull",
          "--signature-policy",
          policy,
          "--tls-verify=false",
          "--creds",
          `_token:${token}`,
          `${host}/acme/hub/library/app:v1`,
        ]);
        assert.equal(r.code, 0, r.stderr);
        const images = await podman(["images", "--format", "{{.Digest}}"]);
        assert.match(images.stdout, new RegExp(v1.manifestDigest.replace("sha256:", "")));
      } finally {
        await rm(podmanWork, { recursive: true, force: true });
      }
    });

    it("20 parallel cold pulls make exactly one upstream GET per manifest and per blob", async () => {
      const name = "acme/hub/library/storm";
      const before = proxy.requests.length;
      const accept = "application/vnd.oci.image.manifest.v1+json";
      const one = async () => {
        const res = await wharf.registry(`/v2/${name}/manifests/cold`, { token, headers: { accept } });
        assert.equal(res.status, 200);
        const manifest = (await res.json()) as { config: { digest: string }; layers: { digest: string }[] };
        const digests = [manifest.config.digest, ...manifest.layers.map((l) => l.digest)];
        await Promise.all(
          digests.map(async (d) => {
            const blob = await wharf.registry(`/v2/${name}/blobs/${d}`, { token });
            assert.equal(blob.status, 200, d);
            const bytes = Buffer.from(await blob.arrayBuffer());
            assert.equal(
              `sha256:${(await import("node:crypto")).createHash("sha256").update(bytes).digest("hex")}`,
              d,
            );
          }),
        );
        return digests;
      };
      const results = await Promise.all(Array.from({ length: 20 }, one));
      const gets = proxy.requests.slice(before).filter((r) => r.startsWith("GET"));
      const manifestGets = gets.filter((r) => r.includes("/manifests/"));
      // Besides the manifest: one look for its referrers (the API, then the `sha256-<hex>` fallback tag).
      assert.deepEqual(
        manifestGets.filter((r) => !r.includes("/manifests/sha256-")),
        ["GET /v2/library/storm/manifests/cold"],
        gets.join("\n"),
      );
      assert.equal(new Set(manifestGets).size, manifestGets.length, gets.join("\n"));
      assert.equal(gets.filter((r) => r.includes("/referrers/")).length, 1, gets.join("\n"));
      for (const d of results[0] ?? []) {
        assert.equal(gets.filter((r) => r === `GET /v2/library/storm/blobs/${d}`).length, 1, d);
      }
    });

    it("moves with the upstream's tag after tagTtl, both digests in Wharf's tag history", async () => {
      assert.equal(await manifestDigest("acme/hub/library/app", "moving"), v1.manifestDigest);
      await seed("v2", "library/app:moving");
      await until("the new digest", async () => {
        const d = await manifestDigest("acme/hub/library/app", "moving");
        return d === v2.manifestDigest ? d : undefined;
      });
      const history = await expectJson<{ history: { digest: string }[] }>(
        await wharf.registry("/v2/acme/hub/library/app/_service/history/moving", { token }),
      );
      assert.deepEqual(
        history.history.map((h) => h.digest),
        [v1.manifestDigest, v2.manifestDigest],
      );
    });

    it("anonymous pulls are challenged, and a token of another organization is refused", async () => {
      const anonymous = await wharf.registry("/v2/acme/hub/library/app/manifests/v1");
      assert.equal(anonymous.status, 401);
      const globex = await wharf.create("/iam/v2/groups", { name: "globex" });
      const outsider = await personWithRole(wharf, "outsider", globex, "registry.pull");
      const outsiderToken = await wharf.registryToken(outsider.uid);
      const before = proxy.requests.length;
      for (const path of [
        "/v2/acme/hub/library/app/manifests/v1",
        "/v2/acme/hub/library/never/manifests/v1",
        `/v2/acme/hub/library/app/blobs/${v1.layerDigests[0]}`,
      ]) {
        const res = await wharf.registry(path, { token: outsiderToken });
        assert.ok(res.status === 401 || res.status === 403, `${path}: ${res.status}`);
      }
      assert.deepEqual(proxy.requests.slice(before), [], "nothing was asked of the upstream");
      const insider = await personWithRole(wharf, "insider", acme, "registry.pull");
      const res = await wharf.registry("/v2/acme/hub/library/app/manifests/v1", {
        token: await wharf.registryToken(insider.uid),
        headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
      });
      assert.equal(res.status, 200);
    });

    it("with the upstream stopped, cached content is served by tag and digest, with one warning per TTL", async () => {
      await upstream.stop();
      try {
        const warnings = () =>
          wharf.logLines.filter(
            (l) => l.level === "warn" && l.msg === "upstream failed: serving the cached copy",
          );
        const before = warnings().length;
        // Pull until the tag's TTL has passed and the failed HEAD shows: the copy is served meanwhile.
        await until("the warning", async () => {
          ok(
            await pull("acme/hub/library/app:v1", `offline-${Date.now()}`),
            "pull while the upstream is down",
          );
          return warnings().length > before ? true : undefined;
        });
        for (let i = 0; i < 5; i++) {
          assert.equal(await manifestDigest("acme/hub/library/app", "v1"), v1.manifestDigest);
        }
        assert.equal(warnings().length, before + 1, "one warning, not one per request");
        ok(await pull(`acme/hub/library/app@${v1.manifestDigest}`, "offline-digest"), "by digest");
        const never = await wharf.registry("/v2/acme/hub/library/never/manifests/v1", { token });
        assert.equal(never.status, 502);
        const body = (await never.json()) as { errors: { message: string }[] };
        assert.match(body.errors[0]?.message ?? "", /acme\/hub/);
      } finally {
        await upstream.restart();
      }
    });
  });
});
