import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { runCli } from "../../src/cli/main.js";
import { saveCredentials } from "../../src/sdk/node/stored-credentials.js";
import { expectJson } from "../support/api-assertions.js";
import { pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const GRYPE = fileURLToPath(new URL("../fixtures/vulnreports/grype.json", import.meta.url));
const TRUNCATED = fileURLToPath(new URL("../fixtures/vulnreports/truncated.json", import.meta.url));

/** Captures what a command writes. */
function capture() {
  const out = { stdout: "", stderr: "" };
  const stream = (key: "stdout" | "stderr") =>
    ({
      write: (t: string) => {
        out[key] += t;
        return true;
      },
    }) as unknown as NodeJS.WritableStream;
  return { out, io: { stdout: stream("stdout"), stderr: stream("stderr") } };
}

/** `wharf import vulnreport <args…>` in this process, through the one `wharf` parser. */
function runVulnReportImport(args: string[], io: ReturnType<typeof capture>["io"], env: NodeJS.ProcessEnv) {
  return runCli(["import", "vulnreport", ...args], { ...io, env });
}

describe("wharf import vulnreport", () => {
  let wharf: TestServer;
  let digest: string;
  let configDir: string;

  before(async () => {
    wharf = await startTestServer();
    configDir = await mkdtemp(join(tmpdir(), "wharf-cli-config-"));
    const acme = await wharf.create("/iam/v2/groups", { name: "acme" });
    await wharf.create(`/iam/v2/groups/${acme}`, { name: "team" });
    digest = (await pushImage(wharf, "acme/team/app", "latest", await wharf.registryToken(), "cli-image"))
      .digest;
  });
  after(async () => {
    await wharf.close();
    await rm(configDir, { recursive: true, force: true });
  });

  it("uploads a report to ORG/…/REPO with --token, and prints what was stored", async () => {
    const { out, io } = capture();
    const code = await runVulnReportImport(
      [
        "--repo",
        "acme/team/app",
        "--digest",
        digest,
        "--api-url",
        wharf.apiUrl,
        "--token",
        wharf.adminToken,
        GRYPE,
      ],
      io,
      {},
    );
    assert.equal(code, 0, out.stderr);
    assert.match(
      out.stdout,
      new RegExp(`^stored 4 vulnerabilities of acme/team/app@${digest} \\(GRYPE 0.87.0\\) as [0-9a-f/]+\\n$`),
    );
    const listed = await expectJson<{ items: unknown[] }>(
      await wharf.api(`/registry/v1/vuln_reports?digest=${digest}`, { token: wharf.adminToken }),
    );
    assert.equal(listed.items.length, 1);
  });

  it("takes the token from WHARF_TOKEN, else from the stored login", async () => {
    const args = ["--repo", "acme/team/app", "--digest", digest, GRYPE];
    const viaEnv = capture();
    assert.equal(
      await runVulnReportImport(args, viaEnv.io, {
        WHARF_API_URL: wharf.apiUrl,
        WHARF_TOKEN: wharf.adminToken,
      }),
      0,
      viaEnv.out.stderr,
    );
    const env = { WHARF_API_URL: wharf.apiUrl, WHARF_CONFIG_DIR: configDir };
    await saveCredentials(
      new URL(wharf.apiUrl).origin,
      { token: wharf.adminToken, expiry: new Date(Date.now() + 3_600_000).toISOString() },
      env,
    );
    const viaLogin = capture();
    const saved = process.env.WHARF_CONFIG_DIR;
    process.env.WHARF_CONFIG_DIR = configDir;
    try {
      assert.equal(await runVulnReportImport(args, viaLogin.io, env), 0, viaLogin.out.stderr);
    } finally {
      if (saved === undefined) delete process.env.WHARF_CONFIG_DIR;
      else process.env.WHARF_CONFIG_DIR = saved;
    }
  });

  it("fails with the server's message for a broken report, an unknown repo or a missing token", async () => {
    const base = ["--api-url", wharf.apiUrl, "--token", wharf.adminToken, "--digest", digest];
    const broken = capture();
    assert.equal(
      await runVulnReportImport([...base, "--repo", "acme/team/app", TRUNCATED], broken.io, {}),
      1,
    );
    assert.match(broken.out.stderr, /HTTP 400: Invalid argument: raw_report: the report is not valid JSON/);
    const unknown = capture();
    assert.equal(await runVulnReportImport([...base, "--repo", "acme/team/nope", GRYPE], unknown.io, {}), 1);
    assert.match(unknown.out.stderr, /no repo "acme\/team\/nope"/);
    const usage = capture();
    assert.equal(await runVulnReportImport(["--repo", "acme/team/app", GRYPE], usage.io, {}), 2);
    assert.match(usage.out.stderr, /--repo, --digest and one FILE are required/);
    const empty = await mkdtemp(join(tmpdir(), "wharf-cli-none-"));
    try {
      const noToken = capture();
      const code = await runVulnReportImport(
        ["--repo", "acme/team/app", "--digest", digest, GRYPE],
        noToken.io,
        { WHARF_API_URL: wharf.apiUrl, WHARF_CONFIG_DIR: empty },
      );
      assert.equal(code, 1);
      assert.match(noToken.out.stderr, /not logged in/);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});
