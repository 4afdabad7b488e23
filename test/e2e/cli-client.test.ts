// The everyday `wharf` client commands (src/cli/client/, ADR 0028) against a real server: every noun
// and verb, each output format, bad input with its exit code and message. The CLI is a client of the
// API, so one engine (SQLite) is enough here; the API it calls is covered on both engines by the API's
// own suites. Most command lines run in this process through runCli (the parser bin/wharf.js runs);
// a few run the shipped bin/wharf.js (built dist/) end to end: a result, a usage error (2), a missing
// resource (4), an unreachable server (1) and a long output (completion).
import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { parse as parseYaml } from "yaml";
import { cliChecks, cliHome } from "../support/cli-checks.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { registeredPerson } from "../support/registered-person.js";
import { pushImage } from "../support/registry-push.js";
import { runWharf } from "../support/wharf-process.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

describe("the wharf client commands", () => {
  let wharf: TestServer;
  let home: string;
  let env: NodeJS.ProcessEnv;

  const { wharfCli, ok, json, fails } = cliChecks(runCliInProcess, () => env);
  /** The shipped bin/wharf.js, a child process. */
  const bin = cliChecks(runWharf, () => env);

  before(async () => {
    wharf = await startTestServer({ config: { eventsAllowLoopback: "true" } }); // a loopback sink
    ({ home, env } = await cliHome("wharf-cli-client-", wharf, wharf.adminToken));
  });
  after(async () => {
    await wharf?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it("organizations: create, list, describe, delete in every output format; bad input exits 1, 2 or 4", async () => {
    const created = await bin.json<{ uid: string; name: string }>(["iam", "organizations", "create", "acme"]);
    assert.equal(created.name, "acme");
    assert.match(created.uid, /^[0-9a-f]{40}$/);
    // Piped output is JSON unless told otherwise.
    const listed = JSON.parse(await ok(["iam", "organizations", "list"])) as { name: string }[];
    assert.deepEqual(
      listed.map((g) => g.name),
      ["acme"],
    );
    assert.equal(
      (parseYaml(await ok(["iam", "orgs", "describe", "acme", "-o", "yaml"])) as { uid: string }).uid,
      created.uid,
    );
    assert.equal(await ok(["iam", "orgs", "list", "-o", "id"]), `${created.uid}\n`);
    const table = await ok(["iam", "orgs", "list", "-o", "table"]);
    assert.match(table, /UID.*NAME.*DESCRIPTION/);
    assert.match(table, new RegExp(`${created.uid}.*acme`));

    await fails(["iam", "orgs", "create", "Not Valid"], 1, /INVALID_ARGUMENT: .*name/);
    await bin.fails(["iam", "orgs", "describe", "nowhere"], 4, /NOT_FOUND: organization "nowhere" not found/);
    await bin.fails(["iam", "orgs", "list", "-o", "xml"], 2, /argument 'xml' is invalid/);
    await fails(["iam", "orgs", "create"], 2, /missing required argument 'name'/);
    await fails(["iam", "orgs", "frobnicate"], 2, /unknown command 'frobnicate'/);

    const doomed = await json<{ uid: string }>(["iam", "orgs", "create", "doomed"]);
    const r = await wharfCli(["iam", "orgs", "delete", "doomed"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`deleted organization ${doomed.uid}`));
    await fails(["iam", "orgs", "describe", doomed.uid], 4, /NOT_FOUND/);

    const verified = await json<{ verified?: boolean }>(["iam", "orgs", "verify", "acme"]);
    assert.equal(verified.verified, true, "the administrator verifies an organization");
    const verifiedTable = await ok(["iam", "orgs", "list", "-o", "table"]);
    assert.match(verifiedTable, /NAME.*VERIFIED/);
    assert.match(verifiedTable, /acme[^\n]*yes/);
    const unverified = await json<{ verified?: boolean }>(["iam", "orgs", "unverify", "acme"]);
    assert.equal(unverified.verified ?? false, false, "and withdraws it");
    await fails(["iam", "orgs", "lookup"], 4, /NOT_FOUND: .*verified organization of your email domain/);
  });

  it("-v traces each request without the token; --timeout and --api-url are honoured", async () => {
    const r = await wharfCli(["iam", "orgs", "list", "-v"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /> POST http:\/\/127\.0\.0\.1:\d+\/platform\.iam\.v2\.GroupsService\/ListGroups/);
    assert.match(r.stderr, /< 200 POST .* \(\d+ ms\)/);
    assert.equal(r.stderr.includes(wharf.adminToken), false, "the token is never printed");
    await fails(["iam", "orgs", "list", "--timeout", "soon"], 2, /--timeout must be a duration/);
    await bin.fails(["iam", "orgs", "list", "--api-url", "http://127.0.0.1:9"], 1, /UNAVAILABLE/);
  });

  it("folders, identities (claim match and static keys), roles, role bindings; permission denied exits 5", async () => {
    const folder = await json<{ uid: string }>(["iam", "folders", "create", "team", "--parent", "acme"]);
    assert.equal((await json<{ uid: string }>(["iam", "folders", "describe", "acme/team"])).uid, folder.uid);
    assert.deepEqual(
      (await json<{ name: string }[]>(["iam", "folders", "list", "--parent", "acme"])).map((f) => f.name),
      ["team"],
    );

    const ci = await json<{ uid: string; claimMatch: { issuer: string; subject: string } }>([
      "iam",
      "identities",
      "create",
      "ci",
      "--parent",
      "acme",
      "--identity-issuer",
      "https://token.actions.githubusercontent.com",
      "--subject",
      "repo:acme/app:ref:refs/heads/main",
    ]);
    assert.deepEqual(ci.claimMatch, {
      issuer: "https://token.actions.githubusercontent.com",
      subject: "repo:acme/app:ref:refs/heads/main",
    });
    const jwks = JSON.stringify({
      keys: [
        {
          kty: "EC",
          crv: "P-256",
          x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
          y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
          kid: "k1",
          alg: "ES256",
        },
      ],
    });
    const bot = await json<{ uid: string; staticKeys: { issuer: string } }>([
      "iam",
      "identities",
      "create",
      "bot",
      "--parent",
      "acme",
      "--identity-issuer",
      "https://bot.example.com",
      "--subject",
      "bot",
      "--issuer-keys",
      jwks,
      "--expiration",
      new Date(Date.now() + 86_400_000).toISOString(),
    ]);
    assert.equal(bot.staticKeys.issuer, "https://bot.example.com");
    const updated = await json<{ description: string }>([
      "iam",
      "identities",
      "update",
      ci.uid,
      "--description",
      "CI of app",
    ]);
    assert.equal(updated.description, "CI of app");
    assert.equal((await json<{ name: string }>(["iam", "identities", "describe", ci.uid])).name, "ci");
    assert.deepEqual(
      (await json<{ name: string }[]>(["iam", "identities", "list", "--parent", "acme"]))
        .map((i) => i.name)
        .sort(),
      ["bot", "ci"],
    );
    await fails(["iam", "identities", "update", ci.uid], 2, /nothing to update/);

    const capabilities = await ok(["iam", "roles", "capabilities", "-o", "id"]);
    assert.match(capabilities, /^repo\.list$/m);
    const role = await json<{ uid: string; capabilities: string[] }>([
      "iam",
      "roles",
      "create",
      "lister",
      "--parent",
      "acme",
      "--capability",
      "repo.list,groups.list",
    ]);
    assert.deepEqual(role.capabilities.sort(), ["CAP_IAM_GROUPS_LIST", "CAP_REPO_LIST"]);
    const changed = await json<{ capabilities: string[] }>([
      "iam",
      "roles",
      "update",
      role.uid,
      "--capability",
      "repo.list",
    ]);
    assert.deepEqual(changed.capabilities, ["CAP_REPO_LIST"]);
    await fails(
      ["iam", "roles", "create", "x", "--parent", "acme", "--capability", "fly"],
      2,
      /unknown capability "fly"/,
    );
    assert.ok(
      (await json<{ name: string }[]>(["iam", "roles", "list"])).some((r) => r.name === "registry.pull"),
    );

    const binding = await json<{ uid: string; roleUid: string }>([
      "iam",
      "role-bindings",
      "create",
      "--parent",
      "acme",
      "--identity",
      ci.uid,
      "--role",
      "registry.pull",
    ]);
    const rebound = await json<{ roleUid: string }>([
      "iam",
      "role-bindings",
      "update",
      binding.uid,
      "--role",
      role.uid,
    ]);
    assert.equal(rebound.roleUid, role.uid);
    assert.deepEqual(
      (await json<{ uid: string }[]>(["iam", "role-bindings", "list", "--identity", ci.uid])).map(
        (b) => b.uid,
      ),
      [binding.uid],
    );
    // The identity may list repos (its role) but not create one: PERMISSION_DENIED exits 5.
    const ciToken = await wharf.tokenFor(ci.uid);
    const acme = (await json<{ uid: string }>(["iam", "orgs", "describe", "acme"])).uid;
    await fails(["images", "repos", "create", `${acme}/forbidden`], 5, /PERMISSION_DENIED/, {
      WHARF_TOKEN: ciToken,
    });
    await fails(["iam", "orgs", "list"], 5, /UNAUTHENTICATED/, { WHARF_TOKEN: "not-a-token" });

    await ok(["iam", "role-bindings", "delete", binding.uid]);
    await ok(["iam", "roles", "delete", role.uid]);
    await ok(["iam", "identities", "delete", bot.uid]);
    await ok(["iam", "folders", "delete", "acme/team"]);
    await fails(["iam", "roles", "delete", role.uid], 4, /NOT_FOUND/);
  });

  it("identity providers, group role mappings, invites, account associations and terms", async () => {
    const idp = await json<{ uid: string; oidc: { issuer: string } }>([
      "iam",
      "identity-providers",
      "create",
      "corp",
      "--parent",
      "acme",
      "--issuer",
      "https://login.example.com",
      "--client-id",
      "wharf",
      "--client-secret",
      "s3cret",
      "--default-role",
      "registry.pull",
    ]);
    assert.equal(idp.oidc.issuer, "https://login.example.com");
    const renamed = await json<{ name: string }>([
      "iam",
      "identity-providers",
      "update",
      idp.uid,
      "--name",
      "corporate",
    ]);
    assert.equal(renamed.name, "corporate");
    assert.equal(
      (await json<{ uid: string }>(["iam", "identity-providers", "describe", idp.uid])).uid,
      idp.uid,
    );
    assert.equal(
      (await json<unknown[]>(["iam", "identity-providers", "list", "--parent", "acme"])).length,
      1,
    );
    await fails(
      [
        "iam",
        "identity-providers",
        "create",
        "x",
        "--parent",
        "acme",
        "--client-id",
        "c",
        "--default-role",
        "registry.pull",
      ],
      2,
      /--issuer is required/,
    );

    const mapping = await json<{ uid: string; externalGroupId: string }>([
      "iam",
      "group-role-mappings",
      "create",
      "--identity-provider",
      idp.uid,
      "--external-group",
      "engineers",
      "--role",
      "registry.pull",
    ]);
    assert.equal(mapping.externalGroupId, "engineers");
    assert.equal(
      (await json<unknown[]>(["iam", "group-role-mappings", "list", "--identity-provider", idp.uid])).length,
      1,
    );
    await ok(["iam", "group-role-mappings", "delete", mapping.uid]);
    await ok(["iam", "identity-providers", "delete", idp.uid]);

    const invite = await json<{ uid: string; code: string }>([
      "iam",
      "invites",
      "create",
      "--parent",
      "acme",
      "--role",
      "registry.pull",
      "--ttl",
      "48h",
    ]);
    assert.ok(invite.code.length > 10);
    assert.deepEqual(
      (await json<{ uid: string }[]>(["iam", "invites", "list", "--parent", "acme"])).map((i) => i.uid),
      [invite.uid],
    );
    await fails(
      ["iam", "invites", "create", "--parent", "acme", "--role", "registry.pull", "--ttl", "soon"],
      2,
      /--ttl/,
    );
    // Only a registered person (a root identity, as login creates) redeems a code.
    await fails(["iam", "invites", "accept", invite.code], 5, /PERMISSION_DENIED: .*registered people/);
    const { uid: person, token: patToken } = await registeredPerson(wharf, "pat");
    await fails(
      ["iam", "invites", "accept", "not-a-code"],
      5,
      /PERMISSION_DENIED: .*the invite code is not valid/,
      {
        WHARF_TOKEN: patToken,
      },
    );
    assert.equal(
      (await wharfCli(["iam", "invites", "accept", invite.code], { WHARF_TOKEN: patToken })).code,
      0,
    );
    assert.deepEqual(
      (await json<{ roleUid: string }[]>(["iam", "role-bindings", "list", "--identity", person])).length,
      1,
    );
    await ok(["iam", "invites", "delete", invite.uid]);

    const association = await json<{ uid: string; amazon: { account: string } }>([
      "iam",
      "account-associations",
      "create",
      "aws",
      "--parent",
      "acme",
      "--amazon-account",
      "123456789012",
    ]);
    assert.equal(association.amazon.account, "123456789012");
    const described = await json<{ description: string }>([
      "iam",
      "account-associations",
      "update",
      association.uid,
      "--description",
      "prod",
    ]);
    assert.equal(described.description, "prod");
    assert.equal(
      (await json<unknown[]>(["iam", "account-associations", "list", "--parent", "acme"])).length,
      1,
    );
    assert.equal(
      (await json<{ uid: string }>(["iam", "account-associations", "describe", association.uid])).uid,
      association.uid,
    );
    await ok(["iam", "account-associations", "delete", association.uid]);

    const accepted = await wharfCli(["iam", "terms", "accept", "sfdpa.v1", "--parent", "acme"]);
    assert.equal(accepted.code, 0, accepted.stderr);
    assert.deepEqual(
      (await json<{ docId: string }[]>(["iam", "terms", "list", "--parent", "acme"])).map((t) => t.docId),
      ["sfdpa.v1"],
    );
    await fails(["iam", "terms", "accept", "made-up.v9", "--parent", "acme"], 1, /INVALID_ARGUMENT/);
  });

  it("images: repos, tags, history with --pin and --at, describe and diff, by names", async () => {
    const token = await wharf.registryToken();
    const v1 = await pushImage(wharf, "acme/app", "latest", token, "v1");
    await new Promise((r) => setTimeout(r, 20));
    const between = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    const v2 = await pushImage(wharf, "acme/app", "latest", token, "v2");

    const repo = await json<{ uid: string; name: string }>(["images", "repos", "describe", "acme/app"]);
    assert.equal(repo.name, "app");
    assert.deepEqual(
      (await json<{ name: string }[]>(["images", "repos", "list", "--parent", "acme"])).map((r) => r.name),
      ["app"],
    );
    assert.equal(
      (
        await json<{ description: string }>([
          "images",
          "repos",
          "update",
          "acme/app",
          "--description",
          "the app",
        ])
      ).description,
      "the app",
    );
    const created = await json<{ name: string }>(["images", "repos", "create", "acme/tools"]);
    assert.equal(created.name, "tools");
    await ok(["images", "repos", "delete", "acme/tools"]);
    await fails(["images", "repos", "describe", "acme/tools"], 4, /repository "acme\/tools" not found/);

    await ok(["images", "tags", "create", "acme/app:v1", "--digest", v1.digest]);
    assert.deepEqual(
      (await json<{ name: string; digest: string }[]>(["images", "tags", "list", "acme/app"])).map((t) => [
        t.name,
        t.digest,
      ]),
      [
        ["latest", v2.digest],
        ["v1", v1.digest],
      ],
    );
    assert.equal(await ok(["images", "tags", "list", "acme/app", "-o", "id"]), "latest\nv1\n");
    assert.deepEqual(await json<unknown[]>(["images", "tags", "list", "acme/app", "--deprecated"]), []);
    await ok(["images", "tags", "create", "acme/app:v1-20260101", "--digest", v1.digest]);
    await ok(["images", "tags", "create", "acme/app:v1-r2", "--digest", v1.digest]);
    await ok(["images", "tags", "create", `acme/app:sha256-${"ef".repeat(32)}.sig`, "--digest", v1.digest]);
    assert.equal(
      await ok(["images", "tags", "list", "acme/app", "-o", "id"]),
      "latest\nv1\n",
      "hidden by default",
    );
    assert.equal(
      await ok(["images", "tags", "list", "acme/app", "-o", "id", "--include-dates", "--include-epochs"]),
      "latest\nv1\nv1-20260101\nv1-r2\n",
    );
    assert.equal(
      await ok(["images", "tags", "list", "acme/app", "-o", "id", "--include-referrers"]),
      `latest\nsha256-${"ef".repeat(32)}.sig\nv1\n`,
    );
    for (const tag of ["v1-20260101", "v1-r2", `sha256-${"ef".repeat(32)}.sig`]) {
      await ok(["images", "tags", "delete", `acme/app:${tag}`]);
    }
    await fails(
      ["images", "tags", "create", "acme/app:bad", "--digest", "sha256:nope"],
      1,
      /INVALID_ARGUMENT/,
    );
    await fails(["images", "tags", "create", "app:v1", "--digest", v1.digest], 2, /expected ORG\/REPO/);
    await ok(["images", "tags", "delete", "acme/app:v1"]);
    await fails(["images", "tags", "delete", "acme/app:v1"], 4, /tag "v1" not found/);

    const history = await json<{ digest: string; architectures: string[]; size: number; deleted: boolean }[]>(
      ["images", "history", "acme/app:latest"],
    );
    assert.deepEqual(
      history.map((h) => [h.digest, h.architectures, h.deleted]),
      [
        [v1.digest, ["amd64"], false],
        [v2.digest, ["amd64"], false],
      ],
    );
    assert.ok((history[0]?.size ?? 0) > 0);
    assert.match(
      await ok(["images", "history", "acme/app:latest", "-o", "table"]),
      /TIME.*DIGEST.*ARCHITECTURES.*SIZE/,
    );
    assert.equal(await ok(["images", "history", "acme/app:latest", "--pin"]), `acme/app@${v2.digest}\n`);
    assert.equal(
      await ok(["images", "history", "acme/app:latest", "--pin", "--at", between]),
      `acme/app@${v1.digest}\n`,
    );
    assert.deepEqual(
      (await json<{ digest: string }[]>(["images", "history", "acme/app:latest", "--since", between])).map(
        (h) => h.digest,
      ),
      [v2.digest],
    );
    await fails(
      ["images", "history", "acme/app:latest", "--pin", "--at", "2000-01-01T00:00:00Z"],
      4,
      /pointed to nothing/,
    );
    await fails(
      ["images", "history", "acme/app:latest", "--since", "yesterday"],
      2,
      /--since must be a time/,
    );

    const description = await json<{
      digest: string;
      architectures: { architecture: string; size: number }[];
      referrers: unknown[];
    }>(["images", "describe", "acme/app:latest"]);
    assert.equal(description.digest, v2.digest);
    assert.deepEqual(
      description.architectures.map((a) => a.architecture),
      ["amd64"],
    );
    assert.ok((description.architectures[0]?.size ?? 0) > 0);
    assert.deepEqual(description.referrers, []);
    await fails(["images", "describe", "acme/app:nope"], 4, /not found/);

    const diff = await json<{ change: string; digest: string }[]>([
      "images",
      "diff",
      `acme/app@${v1.digest}`,
      `acme/app@${v2.digest}`,
    ]);
    assert.deepEqual(diff.map((c) => [c.change, c.digest]).sort(), [
      ["+", v2.layerDigests[0]],
      ["-", v1.layerDigests[0]],
    ]);

    // The tag moves back to v1: its record is described like the first one.
    await pushImage(wharf, "acme/app", "latest", token, "v1");
    const again = await json<{ time: string; digest: string; architectures: string[]; size: number }[]>([
      "images",
      "history",
      "acme/app:latest",
    ]);
    assert.deepEqual(
      again.map((h) => h.digest),
      [v1.digest, v2.digest, v1.digest],
    );
    assert.deepEqual(again[2], { ...again[0], time: again[2]?.time });
  });

  it("libraries and events: list, count, versions; subscriptions and deliveries", async () => {
    const counts = await json<{ ecosystem: string; totalCount: string }[]>(["libraries", "count"]);
    assert.ok(Array.isArray(counts));
    assert.deepEqual(await json<unknown[]>(["libraries", "list", "--ecosystem", "python"]), []);
    await fails(
      ["libraries", "list", "--ecosystem", "cobol"],
      2,
      /--ecosystem must be one of java, python, javascript/,
    );
    await fails(["libraries", "versions", "no-such-library"], 1, /INVALID_ARGUMENT: .*artifact_id/);
    await fails(["libraries", "versions", "0".repeat(40)], 4, /NOT_FOUND/);

    const sub = await json<{ uid: string; sink: string }>([
      "events",
      "subscriptions",
      "create",
      "--parent",
      "acme",
      "--sink",
      "http://127.0.0.1:9/wharf",
    ]);
    assert.equal(sub.sink, "http://127.0.0.1:9/wharf");
    assert.equal(
      (await json<{ uid: string }>(["events", "subscriptions", "describe", sub.uid])).uid,
      sub.uid,
    );
    assert.deepEqual(
      (await json<{ uid: string }[]>(["events", "subscriptions", "list", "--parent", "acme"])).map(
        (s) => s.uid,
      ),
      [sub.uid],
    );
    assert.deepEqual(
      await json<unknown[]>(["events", "deliveries", "list", "--subscription", sub.uid, "--failed"]),
      [],
    );
    await fails(
      ["events", "subscriptions", "create", "--parent", "acme", "--sink", "ftp://x"],
      1,
      /INVALID_ARGUMENT/,
    );
    await ok(["events", "subscriptions", "delete", sub.uid]);
    await fails(["events", "subscriptions", "describe", sub.uid], 4, /NOT_FOUND/);
  });

  it("auth: status, a registry token, pull tokens listed and deleted", async () => {
    const status = await json<{ identity: { uid: string }; admin: boolean; expiry: string; apiUrl: string }>([
      "auth",
      "status",
    ]);
    assert.equal(status.admin, true);
    assert.equal(status.apiUrl, wharf.apiUrl);
    assert.ok(Date.parse(status.expiry) > Date.now());
    assert.match(await ok(["auth", "status", "-o", "table"]), /Identity: .*platform administrator/);

    const registryToken = (await ok(["auth", "token", "--audience", "registry"])).trim();
    const claims = JSON.parse(Buffer.from(registryToken.split(".")[1] ?? "", "base64url").toString()) as {
      aud: unknown;
    };
    assert.deepEqual([claims.aud].flat(), [wharf.registryUrl]);

    const created = await ok([
      "auth",
      "pull-token",
      "create",
      "--parent",
      (await json<{ uid: string }>(["iam", "orgs", "describe", "acme"])).uid,
    ]);
    const username = /username: (\S+)/.exec(created)?.[1] as string;
    assert.deepEqual(
      (await json<{ uid: string }[]>(["auth", "pull-token", "list", "--parent", "acme"])).map((p) => p.uid),
      [username],
    );
    const deleted = await wharfCli(["auth", "pull-token", "delete", username]);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.match(deleted.stderr, /deleted pull token .* and its 1 role binding/);
    assert.deepEqual(await json<unknown[]>(["auth", "pull-token", "list", "--parent", "acme"]), []);
    await fails(["auth", "pull-token", "delete", username], 4, /NOT_FOUND/);
  });

  it("completion bash|zsh cover the command tree; help exits 0", async () => {
    const bash = await bin.ok(["completion", "bash"]);
    assert.match(bash, /complete -F _wharf wharf/);
    assert.match(bash, /\['wharf images tags'\]='list create delete restore'/);
    assert.match(bash, /\['wharf'\]='[^']*\bserve\b/);
    const zsh = await ok(["completion", "zsh"]);
    assert.match(zsh, /^#compdef wharf/);
    assert.match(zsh, /'wharf iam roles' 'list create update delete capabilities'/);
    await fails(["completion", "fish"], 2, /bash or zsh/);
    assert.match(await ok(["images", "history", "--help"]), /--pin/);
    assert.match(await ok(["help", "iam", "roles"]), /capabilities/);
  });
});
