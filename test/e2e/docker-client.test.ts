// docker as a tested client (issue 38), against a real dockerd (Debian's docker.io, vfs, no bridge):
// `wharf auth configure-docker` lets docker push and pull with no `docker login`, a docker push shows
// in the tag history, an immutable tag's and a quota's refusals show in docker's output, and a multi-platform
// index pushed by skopeo is pulled by docker. Skipped with
// the reason printed where dockerd cannot run. The client cannot change what the store does: one engine.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { saveCredentials } from "../../src/sdk/node/stored-credentials.js";
import { runCommand } from "../support/daemon-process.js";
import { type DockerDaemon, dockerSkip, startDocker } from "../support/docker.js";
import { writeMultiArchLayout } from "../support/oci-layout.js";
import { runSkopeo, skopeoSkip } from "../support/skopeo.js";
import { WHARF } from "../support/wharf-process.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const HELPER = new URL("../../bin/docker-credential-wharf.js", import.meta.url).pathname;

describe("docker as a client of Wharf", { skip: dockerSkip }, () => {
  let wharf: TestServer;
  let work: string;
  let host: string;
  let docker: DockerDaemon | undefined;
  /** The environment docker's client runs in: the helper on PATH, a stored Wharf login. */
  let clientEnv: Record<string, string>;

  const dockerCli = (args: string[]) => runCommand("/usr/bin/docker", args, clientEnv);

  before(async () => {
    wharf = await startTestServer();
    host = new URL(wharf.registryUrl).host;
    await wharf.create("/iam/v2/groups", { name: "acme" });
    work = await mkdtemp(join(tmpdir(), "wharf-docker-client-"));
    const started = await startDocker(join(work, "docker"), { "insecure-registries": [host] });
    if ("skip" in started) {
      console.log(`skipping docker: ${started.skip}`);
      return;
    }
    docker = started;
    const bin = join(work, "bin");
    await mkdir(bin);
    await symlink(HELPER, join(bin, "docker-credential-wharf"));
    clientEnv = {
      PATH: [bin, dirname(process.execPath), process.env.PATH ?? ""].join(delimiter),
      HOME: work,
      WHARF_CONFIG_DIR: join(work, "wharf"),
      WHARF_API_URL: wharf.apiUrl,
      DOCKER_HOST: docker.host,
      DOCKER_CONFIG: docker.configDir,
      REGISTRY_AUTH_FILE: join(work, "containers-auth.json"),
    };
    // What `wharf auth login` stores; no token is given to docker anywhere below.
    await saveCredentials(
      wharf.apiUrl,
      { token: wharf.adminToken, expiry: new Date(Date.now() + 3_600_000).toISOString() },
      clientEnv,
    );
    const configured = await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [WHARF, "auth", "configure-docker"],
        { env: clientEnv },
        (err, _out, stderr) => resolve({ code: err ? 1 : 0, stderr }),
      );
    });
    assert.equal(configured.code, 0, configured.stderr);
  });
  after(async () => {
    await docker?.stop();
    await wharf?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("pushes with no docker login, and the push shows in the tag history", async (t) => {
    if (!docker) return t.skip("dockerd cannot run here");
    const rootfs = join(work, "rootfs");
    await mkdir(join(rootfs, "etc"), { recursive: true });
    await writeFile(join(rootfs, "etc", "release"), "docker-client test\n");
    const tarball = join(work, "rootfs.tar");
    const tar = await runCommand("tar", ["-C", rootfs, "-cf", tarball, "."]);
    assert.equal(tar.code, 0, tar.stderr);
    const image = `${host}/acme/dockered:v1`;
    const imported = await dockerCli(["import", tarball, image]);
    assert.equal(imported.code, 0, imported.stderr);
    const pushed = await dockerCli(["push", image]);
    assert.equal(pushed.code, 0, `${pushed.stdout}\n${pushed.stderr}`);
    const digest = /digest: (sha256:[0-9a-f]{64})/.exec(pushed.stdout)?.[1];
    assert.ok(digest, `docker printed the pushed digest: ${pushed.stdout}`);

    const history = await wharf.registry("/v2/acme/dockered/_service/history/v1", {
      token: await wharf.registryToken(),
    });
    const text = await history.text();
    assert.equal(history.status, 200, text);
    assert.ok(text.includes(digest), `the tag history names the docker-pushed digest: ${text}`);

    assert.equal((await dockerCli(["rmi", image])).code, 0);
    const pulled = await dockerCli(["pull", image]);
    assert.equal(pulled.code, 0, `${pulled.stdout}\n${pulled.stderr}`);
    assert.ok(pulled.stdout.includes(digest), `docker pulled the same digest: ${pulled.stdout}`);
  });

  it("shows an immutable tag's refusal in docker push's output", async (t) => {
    if (!docker) return t.skip("dockerd cannot run here");
    const acme = (await wharf.store.groups.getByName("", "acme"))?.uid ?? "";
    const rule = await wharf.create(`/registry/v2/immutabilityRules/${acme}`, { tagPatterns: ["v1"] });
    const rootfs = join(work, "rootfs-2");
    await mkdir(rootfs, { recursive: true });
    await writeFile(join(rootfs, "other"), "another image\n");
    const tarball = join(work, "rootfs-2.tar");
    assert.equal((await runCommand("tar", ["-C", rootfs, "-cf", tarball, "."])).code, 0);
    const image = `${host}/acme/dockered:v1`;
    assert.equal((await dockerCli(["import", tarball, image])).code, 0);
    const pushed = await dockerCli(["push", image]);
    assert.notEqual(pushed.code, 0, pushed.stdout);
    assert.ok(
      `${pushed.stdout}\n${pushed.stderr}`.includes(`tag v1 of acme/dockered is immutable (rule ${rule})`),
      `docker shows the refusal: ${pushed.stdout}\n${pushed.stderr}`,
    );
  });

  it("shows a quota refusal in docker push's output, and stores nothing", async (t) => {
    if (!docker) return t.skip("dockerd cannot run here");
    const tight = await wharf.create("/iam/v2/groups", { name: "tight" });
    const quota = await wharf.api(`/registry/v2/quotas/${tight}`, {
      method: "PATCH",
      token: wharf.adminToken,
      body: { storageBytes: "100" },
    });
    assert.equal(quota.status, 200, await quota.text());
    const rootfs = join(work, "rootfs-3");
    await mkdir(rootfs, { recursive: true });
    await writeFile(join(rootfs, "big"), "more than a hundred bytes\n".repeat(64));
    const tarball = join(work, "rootfs-3.tar");
    assert.equal((await runCommand("tar", ["-C", rootfs, "-cf", tarball, "."])).code, 0);
    const image = `${host}/tight/app:v1`;
    assert.equal((await dockerCli(["import", tarball, image])).code, 0);
    const pushed = await dockerCli(["push", image]);
    const output = `${pushed.stdout}\n${pushed.stderr}`;
    assert.notEqual(pushed.code, 0, output);
    assert.match(output, /quota exceeded: tight uses \d+ of 100 bytes/, "docker shows the refusal");
    const usage = (await (
      await wharf.api(`/registry/v2/usage/${tight}`, { token: wharf.adminToken })
    ).json()) as {
      storageBytes?: string;
      tagCount?: string;
    };
    assert.equal(Number(usage.storageBytes ?? 0), 0, "nothing half-written counts");
    assert.equal(Number(usage.tagCount ?? 0), 0);
  });

  it("pulls the linux/amd64 image of a multi-platform index pushed by skopeo", {
    skip: skopeoSkip,
  }, async (t) => {
    if (!docker) return t.skip("dockerd cannot run here");
    const layout = join(work, "multi");
    const multi = await writeMultiArchLayout(layout, {
      tag: "v1",
      platforms: [
        { architecture: "amd64", os: "linux", files: { "etc/arch": "amd64\n" } },
        { architecture: "arm64", os: "linux", variant: "v8", files: { "etc/arch": "arm64\n" } },
      ],
    });
    const copied = await runSkopeo([
      "copy",
      "--all",
      "--dest-tls-verify=false",
      "--dest-creds",
      `_token:${await wharf.registryToken()}`,
      `oci:${layout}:v1`,
      `docker://${host}/acme/multi:v1`,
    ]);
    assert.equal(copied.code, 0, copied.stderr);
    const pulled = await dockerCli(["pull", "--platform", "linux/amd64", `${host}/acme/multi:v1`]);
    assert.equal(pulled.code, 0, `${pulled.stdout}\n${pulled.stderr}`);
    assert.ok(pulled.stdout.includes(multi.indexDigest), `docker names the index digest: ${pulled.stdout}`);
    const amd64 = multi.platforms[0]?.manifestDigest ?? "";
    const inspected = await dockerCli([
      "image",
      "inspect",
      "--format",
      "{{.Architecture}}",
      `${host}/acme/multi:v1`,
    ]);
    assert.equal(inspected.code, 0, inspected.stderr);
    assert.equal(inspected.stdout.trim(), "amd64", `the amd64 image (${amd64}) was pulled`);
  });
});
