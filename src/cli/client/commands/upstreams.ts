import { Code } from "@connectrpc/connect";
import type { Command } from "commander";
import { GroupsService } from "../../../gen/platform/iam/v2/groups_pb.js";
import {
  type Upstream,
  UpstreamSchema,
  UpstreamsService,
} from "../../../gen/platform/registry/v2/upstreams_pb.js";
import type { WharfClient } from "../../../sdk/client.js";
import { WharfApiError } from "../../../sdk/errors.js";
import { listAll } from "../../../sdk/pages.js";
import { timeCell, UsageError } from "../output.js";
import { type BindFor, print, subcommand } from "../program.js";
import { groupUid, isUid } from "../resolve.js";
import { CLIENT_GROUPS } from "../routing.js";
import { field, protoView } from "../views.js";

const upstreamView = protoView(UpstreamSchema, [
  field("UID", "uid"),
  field("NAME", "name"),
  field("URL", "url"),
  field("USERNAME", "username"),
  { header: "PASSWORD", cell: (u) => (u.hasPassword ? "set" : "") },
  field("TAG TTL", "tagTtl"),
  { header: "UPDATED", cell: (u) => timeCell(u.updateTime) },
]);

/** The services `wharf upstreams` calls (only these load: see leanClient). */
const SERVICES = { iam: { groups: GroupsService }, registry: { upstreams: UpstreamsService } };

/**
 * The password given on standard input (`--password-stdin`, as `docker login` takes it): all of
 * it, one trailing newline removed. Never a flag value: those end up in shell histories and `ps`.
 */
async function passwordFromStdin(): Promise<string> {
  if (process.stdin.isTTY)
    throw new UsageError("--password-stdin reads the password from a pipe: echo … | wharf …");
  let text = "";
  for await (const chunk of process.stdin) text += String(chunk);
  const password = text.replace(/\r?\n$/, "");
  if (password === "") throw new UsageError("--password-stdin: standard input was empty");
  return password;
}

/** The upstream `ref` names: a uid, or `ORG/NAME`. */
async function resolveUpstream(client: WharfClient, ref: string): Promise<Upstream> {
  if (isUid(ref)) {
    return client.registry.upstreams.getUpstream({ uid: ref });
  }
  const [org, name, extra] = ref.split("/");
  if (org === undefined || name === undefined || extra !== undefined) {
    throw new UsageError(`"${ref}" is neither an upstream uid nor ORG/NAME`);
  }
  const orgUid = await groupUid(client, org);
  for await (const upstream of listAll(client.registry.upstreams.listUpstreams, {
    uidp: { childrenOf: orgUid },
  })) {
    if (upstream.name === name) return upstream;
  }
  throw new WharfApiError({ code: Code.NotFound, message: `upstream "${ref}" not found` });
}

interface WriteOptions {
  url?: string;
  username?: string;
  passwordStdin?: boolean;
  clearPassword?: boolean;
  tagTtl?: string;
}

/** `wharf upstreams create|list|get|update|delete`: an organization's pull-through cache upstreams. */
export function registerUpstreams(program: Command, bindFor: BindFor): void {
  const bind = bindFor(SERVICES);
  const upstreams = subcommand(program, "upstreams", CLIENT_GROUPS.upstreams);
  upstreams
    .command("create <org> <name>")
    .description("register an upstream: pulls of ORG/NAME/<path> are served from URL/<path> and cached")
    .requiredOption("--url <url>", "the upstream registry: https://host[:port][/prefix]")
    .option("--username <name>", "the upstream user (anonymous without)")
    .option("--password-stdin", "read the upstream password from standard input")
    .option(
      "--tag-ttl <duration>",
      "how long a cached tag is served before the upstream is asked again (default 10m)",
    )
    .action(
      bind(async (ctx, [org, name]: [string, string], o: WriteOptions) => {
        const upstream = await ctx.client.registry.upstreams.createUpstream({
          parent: await groupUid(ctx.client, org),
          upstream: {
            name,
            url: o.url ?? "",
            username: o.username ?? "",
            password: o.passwordStdin ? await passwordFromStdin() : "",
            tagTtl: o.tagTtl ?? "",
          },
        });
        print(ctx, [upstream], upstreamView, true);
      }),
    );
  upstreams
    .command("list")
    .description("list upstreams (with --org, that organization's)")
    .option("--org <org>", "an organization (name or uid)")
    .action(
      bind(async (ctx, _args, o: { org?: string }) => {
        const uidp = o.org === undefined ? undefined : { childrenOf: await groupUid(ctx.client, o.org) };
        const out: Upstream[] = [];
        for await (const u of listAll(ctx.client.registry.upstreams.listUpstreams, {
          ...(uidp ? { uidp } : {}),
          orderBy: "name",
        })) {
          out.push(u);
        }
        print(ctx, out, upstreamView);
      }),
    );
  upstreams
    .command("get <upstream>")
    .description("show an upstream (ORG/NAME or its uid)")
    .action(
      bind(async (ctx, [ref]: [string]) => {
        print(ctx, [await resolveUpstream(ctx.client, ref)], upstreamView, true);
      }),
    );
  upstreams
    .command("update <upstream>")
    .description("change an upstream's URL, credentials or tag TTL (ORG/NAME or its uid)")
    .option("--url <url>", "the new URL")
    .option("--username <name>", 'the new user ("" for anonymous, with --clear-password)')
    .option("--password-stdin", "read the new password from standard input")
    .option("--clear-password", "remove the stored password")
    .option("--tag-ttl <duration>", "the new tag TTL")
    .action(
      bind(async (ctx, [ref]: [string], o: WriteOptions) => {
        if (o.passwordStdin && o.clearPassword)
          throw new UsageError("give --password-stdin or --clear-password, not both");
        const paths = [
          ...(o.url === undefined ? [] : ["url"]),
          ...(o.username === undefined ? [] : ["username"]),
          ...(o.passwordStdin || o.clearPassword ? ["password"] : []),
          ...(o.tagTtl === undefined ? [] : ["tag_ttl"]),
        ];
        if (paths.length === 0) {
          throw new UsageError("give --url, --username, --password-stdin, --clear-password or --tag-ttl");
        }
        const current = await resolveUpstream(ctx.client, ref);
        const upstream = await ctx.client.registry.upstreams.updateUpstream({
          upstream: {
            uid: current.uid,
            url: o.url ?? "",
            username: o.username ?? "",
            password: o.passwordStdin ? await passwordFromStdin() : "",
            tagTtl: o.tagTtl ?? "",
          },
          updateMask: { paths },
        });
        print(ctx, [upstream], upstreamView, true);
      }),
    );
  upstreams
    .command("delete <upstream>")
    .description("delete an upstream (what it cached stays, as ordinary repositories)")
    .action(
      bind(async (ctx, [ref]: [string]) => {
        const { uid } = await resolveUpstream(ctx.client, ref);
        await ctx.client.registry.upstreams.deleteUpstream({ uid });
        ctx.stderr.write(`deleted upstream ${ref}\n`);
      }),
    );
}
