import type { Command } from "commander";
import { GroupsService } from "../../../gen/platform/iam/v2/groups_pb.js";
import { IdentitiesService, IdentitySchema } from "../../../gen/platform/iam/v2/identities_pb.js";
import { RoleBindingsService } from "../../../gen/platform/iam/v2/role_bindings_pb.js";
import { listAll } from "../../../sdk/pages.js";
import { exchangeToken } from "../../../sdk/sts.js";
import type { CommandContext } from "../context.js";
import {
  addCredentialHelper,
  containersAuthFile,
  dockerConfigFile,
  rememberRegistry,
} from "../docker-config.js";
import { timeCell, UsageError, type View } from "../output.js";
import { callPlainRoute } from "../plain-http.js";
import { type BindFor, print, subcommand } from "../program.js";
import { groupUid } from "../resolve.js";
import { CLIENT_GROUPS } from "../routing.js";
import { field, protoView } from "../views.js";

/** The `iss` of pull-token identities (see `wharf auth pull-token create`). */
export const PULL_TOKEN_ISSUER = "https://pull-tokens.wharf.invalid";

/**
 * The part of `/auth/v1/ok` this command reads: who the caller is and what each group lets them
 * do. Protobuf JSON leaves empty fields out (no `groups` for someone with no role).
 */
interface WhoAmI {
  identity: { uid: string; name?: string; email?: string };
  admin?: boolean;
  groups?: { uid: string; name: string; role: { uid: string; name: string }; capabilities: string[] }[];
}

/** The claims of a JWT, unverified: for display only (the server verifies). */
export function jwtClaims(token: string): { exp?: number; sub?: string; aud?: string | string[] } {
  try {
    return JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8"));
  } catch {
    return {};
  }
}

type StatusRow = NonNullable<WhoAmI["groups"]>[number];

const statusView: View<StatusRow> = {
  columns: [
    { header: "GROUP", cell: (g) => g.name },
    { header: "ROLE", cell: (g) => g.role.name },
    { header: "CAPABILITIES", cell: (g) => g.capabilities.join(", ") },
  ],
};

const pullTokenView = protoView(IdentitySchema, [
  field("USERNAME", "uid"),
  field("NAME", "name"),
  {
    header: "EXPIRES",
    cell: (i) => (i.relationship.case === "staticKeys" ? timeCell(i.relationship.value.expirationTime) : ""),
  },
]);

/** The services `wharf auth` calls (only these load: see leanClient). */
const SERVICES = {
  iam: { groups: GroupsService, identities: IdentitiesService, roleBindings: RoleBindingsService },
};

/**
 * The client verbs of `wharf auth`: status, token, configure-docker, pull-token list and delete
 * (joining login, logout, pull-token create and revoke, declared in src/cli/server-commands.ts).
 */
export function registerAuth(program: Command, bindFor: BindFor): void {
  const bind = bindFor(SERVICES);
  const auth = subcommand(program, "auth", CLIENT_GROUPS.auth);
  auth
    .command("status")
    .description("who you are, when your token expires, and your capabilities in each group")
    .action(bind(status));
  auth
    .command("token")
    .description(
      "print a valid token: of your login (refreshed when needed), or exchanged for an audience (registry: the registry's; api: the API's)",
    )
    .option("--audience <aud>", "registry, api or a URL (default: the login's own token)")
    .action(
      bind(async (ctx, _args, o: { audience?: string }) => {
        if (o.audience === undefined) {
          // No login is a plain failure (exit 1), as `wharf auth token` always answered scripts.
          const token = await ctx.tokenSource.token().catch((err: Error) => {
            throw new Error(err.message);
          });
          ctx.stdout.write(`${token}\n`);
          return;
        }
        const token = await ctx.tokenSource.token();
        const audience =
          o.audience === "registry"
            ? await ctx.client.registryUrl()
            : o.audience === "api"
              ? ctx.apiUrl
              : o.audience;
        const issued = await exchangeToken(ctx.apiUrl, token, { audience: [audience] }, ctx.fetch);
        ctx.stdout.write(`${issued.token}\n`);
      }),
    );
  auth
    .command("configure-docker")
    .description(
      "make docker, podman and skopeo use your Wharf login for the registry (docker-credential-wharf)",
    )
    .option("--registry <host>", "the registry host (default: the server's)")
    .action(
      bind(async (ctx, _args, o: { registry?: string }) => {
        const host = o.registry ?? new URL(await ctx.client.registryUrl()).host;
        const files = [dockerConfigFile(ctx.env), containersAuthFile(ctx.env)];
        for (const file of files) await addCredentialHelper(file, host);
        await rememberRegistry(ctx.env, host, ctx.apiUrl);
        ctx.stderr.write(
          `${host} now uses docker-credential-wharf in:\n${files.map((f) => `  ${f}\n`).join("")}`,
        );
      }),
    );
  const pull = subcommand(auth, "pull-token", "registry pull credentials");
  pull
    .command("list")
    .description("list the pull tokens of an organization")
    .requiredOption("--parent <org>", "the organization")
    .action(
      bind(async (ctx, _args, o: { parent: string }) => {
        const uidp = { descendantsOf: await groupUid(ctx.client, o.parent) };
        const rows = [];
        for await (const identity of listAll(ctx.client.iam.identities.listIdentities, { uidp })) {
          if (
            identity.relationship.case === "staticKeys" &&
            identity.relationship.value.issuer === PULL_TOKEN_ISSUER
          ) {
            rows.push(identity);
          }
        }
        print(ctx, rows, pullTokenView);
      }),
    );
  pull
    .command("delete <username>")
    .description("revoke a pull token: delete its role bindings, then its identity")
    .action(
      bind(async (ctx, [uid]) => {
        const identity = await ctx.client.iam.identities.getIdentity({ uid });
        if (
          identity.relationship.case !== "staticKeys" ||
          identity.relationship.value.issuer !== PULL_TOKEN_ISSUER
        ) {
          throw new UsageError(`${uid} is not a pull token`);
        }
        let bindings = 0;
        for await (const b of listAll(ctx.client.iam.roleBindings.listRoleBindings, { identity: uid })) {
          await ctx.client.iam.roleBindings.deleteRoleBinding({ uid: b.uid });
          bindings += 1;
        }
        await ctx.client.iam.identities.deleteIdentity({ uid });
        ctx.stderr.write(
          `deleted pull token ${uid} and its ${bindings} role binding${bindings === 1 ? "" : "s"}\n`,
        );
      }),
    );
}

async function status(ctx: CommandContext): Promise<void> {
  const token = await ctx.tokenSource.token();
  const who = (await callPlainRoute(ctx, new URL("/auth/v1/ok", ctx.apiUrl))) as WhoAmI;
  const exp = jwtClaims(token).exp;
  const expiry = exp === undefined ? "" : new Date(exp * 1000).toISOString();
  if (ctx.format === "table") {
    const name = who.identity.name || who.identity.email || who.identity.uid;
    ctx.stdout.write(
      `API:      ${ctx.apiUrl}\nIdentity: ${name} (${who.identity.uid})${who.admin ? ", platform administrator" : ""}\nExpires:  ${expiry}\n`,
    );
    if (who.groups && who.groups.length > 0) print(ctx, who.groups, statusView);
    return;
  }
  const summary = { apiUrl: ctx.apiUrl, ...who, expiry };
  print(ctx, [summary], { columns: [], id: (s) => s.identity.uid }, true);
}
