import { readFile } from "node:fs/promises";
import { Code } from "@connectrpc/connect";
import type { Command } from "commander";
import { GroupsService } from "../../../gen/platform/iam/v2/groups_pb.js";
import { ReposService } from "../../../gen/platform/registry/v2/repos_pb.js";
import {
  type SigningKey,
  SigningKeySchema,
  SigningKeysService,
} from "../../../gen/platform/registry/v2/signing_keys_pb.js";
import { WharfApiError } from "../../../sdk/errors.js";
import { listAll } from "../../../sdk/pages.js";
import type { CommandContext } from "../context.js";
import { timeCell, UsageError } from "../output.js";
import { type BindFor, print, subcommand } from "../program.js";
import { isUid, resolveGroup, resolveRepo } from "../resolve.js";
import { CLIENT_GROUPS } from "../routing.js";
import { field, protoView } from "../views.js";

const keyView = protoView(SigningKeySchema, [
  field("UID", "uid"),
  field("NAME", "name"),
  field("ALGORITHM", "algorithm"),
  { header: "FINGERPRINT", cell: (k) => k.fingerprint.slice(0, 16) },
  { header: "CREATED", cell: (k) => timeCell(k.createTime) },
]);

/** The services `wharf signing-keys` calls (only these load: see leanClient). */
const SERVICES = {
  iam: { groups: GroupsService },
  registry: { repos: ReposService, signingKeys: SigningKeysService },
};

/** Largest PEM file read (the server refuses more than 16 KiB; this only bounds what is read). */
const MAX_PEM_FILE_BYTES = 64 * 1024;

/**
 * The uid of the organization, folder or repo `ref` names: a uid as is; else a group by its path
 * (`acme`, `acme/prod`), failing that a repo (`acme/prod/api`).
 */
async function parentUid(ctx: CommandContext, ref: string): Promise<string> {
  if (isUid(ref)) return ref;
  try {
    return (await resolveGroup(ctx.client, ref)).uid;
  } catch (err) {
    if (!(err instanceof WharfApiError && err.code === Code.NotFound) || !ref.includes("/")) throw err;
  }
  return (await resolveRepo(ctx.client, ref)).uid;
}

/** The text of `path`, or of standard input for `-` (a public key: nothing secret is read). */
async function readPem(path: string): Promise<string> {
  if (path === "-") {
    if (process.stdin.isTTY)
      throw new UsageError("--pem-file - reads the key from a pipe: cat cosign.pub | wharf …");
    let text = "";
    for await (const chunk of process.stdin) {
      text += String(chunk);
      if (text.length > MAX_PEM_FILE_BYTES)
        throw new UsageError("--pem-file -: more than 64 KiB on standard input");
    }
    return text;
  }
  const bytes = await readFile(path).catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(`--pem-file ${path}: ${err.code === "ENOENT" ? "no such file" : err.message}`);
  });
  if (bytes.length > MAX_PEM_FILE_BYTES) throw new UsageError(`--pem-file ${path}: more than 64 KiB`);
  return bytes.toString("utf8");
}

function requireKeyUid(uid: string): string {
  if (!isUid(uid) || !uid.includes("/")) throw new UsageError(`"${uid}" is not a signing key uid`);
  return uid;
}

/**
 * `wharf signing-keys create|list|get|delete`: the public keys organizations, folders and repos
 * trust to sign images (SigningKeysService).
 */
export function registerSigningKeys(program: Command, bindFor: BindFor): void {
  const bind = bindFor(SERVICES);
  const keys = subcommand(program, "signing-keys", CLIENT_GROUPS["signing-keys"]);
  keys
    .command("create <parent>")
    .description(
      "register a public key at an organization, folder or repo (ORG[/FOLDER…], ORG/…/REPO, or a uid)",
    )
    .requiredOption("--name <name>", "the key's name, unique at the parent")
    .requiredOption("--pem-file <file>", "the PEM public key (e.g. cosign.pub); - reads standard input")
    .action(
      bind(async (ctx, [parent]: [string], o: { name: string; pemFile: string }) => {
        const publicKeyPem = await readPem(o.pemFile);
        const key = await ctx.client.registry.signingKeys.createSigningKey({
          parent: await parentUid(ctx, parent),
          signingKey: { name: o.name, publicKeyPem },
        });
        print(ctx, [key], keyView, true);
      }),
    );
  keys
    .command("list")
    .description("list signing keys (with --parent, those registered at it)")
    .option("--parent <parent>", "an organization, folder or repo (path or uid)")
    .action(
      bind(async (ctx, _args, o: { parent?: string }) => {
        const uidp = o.parent === undefined ? undefined : { childrenOf: await parentUid(ctx, o.parent) };
        const out: SigningKey[] = [];
        for await (const key of listAll(ctx.client.registry.signingKeys.listSigningKeys, {
          ...(uidp ? { uidp } : {}),
          orderBy: "name",
        })) {
          out.push(key);
        }
        print(ctx, out, keyView);
      }),
    );
  keys
    .command("get <uid>")
    .description("show a signing key, its PEM included (-o json or yaml)")
    .action(
      bind(async (ctx, [uid]: [string]) => {
        print(
          ctx,
          [await ctx.client.registry.signingKeys.getSigningKey({ uid: requireKeyUid(uid) })],
          keyView,
          true,
        );
      }),
    );
  keys
    .command("delete <uid>")
    .description("delete a signing key: signatures only it verified stop verifying")
    .action(
      bind(async (ctx, [uid]: [string]) => {
        await ctx.client.registry.signingKeys.deleteSigningKey({ uid: requireKeyUid(uid) });
        ctx.stderr.write(`deleted signing key ${uid}\n`);
      }),
    );
}
