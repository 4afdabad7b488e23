// The `wharf` commands that run the server or open its store (serve, gc, admin …) and the login
// commands, declared on the one commander tree. Each action loads its module when it runs, so help
// loads none of the server's code.
import type { Command } from "commander";
import type { ConfigInput } from "../../config/config.js";
import { BlobStoreMismatchError } from "../../storage/blob-store-identity.js";
import { subcommand } from "../client/program.js";
import { CLIENT_GROUPS } from "../client/routing.js";
import type { CommandOutput } from "./command-output.js";
import { addConfigOptions, configInputOf, SERVE_FIELDS, STORE_FIELDS } from "./config-options.js";

/**
 * Where the server-side commands print (gc, admin …, auth pull-token create|revoke: results and
 * failures; `serve` still logs to the process's stderr), and how a non-zero exit code ends the
 * command line.
 */
export interface ServerCommandIo extends CommandOutput {
  env: NodeJS.ProcessEnv;
  /** Ends the command line with `code` (its message already printed). */
  exit(code: number): void;
}

type Run = (options: Record<string, unknown>, command: Command) => Promise<number>;

/**
 * An action running `run` with the command's options (global ones included). A failure prints one
 * line and exits as `wharf` always did: a ConfigError 2, a blob store of another database 1, any
 * other start-up failure 1 with its one-line cause (WHARF_DEBUG=1 adds the stack).
 */
function serverAction(io: ServerCommandIo, run: Run) {
  return async (...args: unknown[]) => {
    const command = args[args.length - 1] as Command;
    let code: number;
    try {
      code = await run(command.optsWithGlobals(), command);
    } catch (err) {
      code = await reportFailure(io, err);
    }
    if (code !== 0) io.exit(code);
  };
}

async function reportFailure(io: ServerCommandIo, err: unknown): Promise<number> {
  const { ConfigError } = await import("../../config/config.js");
  if (err instanceof ConfigError) {
    io.stderr.write(`wharf: ${err.message}\n`);
    return 2;
  }
  if (err instanceof BlobStoreMismatchError) {
    io.stderr.write(`wharf: ${err.message}\n`);
    return 1;
  }
  if (io.env.WHARF_DEBUG) io.stderr.write(`${(err as Error)?.stack ?? err}\n`);
  const { startupFailureLine } = await import("./startup-failure.js");
  io.stderr.write(`wharf: ${startupFailureLine(err)}\n`);
  return 1;
}

const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** The flags of backup and restore: where the metadata and the blobs are. */
const BACKUP_FIELDS: readonly (keyof ConfigInput)[] = [...STORE_FIELDS, "blobStore"];
/** fsck's: those, and the public URLs the events of `--repair` name as their source. */
const FSCK_FIELDS: readonly (keyof ConfigInput)[] = [
  ...BACKUP_FIELDS,
  "publicUrl",
  "registryUrl",
  "apiAddr",
  "registryAddr",
];

/** `wharf serve`, `wharf gc`, `wharf backup`, `wharf restore`, `wharf fsck`, `wharf migrate` and `wharf admin …`. */
export function registerServerCommands(program: Command, io: ServerCommandIo): void {
  addConfigOptions(
    program.command("serve").description("run the platform API, token issuer and registry"),
    SERVE_FIELDS,
  ).action(serverAction(io, async (o) => (await import("./serve.js")).runServe(configInputOf(o))));

  addConfigOptions(
    program
      .command("gc")
      .description(
        "remove manifests and blobs no tag, recent tag history (--window) or push in flight (--grace) can reach; progress on stderr, the report as one JSON line on stdout",
      )
      .option("--window <duration>", "keep digests tag history names this recently", "720h")
      .option("--grace <duration>", "keep anything younger (pushes in flight)", "1h")
      .option("--dry-run", "report what a run would remove now, removing nothing"),
  ).action(
    serverAction(io, async (o) =>
      (await import("./gc.js")).runGc(
        configInputOf(o),
        {
          window: text(o.window) ?? "720h",
          grace: text(o.grace) ?? "1h",
          dryRun: o.dryRun === true,
        },
        io,
      ),
    ),
  );

  addConfigOptions(
    program
      .command("backup")
      .description(
        "back up the database and the blobs it records into a new or empty folder while servers run (SQLite: online backup; PostgreSQL: pg_dump); progress on stderr, the report as one JSON line on stdout",
      )
      .requiredOption("--to <dir>", "the backup folder: must not exist, or be empty"),
    BACKUP_FIELDS,
  ).action(
    serverAction(io, async (o) =>
      (await import("./backup.js")).runBackup(
        configInputOf(o, BACKUP_FIELDS),
        { to: text(o.to) ?? "" },
        io,
        io.env,
      ),
    ),
  );

  addConfigOptions(
    program
      .command("restore")
      .description(
        "restore a wharf backup into an empty database and an empty blob store, verifying every blob's digest; refuses a non-empty target, changing nothing",
      )
      .requiredOption("--from <dir>", "the backup folder (wharf backup --to)"),
    BACKUP_FIELDS,
  ).action(
    serverAction(io, async (o) =>
      (await import("./restore.js")).runRestore(
        configInputOf(o, BACKUP_FIELDS),
        { from: text(o.from) ?? "" },
        io,
        io.env,
      ),
    ),
  );

  addConfigOptions(
    program
      .command("fsck")
      .description(
        "check that every blob a manifest references is in blob storage with its recorded size (--deep: and digest), that every tag's manifest exists and that the store ids match; names the images damage breaks, lists orphans; exits 1 on damage",
      )
      .option("--deep", "also hash every referenced blob (reads every byte)")
      .option(
        "--repair",
        "delete dangling tags (with tag history and events); orphans are left to wharf gc; referenced data is never deleted",
      )
      .option("--json", "print the whole report as JSON instead of the summary"),
    FSCK_FIELDS,
  ).action(
    serverAction(io, async (o) =>
      (await import("./fsck.js")).runFsck(
        configInputOf(o, FSCK_FIELDS),
        { deep: o.deep === true, repair: o.repair === true, json: o.json === true },
        io,
      ),
    ),
  );

  addConfigOptions(
    program
      .command("migrate")
      .description(
        "apply pending database migrations (before a rolling upgrade; servers wait for it), one line per migration or nothing to migrate",
      )
      .option("--dry-run", "list the pending migrations, changing nothing"),
    STORE_FIELDS,
  ).action(
    serverAction(io, async (o) =>
      (await import("./migrate.js")).runMigrate(
        configInputOf(o, STORE_FIELDS),
        { dryRun: o.dryRun === true },
        io,
      ),
    ),
  );

  const admin = program
    .command("admin")
    .description("the platform administrator's commands, run where the data lives");
  addConfigOptions(
    admin
      .command("token")
      .description(
        "print a token of the built-in platform administrator (--ttl at most 24h; signed for the URLs the server recorded)",
      )
      .option("--ttl <duration>", "lifetime, at most 24h", "1h")
      .option("--audience <aud>", "api, registry or a URL", "api"),
  ).action(
    serverAction(io, async (o) =>
      (await import("./admin-token.js")).runAdminToken(
        configInputOf(o),
        {
          ttl: text(o.ttl) ?? "1h",
          audience: text(o.audience) ?? "api",
        },
        io,
      ),
    ),
  );
  const keys = admin.command("keys").description("the issuer's signing keys");
  addConfigOptions(
    keys
      .command("rotate")
      .description(
        "make a new issuer signing key current (every server within seconds); replaced keys verify until their tokens expire",
      ),
  ).action(
    serverAction(io, async (o) => (await import("./admin-keys.js")).runAdminKeysRotate(configInputOf(o), io)),
  );
  addConfigOptions(
    keys.command("list").description("the issuer's signing keys: kid, created, state, retire time"),
  ).action(
    serverAction(io, async (o) => (await import("./admin-keys.js")).runAdminKeysList(configInputOf(o), io)),
  );
  const tokens = admin.command("tokens").description("token revocation");
  addConfigOptions(
    tokens
      .command("revoke")
      .description(
        "withdraw tokens within seconds on every server: S's tokens issued until now (S may get new ones), or every token (of S) with iat before TIME (RFC 3339, not in the future)",
      )
      .option("--subject <s>", "only the tokens of this subject")
      .option("--issued-before <time>", "only tokens issued before this RFC 3339 time"),
  ).action(
    serverAction(io, async (o) =>
      (await import("./admin-tokens.js")).runAdminTokensRevoke(
        configInputOf(o),
        {
          subject: text(o.subject),
          issuedBefore: text(o.issuedBefore),
        },
        io,
      ),
    ),
  );
}

/**
 * `wharf auth login|logout` and `wharf auth pull-token create|revoke` (the client verbs of `auth`
 * join the same commands: src/cli/client/commands/auth.ts). `--api-url` and `--token` are the
 * global flags.
 */
export function registerLoginCommands(program: Command, io: ServerCommandIo): void {
  const auth = subcommand(program, "auth", CLIENT_GROUPS.auth);
  const failing =
    (name: string, run: Run): Run =>
    async (o, command) => {
      try {
        return await run(o, command);
      } catch (err) {
        io.stderr.write(`wharf auth ${name}: ${(err as Error).message}\n`);
        return 1;
      }
    };
  auth
    .command("login")
    .description("log in through the browser; keeps the tokens for later commands")
    .option("--identity-provider <uid>", "an organization's identity provider (default: the server's)")
    .option("--audience <url>", "the audience of the tokens (default: the API)")
    .option("--no-browser", "print the URL to open instead of opening a browser")
    .action(
      serverAction(
        io,
        failing("login", async (o) => {
          const { apiUrlOf } = await import("../client/api-url.js");
          const { login } = await import("../client/auth-login.js");
          await login({
            apiUrl: apiUrlOf(text(o.apiUrl), io.env),
            identityProvider: text(o.identityProvider) ?? "",
            audience: text(o.audience) ?? "",
            browser: o.browser !== false,
            print: (line) => io.stderr.write(`${line}\n`),
          });
          return 0;
        }),
      ),
    );
  auth
    .command("logout")
    .description("forget the stored tokens")
    .action(
      serverAction(
        io,
        failing("logout", async (o) => {
          const { apiUrlOf } = await import("../client/api-url.js");
          const apiUrl = apiUrlOf(text(o.apiUrl), io.env);
          const { logout } = await import("../client/auth-login.js");
          io.stderr.write(`${(await logout(apiUrl)) ? "Logged out of" : "Not logged in to"} ${apiUrl}\n`);
          return 0;
        }),
      ),
    );
  const pull = subcommand(auth, "pull-token", "registry pull credentials");
  pull
    .command("create")
    .description("create registry pull credentials for ORG (token: --token or WHARF_TOKEN)")
    .option("--parent <org>", "the organization uid")
    .option("--ttl <duration>", "lifetime, up to 8760h", "720h")
    .option("--name <name>", "a name for the credentials")
    .action(
      serverAction(io, async (o) =>
        (await import("./pull-token.js")).runPullTokenCreate(pullTokenOptions(o), io.env, io),
      ),
    );
  pull
    .command("revoke")
    .description("revoke them: delete the identity's role bindings, then the identity")
    .option("--identity <uid>", "the pull token's username")
    .action(
      serverAction(io, async (o) =>
        (await import("./pull-token.js")).runPullTokenRevoke(pullTokenOptions(o), io.env, io),
      ),
    );
}

function pullTokenOptions(o: Record<string, unknown>) {
  const values: Record<string, string> = {};
  for (const key of ["parent", "ttl", "name", "identity", "apiUrl", "token"]) {
    const value = text(o[key]);
    if (value !== undefined) values[key] = value;
  }
  return values;
}
