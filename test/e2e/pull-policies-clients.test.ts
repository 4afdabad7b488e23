import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { onOneEngine } from "../support/databases.js";
import { startDocker } from "../support/docker.js";
import { writeImageLayout } from "../support/oci-layout.js";
import { podmanSandbox } from "../support/podman.js";
import { personWithRole } from "../support/registered-person.js";
import { commandAvailable, runSkopeo, skopeoSkip } from "../support/skopeo.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

// What people see: skopeo, podman and docker pulls a pull policy refuses fail with the registry's
// message, naming the policy and what to do. The engine cannot change this (the evaluation runs on
// both engines in pull-policies.test.ts).
onOneEngine("pull policies as skopeo, podman and docker users see them", () => {
  describe("pulls with real clients", { skip: skopeoSkip }, () => {
    let wharf: TestServer;
    let work: string;
    let host: string;
    let creds: string;
    const MESSAGE = "denied by policy prod-gate (acme): no SBOM attached";

    before(async () => {
      wharf = await startTestServer();
      host = new URL(wharf.registryUrl).host;
      const acme = await wharf.create("/iam/v2/groups", { name: "acme" });
      const puller = await personWithRole(wharf, "pat", acme, "viewer");
      creds = `_token:${await wharf.registryToken(puller.uid)}`;
      work = await mkdtemp(join(tmpdir(), "wharf-policy-clients-"));
      const source = join(work, "source");
      await writeImageLayout(source, { tag: "v1", files: { "etc/version": "1\n" }, layers: 1 });
      const pushed = await runSkopeo([
        "copy",
        "--dest-tls-verify=false",
        "--dest-creds",
        `_token:${await wharf.registryToken()}`,
        `oci:${source}:v1`,
        `docker://${host}/acme/app:v1`,
      ]);
      assert.equal(pushed.code, 0, pushed.stderr);
      await wharf.create(`/registry/v2/policies/${acme}`, {
        name: "prod-gate",
        mode: "ENFORCE",
        requireSbom: true,
      });
    });
    after(async () => {
      await wharf?.close();
      if (work) await rm(work, { recursive: true, force: true });
    });

    it("skopeo: inspect fails with the policy's message", async () => {
      const inspect = await runSkopeo([
        "inspect",
        "--tls-verify=false",
        "--creds",
        creds,
        `docker://${host}/acme/app:v1`,
      ]);
      assert.notEqual(inspect.code, 0, inspect.stdout);
      assert.ok(inspect.stderr.includes(MESSAGE), `skopeo's stderr shows the refusal: ${inspect.stderr}`);
    });

    it("podman: pull fails with the policy's message", {
      skip: commandAvailable("podman") ? false : "podman not installed: apt-get install podman",
    }, async () => {
      const { podman, policy } = await podmanSandbox(work);
      const pull = await podman([
        "pull",
        "--tls-verify=false",
        "--creds",
        creds,
        "--signature-policy",
        policy,
        `${host}/acme/app:v1`,
      ]);
      assert.notEqual(pull.code, 0, pull.stdout);
      assert.ok(pull.stderr.includes(MESSAGE), `podman's stderr shows the refusal: ${pull.stderr}`);
    });

    it("docker: pull fails with the policy's message", async (t) => {
      const docker = await startDocker(join(work, "docker"), { "insecure-registries": [host] });
      if ("skip" in docker) {
        console.log(`skipping docker: ${docker.skip}`);
        t.skip(docker.skip);
        return;
      }
      try {
        await writeFile(
          join(docker.configDir, "config.json"),
          JSON.stringify({ auths: { [host]: { auth: Buffer.from(creds).toString("base64") } } }),
        );
        const pull = await docker.docker(["pull", `${host}/acme/app:v1`]);
        assert.notEqual(pull.code, 0, pull.stdout);
        assert.ok(
          `${pull.stdout}\n${pull.stderr}`.includes(MESSAGE),
          `docker shows the refusal: ${pull.stdout}\n${pull.stderr}`,
        );
      } finally {
        await docker.stop();
      }
    });
  });
});
