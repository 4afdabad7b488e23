import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { onOneEngine } from "../support/databases.js";
import { type ImageLayoutResult, writeImageLayout } from "../support/oci-layout.js";
import { podmanSandbox } from "../support/podman.js";
import { commandAvailable, runSkopeo, skopeoSkip } from "../support/skopeo.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

// What people see: skopeo and podman pushes that would move an immutable tag fail with the
// registry's message, naming the tag and the rule. The engine cannot change this (the store part
// runs on both engines in immutable-tags.test.ts).
onOneEngine("immutable tags as skopeo and podman users see them", () => {
  describe("pushes with real clients", { skip: skopeoSkip }, () => {
    let wharf: TestServer;
    let work: string;
    let source: string;
    let host: string;
    let creds: string;
    let ruleUid: string;
    let v1: ImageLayoutResult;

    before(async () => {
      wharf = await startTestServer();
      host = new URL(wharf.registryUrl).host;
      creds = `_token:${await wharf.registryToken()}`;
      const acme = await wharf.create("/iam/v2/groups", { name: "acme" });
      work = await mkdtemp(join(tmpdir(), "wharf-immutable-clients-"));
      source = join(work, "source");
      v1 = await writeImageLayout(source, { tag: "v1", files: { "etc/version": "1\n" }, layers: 1 });
      await writeImageLayout(source, { tag: "v2", files: { "etc/version": "2\n" }, layers: 1 });
      const copy = (from: string, to: string) =>
        runSkopeo([
          "copy",
          "--dest-tls-verify=false",
          "--dest-creds",
          creds,
          `oci:${source}:${from}`,
          `docker://${host}/acme/app:${to}`,
        ]);
      for (const [from, to] of [
        ["v1", "v1.2"],
        ["v2", "next"],
      ] as const) {
        const pushed = await copy(from, to);
        assert.equal(pushed.code, 0, pushed.stderr);
      }
      ruleUid = await wharf.create(`/registry/v2/immutabilityRules/${acme}`, { tagPatterns: ["v*"] });
    });
    after(async () => {
      await wharf?.close();
      if (work) await rm(work, { recursive: true, force: true });
    });

    it("skopeo: moving the tag fails with the rule named; pushing its digest again succeeds", async () => {
      const ref = `docker://${host}/acme/app:v1.2`;
      const moved = await runSkopeo([
        "copy",
        "--dest-tls-verify=false",
        "--dest-creds",
        creds,
        `oci:${source}:v2`,
        ref,
      ]);
      assert.notEqual(moved.code, 0);
      assert.ok(
        moved.stderr.includes(`tag v1.2 of acme/app is immutable (rule ${ruleUid})`),
        `skopeo's stderr names the tag and the rule: ${moved.stderr}`,
      );
      const again = await runSkopeo([
        "copy",
        "--dest-tls-verify=false",
        "--dest-creds",
        creds,
        `oci:${source}:v1`,
        ref,
      ]);
      assert.equal(again.code, 0, again.stderr);
      const inspect = await runSkopeo(["inspect", "--tls-verify=false", "--creds", creds, ref]);
      assert.equal(inspect.code, 0, inspect.stderr);
      assert.equal((JSON.parse(inspect.stdout) as { Digest: string }).Digest, v1.manifestDigest);
      const deleted = await runSkopeo(["delete", "--tls-verify=false", "--creds", creds, ref]);
      assert.notEqual(deleted.code, 0);
      assert.ok(deleted.stderr.includes(`is immutable (rule ${ruleUid})`), deleted.stderr);
    });

    it("podman: pushing another image to the tag fails with the rule named", {
      skip: commandAvailable("podman") ? false : "podman not installed: apt-get install podman",
    }, async () => {
      const { podman, policy } = await podmanSandbox(work);
      const flags = ["--tls-verify=false", "--creds", creds, "--signature-policy", policy];
      const pull = await podman(["pull", ...flags, `${host}/acme/app:next`]);
      assert.equal(pull.code, 0, pull.stderr);
      const push = await podman([
        "push",
        ...flags,
        `${host}/acme/app:next`,
        `docker://${host}/acme/app:v1.2`,
      ]);
      assert.notEqual(push.code, 0, push.stdout);
      assert.ok(
        push.stderr.includes(`tag v1.2 of acme/app is immutable (rule ${ruleUid})`),
        `podman's stderr names the tag and the rule: ${push.stderr}`,
      );
      // An unprotected tag takes the same push.
      const free = await podman([
        "push",
        ...flags,
        `${host}/acme/app:next`,
        `docker://${host}/acme/app:latest`,
      ]);
      assert.equal(free.code, 0, free.stderr);
    });
  });
});
