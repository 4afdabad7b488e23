// `wharf auth configure-docker` and the `docker-credential-wharf` helper, with a real client
// (skopeo): after a login is stored, skopeo pushes and pulls with no credentials on its command
// line; the helper exchanges the stored login for a registry token each time it is asked.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { saveCredentials } from "../../src/sdk/node/stored-credentials.js";
import { writeImageLayout } from "../support/oci-layout.js";
import { runSkopeo, skopeoSkip } from "../support/skopeo.js";
import { WHARF } from "../support/wharf-process.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const HELPER = new URL("../../bin/docker-credential-wharf.js", import.meta.url).pathname;

function run(file: string, args: string[], env: NodeJS.ProcessEnv, input?: string) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(file, args, { env }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    child.stdin?.end(input ?? "");
  });
}

describe("docker-credential-wharf with skopeo", { skip: skopeoSkip }, () => {
  let wharf: TestServer;
  let home: string;
  let env: NodeJS.ProcessEnv;
  let host: string;

  before(async () => {
    wharf = await startTestServer();
    host = new URL(wharf.registryUrl).host;
    await wharf.create("/iam/v2/groups", { name: "acme" });
    home = await mkdtemp(join(tmpdir(), "wharf-credhelper-"));
    // The helper is found on PATH by its name, as docker and the containers tools look it up.
    const bin = join(home, "bin");
    await mkdir(bin);
    await symlink(HELPER, join(bin, "docker-credential-wharf"));
    env = {
      PATH: [bin, dirname(process.execPath), process.env.PATH].join(delimiter),
      HOME: home,
      WHARF_CONFIG_DIR: join(home, "wharf"),
      WHARF_API_URL: wharf.apiUrl,
      DOCKER_CONFIG: join(home, "docker"),
      REGISTRY_AUTH_FILE: join(home, "containers-auth.json"),
    };
    // What `wharf auth login` stores (no WHARF_TOKEN anywhere below).
    await saveCredentials(
      wharf.apiUrl,
      { token: wharf.adminToken, expiry: new Date(Date.now() + 3_600_000).toISOString() },
      env,
    );
  });
  after(async () => {
    await wharf?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it("configure-docker wires the helper into docker's config and the containers auth file", async () => {
    const r = await run(process.execPath, [WHARF, "auth", "configure-docker"], env);
    assert.equal(r.code, 0, r.stderr);
    for (const file of [join(home, "docker", "config.json"), join(home, "containers-auth.json")]) {
      const config = JSON.parse(await readFile(file, "utf8")) as { credHelpers: Record<string, string> };
      assert.deepEqual(config.credHelpers, { [host]: "wharf" }, file);
    }
    const got = await run(join(home, "bin", "docker-credential-wharf"), ["get"], env, `${host}\n`);
    assert.equal(got.code, 0, got.stdout + got.stderr);
    const answer = JSON.parse(got.stdout) as { ServerURL: string; Username: string; Secret: string };
    assert.equal(answer.Username, "_token");
    const claims = JSON.parse(Buffer.from(answer.Secret.split(".")[1] ?? "", "base64url").toString()) as {
      aud: unknown;
    };
    assert.deepEqual([claims.aud].flat(), [wharf.registryUrl], "a token for the registry's audience");
    const unknown = await run(
      join(home, "bin", "docker-credential-wharf"),
      ["get"],
      env,
      "elsewhere.example\n",
    );
    assert.equal(unknown.code, 1);
    assert.match(unknown.stdout, /credentials not found/);
  });

  it("skopeo pushes and pulls through the helper, with no credentials given", async () => {
    const layout = join(home, "layout");
    const image = await writeImageLayout(layout, { tag: "v1", files: { "etc/hello": "hello\n" } });
    const skopeoEnv = { ...env, XDG_RUNTIME_DIR: join(home, "run") } as Record<string, string>;
    const push = await runSkopeo(
      ["copy", "--dest-tls-verify=false", `oci:${layout}:v1`, `docker://${host}/acme/app:v1`],
      { env: skopeoEnv },
    );
    assert.equal(push.code, 0, push.stderr);
    const inspect = await runSkopeo(["inspect", "--tls-verify=false", `docker://${host}/acme/app:v1`], {
      env: skopeoEnv,
    });
    assert.equal(inspect.code, 0, inspect.stderr);
    assert.equal((JSON.parse(inspect.stdout) as { Digest: string }).Digest, image.manifestDigest);
    const pulled = join(home, "pulled");
    const pull = await runSkopeo(
      ["copy", "--src-tls-verify=false", `docker://${host}/acme/app:v1`, `oci:${pulled}:v1`],
      {
        env: skopeoEnv,
      },
    );
    assert.equal(pull.code, 0, pull.stderr);
    // Without the login, the same pull is refused: the credentials came from the helper.
    await saveCredentials(wharf.apiUrl, undefined, env);
    const refused = await runSkopeo(["inspect", "--tls-verify=false", `docker://${host}/acme/app:v1`], {
      env: skopeoEnv,
    });
    assert.notEqual(refused.code, 0);
  });
});
