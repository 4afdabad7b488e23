import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const run = promisify(execFile);
const repo = new URL("../..", import.meta.url).pathname;

/** A program outside the repository, run by plain `node`: only the package's exports. */
const CONSUMER = `
import { Code, createWharfClient, listAll, staticToken, WharfApiError } from "wharf/sdk";
import { nodeTransport } from "wharf/sdk/node";

const [apiUrl, token] = process.argv.slice(2);
const out = {};
for (const [name, transport] of [["web", undefined], ["node", nodeTransport()]]) {
  const client = createWharfClient({ apiUrl, tokenSource: staticToken(token), transport });
  const org = await client.iam.groups.createGroup({ group: { name: "pkg-" + name } });
  const names = [];
  for await (const group of listAll(client.iam.groups.listGroups, { uidp: { ids: [org.uid] } })) names.push(group.name);
  let error;
  try {
    await client.iam.groups.createGroup({ group: { name: "Bad Name" } });
  } catch (err) {
    error = { typed: err instanceof WharfApiError, invalid: err.code === Code.InvalidArgument, fields: err.fieldViolations.map((v) => v.field) };
  }
  out[name] = { names, error };
}
process.stdout.write(JSON.stringify(out));
`;

/** The same program's types, checked by tsc against the package's declarations. */
const TYPED_CONSUMER = `
import { createWharfClient, listAll, staticToken, WharfApiError, type WharfClient } from "wharf/sdk";
import { storedLogin } from "wharf/sdk/node";

const client: WharfClient = createWharfClient({ apiUrl: "http://127.0.0.1:8080", tokenSource: staticToken("t") });
export async function names(): Promise<string[]> {
  const { repos } = await client.registry.repos.listRepos({ pageSize: 10 });
  return repos.map((r) => r.name);
}
export function fields(err: unknown): string[] {
  return err instanceof WharfApiError ? err.fieldViolations.map((v) => v.field) : [];
}
export const login = storedLogin({ apiUrl: "http://127.0.0.1:8080" });
export async function firstRepo(): Promise<string> {
  for await (const repo of listAll(client.registry.repos.listRepos, {})) {
    // @ts-expect-error listAll's items are typed: a Repo is no number
    const wrong: number = repo;
    return repo.name + String(wrong);
  }
  return "";
}
// @ts-expect-error the request's fields are typed: proves the declarations are read
client.registry.repos.listRepos({ pageSize: "ten" });
`;

/** Packages `wharf/sdk` may load in a browser. */
const BROWSER_SAFE = /^@bufbuild\/protobuf(\/|$)|^@connectrpc\/connect(-web)?$/;

describe("the wharf/sdk and wharf/sdk/node exports", () => {
  let dir: string;
  let wharf: TestServer;
  before(async () => {
    assert.ok(existsSync(join(repo, "dist", "sdk", "index.js")), "dist/ is built (npm run build)");
    dir = await mkdtemp(join(tmpdir(), "wharf-packaging-sdk-"));
    await mkdir(join(dir, "node_modules"));
    await symlink(repo, join(dir, "node_modules", "wharf"), "dir");
    await writeFile(join(dir, "package.json"), JSON.stringify({ type: "module", private: true }));
    wharf = await startTestServer();
  });
  after(async () => {
    await wharf.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("works from plain Node over both transports, with its typed error", async () => {
    await writeFile(join(dir, "consumer.mjs"), CONSUMER);
    const { NODE_OPTIONS: _, ...env } = process.env;
    const { stdout } = await run(process.execPath, ["consumer.mjs", wharf.apiUrl, wharf.adminToken], {
      cwd: dir,
      env,
    });
    const error = { typed: true, invalid: true, fields: ["name"] };
    assert.deepEqual(JSON.parse(stdout), {
      web: { names: ["pkg-web"], error },
      node: { names: ["pkg-node"], error },
    });
  });

  it("has type declarations a TypeScript consumer compiles against", async () => {
    await writeFile(join(dir, "consumer.ts"), TYPED_CONSUMER);
    await writeFile(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ["node"],
          typeRoots: [join(repo, "node_modules", "@types")],
        },
        files: ["consumer.ts"],
      }),
    );
    const tsc = join(repo, "node_modules", "typescript", "bin", "tsc");
    const result = await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: dir }).catch(
      (err: { stdout: string }) => ({ stdout: err.stdout, failed: true }),
    );
    assert.deepEqual(result, { stdout: "", stderr: "" }, "tsc reports nothing");
  });

  it("wharf/sdk loads nothing a browser lacks: no node: module, no package but protobuf and connect(-web)", async () => {
    const seen = new Set<string>();
    const packages = new Set<string>();
    const pending = [join(repo, "dist", "sdk", "index.js")];
    while (pending.length > 0) {
      const file = pending.pop() as string;
      if (seen.has(file)) continue;
      seen.add(file);
      const source = await readFile(file, "utf8");
      const statements = /^(?:import|export)\s(?:[^;]*?\sfrom\s*)?["']([^"']+)["']/gm;
      for (const [, specifier = ""] of source.matchAll(statements)) {
        if (specifier.startsWith(".")) pending.push(resolve(dirname(file), specifier));
        else packages.add(specifier);
      }
    }
    assert.ok(seen.size > 10, "the module graph was followed");
    assert.ok(![...seen].some((f) => f.includes(`${join("dist", "sdk", "node")}`)), "nothing of sdk/node");
    for (const name of packages) assert.match(name, BROWSER_SAFE, `${name} is browser-safe`);
  });
});
