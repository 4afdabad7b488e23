import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseCapability } from "../../../../src/cli/client/capabilities.js";
import { pinnedRecord } from "../../../../src/cli/client/commands/images.js";
import { bashCompletion, completionTable, zshCompletion } from "../../../../src/cli/client/completion.js";
import { parseTimeout, resolveApiUrl } from "../../../../src/cli/client/context.js";
import { hostOf } from "../../../../src/cli/client/credential-helper.js";
import { EXIT } from "../../../../src/cli/client/exit-codes.js";
import { describeFailure } from "../../../../src/cli/client/failure.js";
import { clientGroupOf } from "../../../../src/cli/client/index.js";
import { UsageError } from "../../../../src/cli/client/output.js";
import { isUid, parseImage } from "../../../../src/cli/client/resolve.js";
import { wharfProgram } from "../../../../src/cli/program.js";
import { Capability } from "../../../../src/gen/platform/capabilities/capabilities_pb.js";
import { Code, WharfApiError } from "../../../../src/sdk/index.js";

const DIGEST = `sha256:${"a".repeat(64)}`;

describe("names people type", () => {
  it("images: ORG/REPO with a tag or digest; a registry host in front is dropped", () => {
    assert.deepEqual(parseImage("acme/app"), { repository: "acme/app" });
    assert.deepEqual(parseImage("acme/app:1.2"), { repository: "acme/app", tag: "1.2" });
    assert.deepEqual(parseImage(`acme/tools/app@${DIGEST}`), {
      repository: "acme/tools/app",
      digest: DIGEST,
    });
    assert.deepEqual(parseImage("registry.example.com:5000/acme/app:v1"), {
      repository: "acme/app",
      tag: "v1",
    });
    assert.deepEqual(parseImage("localhost/acme/app:v1"), { repository: "acme/app", tag: "v1" });
    assert.throws(() => parseImage("app:v1"), /expected ORG\/REPO/);
    assert.throws(() => parseImage("acme/app@sha256:short"), /is not a digest/);
  });

  it("uids are told from names", () => {
    assert.equal(isUid("a".repeat(40)), true);
    assert.equal(isUid(`${"a".repeat(40)}/${"b".repeat(16)}`), true);
    assert.equal(isUid("acme"), false);
    assert.equal(isUid("acme/app"), false);
  });

  it("capabilities by short or enum name", () => {
    assert.equal(parseCapability("repo.list"), Capability.CAP_REPO_LIST);
    assert.equal(parseCapability("CAP_REPO_LIST"), Capability.CAP_REPO_LIST);
    assert.equal(parseCapability("cap_repo_list"), Capability.CAP_REPO_LIST);
    assert.throws(() => parseCapability("fly"), UsageError);
  });

  it("timeouts, API URLs and registry hosts", () => {
    assert.equal(parseTimeout("30s"), 30_000);
    assert.equal(parseTimeout("2m"), 120_000);
    assert.equal(parseTimeout("500ms"), 500);
    assert.equal(parseTimeout("5"), 5000);
    assert.throws(() => parseTimeout("soon"), UsageError);
    assert.equal(resolveApiUrl("http://h:1/path", {}), "http://h:1");
    assert.equal(resolveApiUrl(undefined, { WHARF_API_URL: "https://w.example" }), "https://w.example");
    assert.equal(resolveApiUrl(undefined, { WHARF_CONFIG_DIR: "/nonexistent" }), "http://127.0.0.1:8080");
    assert.throws(() => resolveApiUrl("not a url", {}), UsageError);
    assert.equal(hostOf("https://registry.example.com:5000/v1/"), "registry.example.com:5000");
    assert.equal(hostOf("127.0.0.1:5000"), "127.0.0.1:5000");
  });
});

describe("--pin", () => {
  const records = [
    { updateTimestamp: "2026-01-01T00:00:00.000Z", digest: "sha256:one", deleted: false },
    { updateTimestamp: "2026-02-01T00:00:00.000Z", digest: "", deleted: true },
    { updateTimestamp: "2026-03-01T00:00:00.000Z", digest: "sha256:three", deleted: false },
  ];
  it("the latest record, or the one current at --at", () => {
    assert.equal(pinnedRecord(records, "acme/app:latest").digest, "sha256:three");
    assert.equal(pinnedRecord(records, "acme/app:latest", "2026-01-15T00:00:00Z").digest, "sha256:one");
    assert.equal(pinnedRecord(records, "acme/app:latest", "2026-03-01T00:00:00.000Z").digest, "sha256:three");
  });
  it("NOT_FOUND before the first record or while the tag was deleted", () => {
    for (const at of ["2025-12-31T00:00:00Z", "2026-02-15T00:00:00Z"]) {
      assert.throws(
        () => pinnedRecord(records, "acme/app:latest", at),
        (err: WharfApiError) => err.code === Code.NotFound && /pointed to nothing/.test(err.message),
      );
    }
  });
});

describe("failures", () => {
  it("exit codes: 4 not found, 5 permission denied or unauthenticated, 2 usage, 1 otherwise", () => {
    assert.equal(
      describeFailure(new WharfApiError({ code: Code.NotFound, message: "x" })).code,
      EXIT.notFound,
    );
    assert.equal(describeFailure(new WharfApiError({ code: Code.PermissionDenied, message: "x" })).code, 5);
    assert.equal(describeFailure(new WharfApiError({ code: Code.Unauthenticated, message: "x" })).code, 5);
    assert.equal(describeFailure(new WharfApiError({ code: Code.InvalidArgument, message: "x" })).code, 1);
    assert.equal(describeFailure(new UsageError("bad")).code, 2);
    assert.equal(describeFailure(new Error("boom")).code, 1);
  });
  it("the message, then the violations it does not already say, on one line", () => {
    const err = new WharfApiError({
      code: Code.FailedPrecondition,
      message: "cannot delete",
      fieldViolations: [{ field: "name", description: "is required" }],
      preconditionViolations: [{ type: "NOT_EMPTY", subject: "acme", description: "has repos" }],
    });
    assert.deepEqual(describeFailure(err).lines, [
      "FAILED_PRECONDITION: cannot delete",
      "  name: is required; NOT_EMPTY acme: has repos",
    ]);
    const repeated = new WharfApiError({
      code: Code.InvalidArgument,
      message: "name: is required",
      fieldViolations: [{ field: "name", description: "is required" }],
    });
    assert.deepEqual(describeFailure(repeated).lines, ["INVALID_ARGUMENT: name: is required"]);
  });
});

describe("routing and completions", () => {
  it("a command line loads the client group it names (global flags before it skipped), or none", () => {
    assert.equal(clientGroupOf(["iam", "orgs", "list"]), "iam");
    assert.equal(clientGroupOf(["--api-url", "http://x", "-o", "json", "images", "tags", "list"]), "images");
    assert.equal(clientGroupOf(["auth", "login"]), "auth");
    for (const argv of [
      ["serve"],
      ["gc", "--window", "1h"],
      ["import", "libraries"],
      ["completion", "bash"],
      [],
    ]) {
      assert.equal(clientGroupOf(argv), undefined, argv.join(" "));
    }
  });

  it("the completion table follows the one command tree: server-side and client commands alike", async () => {
    const io = { stdout: process.stdout, stderr: process.stderr, env: {} };
    const table = completionTable(await wharfProgram(io, "all"));
    assert.ok(table.get("wharf")?.includes("serve"));
    assert.ok(table.get("wharf gc")?.includes("--window"));
    assert.ok(table.get("wharf admin keys")?.includes("rotate"));
    assert.ok(table.get("wharf import")?.includes("libraries"));
    assert.ok(table.get("wharf import advisories")?.includes("--namespace"));
    assert.deepEqual(
      table
        .get("wharf auth")
        ?.filter((w) => !w.startsWith("-"))
        .sort(),
      ["configure-docker", "login", "logout", "pull-token", "status", "token"],
    );
    assert.deepEqual(
      table
        .get("wharf auth pull-token")
        ?.filter((w) => !w.startsWith("-"))
        .sort(),
      ["create", "delete", "list", "revoke"],
    );
    assert.ok(table.get("wharf")?.includes("images"));
    assert.deepEqual(
      table.get("wharf images tags")?.filter((w) => !w.startsWith("-")),
      ["list", "create", "delete", "restore"],
    );
    assert.deepEqual(
      table.get("wharf images immutability")?.filter((w) => !w.startsWith("-")),
      ["create", "list", "describe", "update", "delete"],
    );
    assert.ok(table.get("wharf images history")?.includes("--pin"));
    assert.ok(table.has("wharf iam orgs"), "aliases complete too");
    assert.match(bashCompletion(table), /\['wharf images history'\]='[^']*--since/);
    assert.match(zshCompletion(table), /compdef _wharf wharf/);
  });
});
