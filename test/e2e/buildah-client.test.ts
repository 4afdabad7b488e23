// buildah as a client of Wharf (issue 38), with Debian's buildah as root on vfs storage: an image
// built from scratch is pushed, shows in the tag history, and is pulled back by digest. Skipped with
// the reason printed when buildah is not installed. The client cannot change what the store does:
// one engine.
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runCommand } from "../support/daemon-process.js";
import { commandAvailable } from "../support/skopeo.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const buildahSkip = commandAvailable("buildah") ? false : "buildah not installed: apt-get install buildah";
if (buildahSkip) console.log(`skipping buildah: ${buildahSkip}`);

describe("buildah as a client of Wharf", { skip: buildahSkip }, () => {
  let wharf: TestServer;
  let work: string;
  let host: string;
  let env: Record<string, string>;
  const buildah = (args: string[]) =>
    runCommand(
      "buildah",
      [
        ...["--root", join(work, "root"), "--runroot", join(work, "runroot"), "--storage-driver", "vfs"],
        ...args,
      ],
      env,
    );

  before(async () => {
    wharf = await startTestServer();
    host = new URL(wharf.registryUrl).host;
    await wharf.create("/iam/v2/groups", { name: "acme" });
    work = await mkdtemp(join(tmpdir(), "wharf-buildah-"));
    const empty = join(work, "empty.conf");
    await writeFile(empty, "");
    const policy = join(work, "policy.json");
    await writeFile(policy, JSON.stringify({ default: [{ type: "insecureAcceptAnything" }] }));
    env = {
      HOME: work,
      TMPDIR: work,
      CONTAINERS_CONF: empty,
      CONTAINERS_REGISTRIES_CONF: empty,
      SIGNATURE_POLICY_PATH: policy,
      REGISTRY_AUTH_FILE: join(work, "auth.json"),
      BUILDAH_ISOLATION: "chroot",
    };
    await writeFile(env.REGISTRY_AUTH_FILE as string, "{}\n");
  });
  after(async () => {
    await wharf?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("pushes an image built from scratch, which shows in the tag history, and pulls it back", async () => {
    const creds = `_token:${await wharf.registryToken()}`;
    const from = await buildah([
      "from",
      "--signature-policy",
      env.SIGNATURE_POLICY_PATH as string,
      "scratch",
    ]);
    assert.equal(from.code, 0, from.stderr);
    const container = from.stdout.trim();
    await writeFile(join(work, "hello.txt"), "built by buildah\n");
    const copied = await buildah(["copy", container, join(work, "hello.txt"), "/hello.txt"]);
    assert.equal(copied.code, 0, copied.stderr);
    const committed = await buildah(["commit", "--format", "oci", container, "localhost/built:v1"]);
    assert.equal(committed.code, 0, committed.stderr);

    const digestFile = join(work, "pushed.digest");
    const pushed = await buildah([
      "push",
      ...["--tls-verify=false", "--creds", creds, "--digestfile", digestFile],
      "--signature-policy",
      env.SIGNATURE_POLICY_PATH as string,
      "localhost/built:v1",
      `docker://${host}/acme/built:v1`,
    ]);
    assert.equal(pushed.code, 0, pushed.stderr);
    const pushedDigest = (await readFile(digestFile, "utf8")).trim();
    assert.match(pushedDigest, /^sha256:[0-9a-f]{64}$/);

    const history = await wharf.registry("/v2/acme/built/_service/history/v1", {
      token: await wharf.registryToken(),
    });
    const text = await history.text();
    assert.equal(history.status, 200, text);
    assert.ok(text.includes(pushedDigest), `the tag history names buildah's digest: ${text}`);

    const pulled = await buildah([
      "pull",
      ...["--tls-verify=false", "--creds", creds],
      "--signature-policy",
      env.SIGNATURE_POLICY_PATH as string,
      `docker://${host}/acme/built@${pushedDigest}`,
    ]);
    assert.equal(pulled.code, 0, pulled.stderr);
    const inspected = await buildah(["inspect", "--type", "image", `${host}/acme/built@${pushedDigest}`]);
    assert.equal(inspected.code, 0, inspected.stderr);
    assert.ok(inspected.stdout.includes(pushedDigest), "buildah holds the pulled image by that digest");
  });
});
