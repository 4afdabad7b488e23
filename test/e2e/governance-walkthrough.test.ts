// examples/governance/walkthrough.sh, the runnable form of docs/guide/governance.md's CLI and curl
// examples, against a real server, registry (skopeo pushes) and webhook receiver. The script checks
// each example's output itself; this test runs it and wants its exit code 0 and its last line.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, it } from "node:test";
import { onOneEngine } from "../support/databases.js";
import { commandAvailable, skopeoSkip } from "../support/skopeo.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { WHARF } from "../support/wharf-process.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const SCRIPT = new URL("../../examples/governance/walkthrough.sh", import.meta.url).pathname;
const missing = ["jq", "curl"].filter((tool) => !commandAvailable(tool));
const skip: false | string =
  skopeoSkip ||
  (missing.length > 0
    ? `${missing.join(" and ")} not installed: apt-get install ${missing.join(" ")}`
    : false);

/** Runs `bash SCRIPT` with exactly `env` (asynchronously: the server lives in this process). */
function runScript(env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", [SCRIPT], { env, stdio: ["ignore", "pipe", "pipe"] });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => chunks.push(c));
    child.stderr.on("data", (c: Buffer) => chunks.push(c));
    const timer = setTimeout(() => child.kill("SIGKILL"), 300_000);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output: Buffer.concat(chunks).toString("utf8") });
    });
  });
}

onOneEngine("the governance guide's walkthrough script", () => {
  let wharf: TestServer;
  let receiver: WebhookReceiver;
  let home: string;

  before(async () => {
    if (skip) return;
    wharf = await startTestServer({
      config: { eventsAllowLoopback: "true" },
      events: { backoffBaseMs: 40, backoffMaxMs: 200, pollMs: 50 },
    });
    receiver = await startWebhookReceiver();
    home = await mkdtemp(join(tmpdir(), "wharf-walkthrough-"));
  });
  after(async () => {
    await wharf?.close();
    await receiver?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it("runs every example and ends with 'walkthrough complete'", { skip, timeout: 360_000 }, async () => {
    const started = performance.now();
    const { code, output } = await runScript({
      PATH: process.env.PATH,
      HOME: home,
      WHARF_API_URL: wharf.apiUrl,
      WHARF_TOKEN: wharf.adminToken,
      WHARF_REGISTRY: new URL(wharf.registryUrl).host,
      WHARF: `${process.execPath} ${WHARF}`,
      WHARF_WEBHOOK_URL: receiver.url(),
    });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(`walkthrough.sh: exit ${code} after ${seconds} s`);
    assert.equal(code, 0, `walkthrough.sh failed:\n${output.slice(-6000)}`);
    assert.match(output, /\nwalkthrough complete\n$/, "the script's last line");
    assert.doesNotMatch(output, /skipped/, `nothing was skipped:\n${output.slice(-2000)}`);
    // The webhook steps sent one CloudEvent at least twice (redeliver, replay), with the same id.
    const ids = receiver.accepted().map((d) => String(d.headers["ce-id"]));
    assert.ok(
      ids.some((id) => ids.filter((other) => other === id).length >= 2),
      `an event redelivered with its id: ${ids.join(", ")}`,
    );
  });
});
