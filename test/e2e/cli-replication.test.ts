// `wharf replication …` against a real server with a stand-in copier (the copy itself is tested
// against docker-registry in replication-remote.test.ts).
import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import type { ReplicationCopier } from "../../src/registry/replication/replication-contract.js";
import { cliChecks, cliHome } from "../support/cli-checks.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

describe("wharf replication", () => {
  let wharf: TestServer;
  let home: string;
  let env: NodeJS.ProcessEnv;
  const { ok, json, fails } = cliChecks(runCliInProcess, () => env, { failurePrintsNothing: true });
  const copier: ReplicationCopier = {
    async run(rule, progress) {
      if (rule.name === "broken") {
        progress.failed({ reference: "acme/app:v1", message: "remote refused: 403 denied" });
        return;
      }
      progress.add({ copiedManifests: 1, copiedBlobs: 2, copiedBytes: 3 * 1048576, skippedBlobs: 1 });
    },
  };

  before(async () => {
    wharf = await startTestServer({
      config: { eventsAllowLoopback: "true", eventsAllowHttp: "true" },
      replication: { copier, pollMs: 50, progressMs: 20 },
    });
    ({ home, env } = await cliHome("wharf-cli-replication-", wharf, wharf.adminToken));
    await ok(["iam", "orgs", "create", "acme"]);
  });
  after(async () => {
    await wharf?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it("creates, lists, gets, updates and deletes a rule by ORG/NAME", async () => {
    const created = await json<{ uid: string; name: string; trigger: string; repoPattern: string }>([
      ...["replication", "create", "acme", "mirror-out", "--remote", "http://127.0.0.1:9"],
      ...["--repos", "team/**", "--tags", "v*", "--destination", "mirror", "--trigger", "on-push"],
    ]);
    assert.equal(created.name, "mirror-out");
    assert.equal(created.trigger, "ON_PUSH");
    assert.equal(created.repoPattern, "team/**");
    const table = await ok(["replication", "list", "--org", "acme", "-o", "table"]);
    assert.match(table, /mirror-out\W+PUSH\W+http:\/\/127\.0\.0\.1:9\W+team\/\*\*\W+v\*\W+mirror\W+ON_PUSH/);
    const got = await json<{ uid: string }>(["replication", "get", "acme/mirror-out"]);
    assert.equal(got.uid, created.uid);
    const updated = await json<{ trigger: string; interval: string; enabled?: boolean }>([
      ...[
        "replication",
        "update",
        "acme/mirror-out",
        "--trigger",
        "interval",
        "--interval",
        "1h",
        "--disable",
      ],
    ]);
    assert.deepEqual(
      [updated.trigger, updated.interval, updated.enabled ?? false],
      ["INTERVAL", "1h", false],
    );
    await ok(["replication", "delete", "acme/mirror-out"]);
    await fails(["replication", "get", "acme/mirror-out"], 2, /no replication rule named "mirror-out"/);
  });

  it("runs with --wait: plain progress lines off a terminal, the run printed, exit 1 when it FAILED", async () => {
    await ok(["replication", "create", "acme", "good", "--remote", "http://127.0.0.1:9"]);
    const r = await runCliInProcess(["replication", "run", "acme/good", "--wait", "-o", "json"], env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /wharf replication run: SUCCEEDED: 3\.0 MiB, 2 blobs sent, 1 skipped, 1 manifests/,
    );
    const run = JSON.parse(r.stdout) as { state: string; copiedBytes: string };
    assert.deepEqual([run.state, run.copiedBytes], ["SUCCEEDED", String(3 * 1048576)]);

    await ok(["replication", "create", "acme", "broken", "--remote", "http://127.0.0.1:9"]);
    const failed = await runCliInProcess(["replication", "run", "acme/broken", "--wait"], env);
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /acme\/app:v1: remote refused: 403 denied/);

    const runs = await ok(["replication", "runs", "--rule", "acme/good", "-o", "table"]);
    assert.match(runs, /SUCCEEDED\W+MANUAL/);
  });

  it("refuses bad usage", async () => {
    await fails(["replication", "create", "acme", "x"], 2, /--remote is required/);
    await fails(
      ["replication", "create", "acme", "x", "--remote", "http://127.0.0.1:9", "--trigger", "sometimes"],
      2,
      /--trigger takes ON_PUSH, INTERVAL, MANUAL/,
    );
    await fails(["replication", "update", "acme/good"], 2, /nothing to change/);
  });
});
