import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { builtInRoleUid } from "../../src/authz/built-in-roles.js";
import { saveCredentials } from "../../src/sdk/node/stored-credentials.js";
import { type OidcPeer, startOidcPeer } from "../support/oidc-peer.js";
import { buildImage, pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const run = promisify(execFile);
const repo = new URL("../..", import.meta.url).pathname;
const EXAMPLES = join(repo, "examples", "sdk");

/** Runs an example as a user would (through the package's `wharf/sdk` exports, i.e. dist/). */
async function example(name: string, args: string[], env: Record<string, string>): Promise<string[]> {
  const { NODE_OPTIONS: _, ...inherited } = process.env;
  const { stdout } = await run(process.execPath, ["--import", "tsx", join(EXAMPLES, name), ...args], {
    cwd: repo,
    env: { ...inherited, ...env },
  });
  return stdout.trimEnd().split("\n");
}

describe("the SDK guide's examples (docs/guide/sdk.md)", () => {
  let wharf: TestServer;
  let peer: OidcPeer;
  let acme: string;
  let configDir: string;
  const v1 = buildImage("example-v1");
  const v2 = buildImage("example-v2");

  before(async () => {
    peer = await startOidcPeer();
    wharf = await startTestServer();
    acme = await wharf.create("/iam/v2/groups", { name: "acme" });
    await wharf.create("/iam/v2/groups", { name: "globex" });
    const token = await wharf.registryToken();
    await pushImage(wharf, "acme/app", "latest", token, v1);
    await pushImage(wharf, "acme/app", "latest", token, v2);
    await pushImage(wharf, "acme/tools", "1", token, v1);
    configDir = await mkdtemp(join(tmpdir(), "wharf-examples-"));
  });
  after(async () => {
    await wharf.close();
    await peer.close();
    await rm(configDir, { recursive: true, force: true });
  });

  it("are in docs/guide/sdk.md verbatim, each file one ```ts block", async () => {
    const guide = await readFile(join(repo, "docs", "guide", "sdk.md"), "utf8");
    const blocks = [...guide.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
    const files = (await readdir(EXAMPLES)).filter((f) => f.endsWith(".ts")).sort();
    assert.ok(files.length >= 4);
    for (const file of files) {
      const source = await readFile(join(EXAMPLES, file), "utf8");
      assert.ok(blocks.includes(source), `docs/guide/sdk.md shows examples/sdk/${file} as it is`);
    }
  });

  it("list-repos.ts lists every repo of every organization", async () => {
    const lines = await example("list-repos.ts", [], {
      WHARF_API_URL: wharf.apiUrl,
      WHARF_TOKEN: wharf.adminToken,
    });
    assert.deepEqual(
      lines.map((l) => l.replace(/ \(.*\)$/, "")),
      ["acme: app", "acme: tools"],
    );
    assert.match(lines[0] ?? "", new RegExp(`^acme: app \\(${acme}/[0-9a-f]{16}\\)$`));
  });

  it("errors.ts prints the code, the message and the field violation", async () => {
    const lines = await example("errors.ts", [acme], {
      WHARF_API_URL: wharf.apiUrl,
      WHARF_TOKEN: wharf.adminToken,
    });
    assert.match(lines[0] ?? "", /^INVALID_ARGUMENT: .*name must be 1 to 128 characters/);
    assert.match(lines[1] ?? "", /^ {2}field name: /);
    assert.equal(lines.length, 2);
  });

  it("tag-history.ts resolves and lists the tag's history with the stored login", async () => {
    const env = { WHARF_CONFIG_DIR: configDir };
    const expiry = new Date(Date.now() + 3600_000).toISOString();
    await saveCredentials(wharf.apiUrl, { token: wharf.adminToken, expiry }, env);
    const lines = await example("tag-history.ts", ["acme/app", "latest"], {
      ...env,
      WHARF_API_URL: wharf.apiUrl,
    });
    assert.equal(lines[0], `acme/app:latest is ${v2.digest}`);
    assert.deepEqual(
      lines.slice(1).map((l) => l.split(" ")[1]),
      [v1.digest, v2.digest],
    );
  });

  it("ci-exchange.ts exchanges a CI token and sees only its organization", async () => {
    const ci = await wharf.create(`/iam/v2/identities/${acme}`, {
      name: "ci",
      claimMatch: { issuer: peer.issuer, subject: "ci" },
    });
    await wharf.create(`/iam/v2/roleBindings/${acme}`, { identityUid: ci, roleUid: builtInRoleUid("owner") });
    const lines = await example("ci-exchange.ts", ["acme/app"], {
      WHARF_API_URL: wharf.apiUrl,
      WHARF_IDENTITY: ci,
      CI_OIDC_TOKEN: await peer.clientCredentialsToken({ audience: wharf.apiUrl }),
    });
    assert.match(lines[0] ?? "", /^registry token: \d+ characters$/);
    assert.equal(lines[1], "organizations: acme");
  });
});
