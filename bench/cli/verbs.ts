// The `bench:cli` part for everyday client verbs: `wharf images tags list ORG/REPO` and
// `wharf images history ORG/REPO:TAG`, each a cold process against a local `wharf serve` with a
// seeded repository (ten tags, a history of ten pushes), beside the same data fetched by curl in
// the same hyperfine run. Target: median ≤ 400 ms for each wharf verb.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** A hyperfine result (seconds), as bench/cli.ts reads them. */
export interface VerbResult {
  stddev: number | null;
  command: string;
  median: number;
  mean: number;
  min: number;
  max: number;
}

const sha256 = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;

async function startServer(
  wharf: string,
  dataDir: string,
): Promise<{ child: ChildProcess; apiUrl: string; registryUrl: string }> {
  const child = spawn(
    process.execPath,
    [wharf, "serve", "--api-addr", "127.0.0.1:0", "--registry-addr", "127.0.0.1:0"],
    {
      env: { ...process.env, WHARF_DATA_DIR: dataDir },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`wharf serve did not start: ${stderr}`)), 30_000);
    child.stderr?.on("data", (c: Buffer) => {
      stderr += c.toString();
      const api = /platform API on (\S+)/.exec(stderr)?.[1];
      const registry = /registry on (\S+)/.exec(stderr)?.[1];
      if (api && registry) {
        clearTimeout(timer);
        resolve({ child, apiUrl: api, registryUrl: registry });
      }
    });
  });
}

async function ok(res: Response, what: string): Promise<Response> {
  if (!res.ok) throw new Error(`${what}: HTTP ${res.status} ${await res.text()}`);
  return res;
}

/** Seeds acme/app: ten pushes to :latest (ten history records) and ten tags. */
async function seed(apiUrl: string, registryUrl: string, adminToken: string, registryAudienceToken: string) {
  await ok(
    await fetch(`${apiUrl}/iam/v2/groups`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "acme" }),
    }),
    "create acme",
  );
  const host = new URL(registryUrl).host;
  const tokenRes = await ok(
    await fetch(`${registryUrl}/token?service=${host}&scope=repository:acme/app:pull,push`, {
      headers: {
        authorization: `Basic ${Buffer.from(`_token:${registryAudienceToken}`).toString("base64")}`,
      },
    }),
    "registry token",
  );
  const registryToken = ((await tokenRes.json()) as { token: string }).token;
  const auth = { authorization: `Bearer ${registryToken}` };
  for (let i = 0; i < 10; i++) {
    const config = Buffer.from(JSON.stringify({ architecture: "amd64", os: "linux", i }));
    const layer = Buffer.from(`layer ${i}`);
    for (const blob of [config, layer]) {
      await ok(
        await fetch(`${registryUrl}/v2/acme/app/blobs/uploads/?digest=${sha256(blob)}`, {
          method: "POST",
          headers: { ...auth, "content-type": "application/octet-stream" },
          body: blob,
        }),
        "blob upload",
      );
    }
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        config: {
          mediaType: "application/vnd.oci.image.config.v1+json",
          digest: sha256(config),
          size: config.length,
        },
        layers: [
          { mediaType: "application/vnd.oci.image.layer.v1.tar", digest: sha256(layer), size: layer.length },
        ],
      }),
    );
    for (const tag of ["latest", `v${i}`]) {
      await ok(
        await fetch(`${registryUrl}/v2/acme/app/manifests/${tag}`, {
          method: "PUT",
          headers: { ...auth, "content-type": "application/vnd.oci.image.manifest.v1+json" },
          body: manifest,
        }),
        "manifest put",
      );
    }
  }
  const repos = (await (
    await ok(
      await fetch(`${apiUrl}/registry/v2/repos?name=app`, {
        headers: { authorization: `Bearer ${adminToken}` },
      }),
      "repo uid",
    )
  ).json()) as { repos: { uid: string }[] };
  return { repoUid: repos.repos[0]?.uid as string, registryToken };
}

/**
 * Runs the verbs benchmark with `hyperfine` (given by bench/cli.ts: name → command line, no shell)
 * for this checkout's bin/wharf.js; resolves to its results.
 */
export async function benchVerbs(
  root: string,
  hyperfine: (commands: Record<string, string>) => Promise<VerbResult[]>,
): Promise<VerbResult[]> {
  const wharf = join(root, "bin", "wharf.js");
  const dataDir = await mkdtemp(join(tmpdir(), "wharf-bench-verbs-"));
  const server = await startServer(wharf, dataDir);
  try {
    const token = async (audience: string) =>
      (
        await run(process.execPath, [
          wharf,
          "admin",
          "token",
          "--data-dir",
          dataDir,
          "--public-url",
          server.apiUrl,
          "--audience",
          audience,
        ])
      ).stdout.trim();
    const adminToken = await token("api");
    const { repoUid, registryToken } = await seed(
      server.apiUrl,
      server.registryUrl,
      adminToken,
      await token("registry"),
    );
    // The CLI reads these (hyperfine passes its environment on); tokens stay off the command lines.
    process.env.WHARF_API_URL = server.apiUrl;
    process.env.WHARF_TOKEN = adminToken;
    const curl = (url: string, bearer: string, method = "GET", body?: string) =>
      `curl -sf -X ${method} -H 'authorization: Bearer ${bearer}' ${body ? `-H 'content-type: application/json' -d '${body}' ` : ""}${url}`;
    return await hyperfine({
      "wharf images tags list acme/app": `${wharf} images tags list acme/app -o json`,
      "curl: ListTags (REST)": curl(
        `${server.apiUrl}/registry/v2/tags?uidp.children_of=${repoUid}`,
        adminToken,
      ),
      "wharf images history acme/app:latest": `${wharf} images history acme/app:latest -o json`,
      "curl: tag history (registry)": curl(
        `${server.registryUrl}/v2/acme/app/_service/history/latest`,
        registryToken,
      ),
    });
  } finally {
    server.child.kill("SIGTERM");
    await new Promise((r) => server.child.once("exit", r));
    await rm(dataDir, { recursive: true, force: true });
  }
}
