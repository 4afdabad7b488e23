// `wharf signing-keys …` against a real server (SQLite: the API it calls runs on both engines in
// signing-keys-api.test.ts). The PEM is read from a file, or from standard input through the shipped bin.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { cliChecks, cliHome } from "../support/cli-checks.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { WHARF } from "../support/wharf-process.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

interface CliKey {
  uid: string;
  name: string;
  publicKeyPem: string;
  algorithm: string;
  fingerprint: string;
}

const P256 = generateKeyPairSync("ec", { namedCurve: "P-256" });
const COSIGN_PUB = P256.publicKey.export({ type: "spki", format: "pem" }).toString();
const PRIVATE = P256.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
const ED25519_PUB = generateKeyPairSync("ed25519")
  .publicKey.export({ type: "spki", format: "pem" })
  .toString();

/** Runs the shipped `wharf` with `input` on its standard input. */
function withStdin(args: string[], env: NodeJS.ProcessEnv, input: string) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      [WHARF, ...args],
      { env, timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
    child.stdin?.end(input);
  });
}

describe("wharf signing-keys", () => {
  let wharf: TestServer;
  let home: string;
  let env: NodeJS.ProcessEnv;
  let pubFile: string;
  let privateFile: string;
  const { ok, json, fails } = cliChecks(runCliInProcess, () => env, { failurePrintsNothing: true });

  before(async () => {
    wharf = await startTestServer({});
    ({ home, env } = await cliHome("wharf-cli-signing-keys-", wharf, wharf.adminToken));
    pubFile = join(home, "cosign.pub");
    privateFile = join(home, "cosign.key");
    await writeFile(pubFile, COSIGN_PUB);
    await writeFile(privateFile, PRIVATE);
    await ok(["iam", "orgs", "create", "acme"]);
    await ok(["iam", "folders", "create", "prod", "--parent", "acme"]);
    await ok(["images", "repos", "create", "acme/prod/api"]);
  });
  after(async () => {
    await wharf?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it("registers a key file at an organization, a folder and a repo by path", async () => {
    const atOrg = await json<CliKey>([
      "signing-keys",
      "create",
      "acme",
      "--name",
      "release",
      "--pem-file",
      pubFile,
    ]);
    assert.equal(atOrg.name, "release");
    assert.equal(atOrg.algorithm, "ECDSA_P256");
    assert.equal(atOrg.publicKeyPem, COSIGN_PUB);
    assert.match(atOrg.fingerprint, /^[0-9a-f]{64}$/);
    const org = (await wharf.store.groups.getByName("", "acme"))?.uid as string;
    assert.ok(atOrg.uid.startsWith(`${org}/`));

    const atFolder = await json<CliKey>([
      "signing-keys",
      "create",
      "acme/prod",
      "--name",
      "ci",
      "--pem-file",
      pubFile,
    ]);
    const folder = (await wharf.store.groups.getByName(org, "prod"))?.uid as string;
    assert.ok(atFolder.uid.startsWith(`${folder}/`));
    const atRepo = await json<CliKey>([
      "signing-keys",
      "create",
      "acme/prod/api",
      "--name",
      "team",
      "--pem-file",
      pubFile,
    ]);
    const repo = (await wharf.store.repos.getByName(folder, "api"))?.uid as string;
    assert.match(atRepo.uid, new RegExp(`^${repo}/[0-9a-f]{16}$`));
  });

  it("reads the PEM from standard input with --pem-file -", async () => {
    const created = await withStdin(
      ["signing-keys", "create", "acme", "--name", "from-stdin", "--pem-file", "-", "-o", "json"],
      env,
      ED25519_PUB,
    );
    assert.equal(created.code, 0, created.stderr);
    const key = JSON.parse(created.stdout) as CliKey;
    assert.equal(key.algorithm, "ED25519");
    assert.equal(key.publicKeyPem, ED25519_PUB);
  });

  it("lists (all, or at one parent) as a table and JSON, and gets by uid", async () => {
    const table = await ok(["signing-keys", "list", "-o", "table"]);
    assert.match(table, /UID\W+NAME\W+ALGORITHM\W+FINGERPRINT\W+CREATED/);
    assert.match(table, /release\W+ECDSA_P256\W+[0-9a-f]{16}\W/);
    assert.match(table, /from-stdin\W+ED25519\W/);
    const atOrg = await json<CliKey[]>(["signing-keys", "list", "--parent", "acme"]);
    assert.deepEqual(
      atOrg.map((k) => k.name),
      ["from-stdin", "release"],
    );
    const atRepo = await json<CliKey[]>(["signing-keys", "list", "--parent", "acme/prod/api"]);
    assert.deepEqual(
      atRepo.map((k) => k.name),
      ["team"],
    );
    const [team] = atRepo;
    assert.deepEqual(await json<CliKey>(["signing-keys", "get", team?.uid as string]), team);
  });

  it("explains wrong usage and the server's refusals without a stack trace", async () => {
    await fails(
      ["signing-keys", "create", "acme", "--name", "bad", "--pem-file", privateFile],
      1,
      /INVALID_ARGUMENT: .*publicKeyPem.*private key/,
    );
    await fails(
      ["signing-keys", "create", "acme", "--name", "release", "--pem-file", pubFile],
      1,
      /ALREADY_EXISTS: .*signing key named "release"/,
    );
    await fails(
      ["signing-keys", "create", "acme", "--name", "x", "--pem-file", join(home, "missing.pub")],
      2,
      /missing\.pub: no such file/,
    );
    await fails(["signing-keys", "create", "nowhere", "--name", "x", "--pem-file", pubFile], 4, /NOT_FOUND/);
    await fails(["signing-keys", "create", "acme", "--pem-file", pubFile], 2, /--name/);
    await fails(["signing-keys", "get", "acme"], 2, /not a signing key uid/);
    const org = (await wharf.store.groups.getByName("", "acme"))?.uid as string;
    await fails(["signing-keys", "get", `${org}/0000000000000000`], 4, /NOT_FOUND/);
  });

  it("deletes by uid", async () => {
    const [key] = await json<CliKey[]>(["signing-keys", "list", "--parent", "acme/prod"]);
    const uid = key?.uid as string;
    const out = await runCliInProcess(["signing-keys", "delete", uid], env);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stderr, /deleted signing key/);
    await fails(["signing-keys", "get", uid], 4, /NOT_FOUND/);
  });
});
