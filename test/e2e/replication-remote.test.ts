import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { expectJson } from "../support/api-assertions.js";
import { forEachEngine } from "../support/databases.js";
import { type Distribution, distributionSkip, startDistribution } from "../support/distribution.js";
import { type ImageLayoutResult, writeImageLayout } from "../support/oci-layout.js";
import { runSkopeo, type SkopeoResult, skopeoSkip } from "../support/skopeo.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

interface Run {
  uid: string;
  state: string;
  trigger: string;
  copiedManifests?: string;
  copiedBlobs?: string;
  copiedBytes?: string;
  skippedBlobs?: string;
  errors?: { reference: string; message: string }[];
}

const MANIFEST_ACCEPT = [
  "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.oci.image.index.v1+json",
  "application/vnd.docker.distribution.manifest.v2+json",
].join(", ");

function ok(r: SkopeoResult, what: string): string {
  assert.equal(r.code, 0, `${what} failed: ${r.stderr}`);
  return r.stdout;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The digest distribution serves for `repo:reference`, undefined when it has none. */
async function remoteDigest(
  remote: Distribution,
  repo: string,
  reference: string,
): Promise<string | undefined> {
  const res = await fetch(`${remote.url}/v2/${repo}/manifests/${reference}`, {
    method: "HEAD",
    headers: { accept: MANIFEST_ACCEPT },
  });
  return res.status === 200 ? (res.headers.get("docker-content-digest") ?? undefined) : undefined;
}

const skip = skopeoSkip || distributionSkip;

forEachEngine("replication against a real registry (docker-registry)", (db) => {
  describe("PUSH on push, PULL, and a refusing remote", { skip }, () => {
    let wharf: TestServer;
    let remote: Distribution;
    let locked: Distribution;
    let work: string;
    let org: string;
    let host: string;
    let creds: string;
    let v1: ImageLayoutResult;

    const api = (path: string, init: { method?: string; body?: unknown } = {}) =>
      wharf.api(path, { ...init, token: wharf.adminToken });
    const createRule = (body: Record<string, unknown>) =>
      wharf.create(`/registry/v2/replicationRules/${org}`, body);
    const runNow = async (rule: string) =>
      expectJson<Run>(await api(`/registry/v2/replicationRules/${rule}:run`, { method: "POST", body: {} }));
    const ended = (uid: string) =>
      until(`run ${uid} to end`, async () => {
        const run = await expectJson<Run>(await api(`/registry/v2/replicationRuns/${uid}`));
        return run.state === "SUCCEEDED" || run.state === "FAILED" ? run : undefined;
      });

    before(async () => {
      const { databaseUrl } = await db.freshOptions();
      wharf = await startTestServer({
        ...(databaseUrl ? { databaseUrl } : {}),
        config: { eventsAllowLoopback: "true", eventsAllowHttp: "true" },
        replication: { pollMs: 100 },
      });
      remote = await startDistribution();
      locked = await startDistribution({ users: { bot: "right-password" } });
      host = new URL(wharf.registryUrl).host;
      creds = `_token:${await wharf.registryToken()}`;
      org = await wharf.create("/iam/v2/groups", { name: "acme" });
      work = await mkdtemp(join(tmpdir(), "wharf-replication-"));
      v1 = await writeImageLayout(join(work, "source"), {
        tag: "v1",
        files: { "etc/version": "1\n", "usr/bin/app": "#!/bin/sh\necho one\n" },
        layers: 2,
      });
    });
    after(async () => {
      await wharf?.close();
      await remote?.close();
      await locked?.close();
      if (work) await rm(work, { recursive: true, force: true });
    });

    it("a push to Wharf appears on the remote by ON_PUSH; a second run copies nothing", async () => {
      const rule = await createRule({
        name: "to-remote",
        direction: "PUSH",
        trigger: "ON_PUSH",
        remote: { url: remote.url },
        repoPattern: "team/**",
        destination: "mirror",
        enabled: true,
      });
      ok(
        await runSkopeo([
          "copy",
          "--dest-tls-verify=false",
          "--dest-creds",
          creds,
          `oci:${join(work, "source")}:v1`,
          `docker://${host}/acme/team/app:v1`,
        ]),
        "push to Wharf",
      );
      const digest = await until("the image on the remote", () =>
        remoteDigest(remote, "mirror/team/app", "v1"),
      );
      assert.equal(digest, v1.manifestDigest);
      const runs = await expectJson<{ runs: Run[] }>(await api(`/registry/v2/replicationRuns?rule=${rule}`));
      const first = await ended((runs.runs.at(-1) as Run).uid);
      assert.equal(first.trigger, "ON_PUSH");
      assert.equal(first.state, "SUCCEEDED", JSON.stringify(first.errors));
      assert.ok(Number(first.copiedBlobs) >= 3, "config and two layers sent");
      assert.ok(Number(first.copiedBytes) > 0);
      // The remote serves it whole (skopeo pulls and verifies every blob).
      ok(
        await runSkopeo([
          "copy",
          "--src-tls-verify=false",
          `docker://${remote.host}/mirror/team/app:v1`,
          `oci:${join(work, "back")}:v1`,
        ]),
        "pull from the remote",
      );
      const again = await ended((await runNow(rule)).uid);
      assert.equal(again.state, "SUCCEEDED", JSON.stringify(again.errors));
      assert.equal(again.copiedBlobs ?? "0", "0", "idempotent: nothing sent again");
      assert.equal(again.copiedBytes ?? "0", "0");
    });

    it("a PULL rule mirrors a remote repo with its tags into <org>/<destination>", async () => {
      for (const tag of ["1.0", "2.0"]) {
        ok(
          await runSkopeo([
            "copy",
            "--dest-tls-verify=false",
            `oci:${join(work, "source")}:v1`,
            `docker://${remote.host}/upstream/lib:${tag}`,
          ]),
          `push ${tag} to the remote`,
        );
      }
      const rule = await createRule({
        name: "from-remote",
        direction: "PULL",
        trigger: "MANUAL",
        remote: { url: remote.url },
        repoPattern: "upstream/lib",
        destination: "pulled",
        enabled: true,
      });
      const run = await ended((await runNow(rule)).uid);
      assert.equal(run.state, "SUCCEEDED", JSON.stringify(run.errors));
      const token = await wharf.registryToken();
      const tags = await expectJson<{ tags: string[] }>(
        await wharf.registry("/v2/acme/pulled/upstream/lib/tags/list", { token }),
      );
      assert.deepEqual(tags.tags.sort(), ["1.0", "2.0"]);
      const inspected = ok(
        await runSkopeo([
          "inspect",
          "--raw",
          "--tls-verify=false",
          "--creds",
          creds,
          `docker://${host}/acme/pulled/upstream/lib:2.0`,
        ]),
        "inspect in Wharf",
      );
      assert.ok(inspected.includes(v1.configDigest));
    });

    it("replicates to a second Wharf through its Bearer token flow", async () => {
      const second = await startTestServer({
        config: { eventsAllowLoopback: "true", eventsAllowHttp: "true" },
      });
      try {
        await second.create("/iam/v2/groups", { name: "dr" });
        const rule = await createRule({
          name: "to-second-wharf",
          direction: "PUSH",
          trigger: "MANUAL",
          // `_token` with a registry token as the password: Basic at /token, then Bearer.
          remote: { url: second.registryUrl, username: "_token", password: await second.registryToken() },
          repoPattern: "team/**",
          destination: "dr",
          enabled: true,
        });
        const run = await ended((await runNow(rule)).uid);
        assert.equal(run.state, "SUCCEEDED", JSON.stringify(run.errors));
        const head = await second.registry("/v2/dr/team/app/manifests/v1", {
          method: "HEAD",
          token: await second.registryToken(),
          headers: { accept: MANIFEST_ACCEPT },
        });
        assert.equal(head.status, 200);
        assert.equal(head.headers.get("docker-content-digest"), v1.manifestDigest);
      } finally {
        await second.close();
      }
    });

    it("a remote refusing the credentials shows in the run's errors (FAILED)", async () => {
      const rule = await createRule({
        name: "bad-password",
        direction: "PUSH",
        trigger: "MANUAL",
        remote: { url: locked.url, username: "bot", password: "wrong-password" },
        repoPattern: "team/**",
        enabled: true,
      });
      const run = await ended((await runNow(rule)).uid);
      assert.equal(run.state, "FAILED");
      assert.ok(run.errors && run.errors.length > 0, "the refusal is recorded");
      const said = JSON.stringify(run.errors);
      assert.match(said, /401|unauthori[sz]ed|credentials/i);
      assert.ok(!said.includes("wrong-password"), "the password is not in the errors");
      assert.equal(await remoteDigest(locked, "team/app", "v1"), undefined);
    });
  });
});
