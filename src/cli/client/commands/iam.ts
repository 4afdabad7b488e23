import { readFileSync } from "node:fs";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Command } from "commander";
import { AccountAssociationSchema } from "../../../gen/platform/iam/v2/account_associations_pb.js";
import { ExternalGroupRoleMappingSchema } from "../../../gen/platform/iam/v2/external_group_role_mappings_pb.js";
import { GroupInviteSchema } from "../../../gen/platform/iam/v2/group_invites_pb.js";
import { GroupSchema } from "../../../gen/platform/iam/v2/groups_pb.js";
import { IdentitySchema } from "../../../gen/platform/iam/v2/identities_pb.js";
import { IdentityProviderSchema } from "../../../gen/platform/iam/v2/identity_providers_pb.js";
import { RoleBindingSchema } from "../../../gen/platform/iam/v2/role_bindings_pb.js";
import { RoleSchema } from "../../../gen/platform/iam/v2/roles_pb.js";
import { TermsAcceptanceSchema } from "../../../gen/platform/iam/v2/terms_pb.js";
import { listAll } from "../../../sdk/pages.js";
import { IAM_SERVICES } from "../../../sdk/services/iam.js";
import { CAPABILITIES, capabilityName, parseCapability } from "../capabilities.js";
import type { CommandContext } from "../context.js";
import { timeCell, UsageError } from "../output.js";
import { callPlainRoute } from "../plain-http.js";
import { type Bind, type BindFor, collect, print, subcommand } from "../program.js";
import { groupUid, resolveGroup } from "../resolve.js";
import { CLIENT_GROUPS } from "../routing.js";
import { field, protoView } from "../views.js";

const groupView = protoView(GroupSchema, [
  field("UID", "uid"),
  field("NAME", "name"),
  field("DESCRIPTION", "description"),
  { header: "CREATED", cell: (g) => timeCell(g.createTime) },
]);

const identityView = protoView(IdentitySchema, [
  field("UID", "uid"),
  field("NAME", "name"),
  {
    header: "KIND",
    cell: (i) =>
      i.relationship.case === "staticKeys"
        ? "static keys"
        : i.relationship.case === "claimMatch"
          ? "claim match"
          : "",
  },
  { header: "ISSUER", cell: (i) => i.relationship.value?.issuer ?? "" },
  { header: "SUBJECT", cell: (i) => i.relationship.value?.subject ?? "" },
  field("DESCRIPTION", "description"),
]);

const roleView = protoView(RoleSchema, [
  field("UID", "uid"),
  field("NAME", "name"),
  { header: "CAPABILITIES", cell: (r) => r.capabilities.map(capabilityName).join(", ") },
]);

const bindingView = protoView(RoleBindingSchema, [
  field("UID", "uid"),
  { header: "IDENTITY", cell: (b) => b.identity?.name || b.identityUid },
  { header: "ROLE", cell: (b) => b.role?.name || b.roleUid },
  { header: "GROUP", cell: (b) => b.group?.name ?? "" },
]);

const providerView = protoView(IdentityProviderSchema, [
  field("UID", "uid"),
  field("NAME", "name"),
  { header: "ISSUER", cell: (p) => p.configuration.value?.issuer ?? "" },
  { header: "CLIENT ID", cell: (p) => p.configuration.value?.clientId ?? "" },
  field("DEFAULT ROLE", "defaultRole"),
]);

const inviteView = protoView(GroupInviteSchema, [
  field("UID", "uid"),
  { header: "ROLE", cell: (i) => i.role?.name || i.roleUid },
  field("EMAIL", "email"),
  { header: "EXPIRES", cell: (i) => timeCell(i.expirationTime) },
  { header: "SINGLE USE", cell: (i) => (i.singleUse ? "yes" : "no") },
  field("CODE", "code"),
]);

const associationView = protoView(AccountAssociationSchema, [
  field("UID", "uid"),
  field("NAME", "name"),
  {
    header: "ACCOUNTS",
    cell: (a) =>
      [
        a.amazon ? `amazon ${a.amazon.account}` : "",
        a.google ? `google ${a.google.projectId}` : "",
        a.azure ? `azure ${a.azure.tenantId}` : "",
        a.github ? "github" : "",
      ]
        .filter((s) => s !== "")
        .join(", "),
  },
]);

const mappingView = protoView(ExternalGroupRoleMappingSchema, [
  field("UID", "uid"),
  field("IDENTITY PROVIDER", "identityProviderUid"),
  field("EXTERNAL GROUP", "externalGroupId"),
  field("ROLE", "roleUid"),
]);

const termsView = protoView(
  TermsAcceptanceSchema,
  [
    field("DOCUMENT", "docId"),
    field("ACCEPTED BY", "acceptedBy"),
    field("ORGANIZATION", "orgUid"),
    { header: "TIME", cell: (t) => timeCell(t.createTime) },
  ],
  (t) => t.docId,
);

const capabilityView = {
  columns: [
    { header: "NAME", cell: (c: (typeof CAPABILITIES)[number]) => c.shortName },
    { header: "ENUM", cell: (c: (typeof CAPABILITIES)[number]) => c.enumName },
  ],
  id: (c: (typeof CAPABILITIES)[number]) => c.shortName || c.enumName,
  json: (c: (typeof CAPABILITIES)[number]) => ({ name: c.shortName, enum: c.enumName }),
};

async function collectAll<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** The uidp filter of a list: under `--parent` (resolved), else everything the caller sees. */
async function under(ctx: CommandContext, parent: unknown) {
  return typeof parent === "string" ? { descendantsOf: await groupUid(ctx.client, parent) } : undefined;
}

function requireOption(options: Record<string, unknown>, name: string, flag = name): string {
  const value = options[name];
  if (typeof value !== "string" || value === "") throw new UsageError(`--${flag} is required`);
  return value;
}

function mask(options: Record<string, unknown>, fields: Record<string, string>): { paths: string[] } {
  const paths = Object.entries(fields)
    .filter(([flag]) => options[flag] !== undefined)
    .map(([, path]) => path);
  if (paths.length === 0)
    throw new UsageError(
      `nothing to update: give ${Object.keys(fields)
        .map((f) => `--${f}`)
        .join(", ")}`,
    );
  return { paths };
}

/** The services `wharf iam` calls: the IAM domain (only these load: see leanClient). */
const SERVICES = { iam: IAM_SERVICES };

/** `wharf iam …`: organizations, folders, identities, roles, bindings, providers, invites, terms. */
export function registerIam(program: Command, bindFor: BindFor): void {
  const bind = bindFor(SERVICES);
  const iam = subcommand(program, "iam", CLIENT_GROUPS.iam);
  registerGroups(iam, bind);
  registerIdentities(iam, bind);
  registerRoles(iam, bind);
  registerRoleBindings(iam, bind);
  registerIdentityProviders(iam, bind);
  registerInvites(iam, bind);
  registerAccountAssociations(iam, bind);
  registerGroupRoleMappings(iam, bind);
  registerTerms(iam, bind);
}

function registerGroups(iam: Command, bind: Bind): void {
  const orgs = iam.command("organizations").alias("orgs").description("organizations (top-level groups)");
  orgs
    .command("list")
    .description("list the organizations you can see")
    .option("--name <name>", "only the one with this name")
    .action(
      bind(async (ctx, _args, o) => {
        const request = { uidp: { inRoot: true }, name: (o.name as string) ?? "", orderBy: "name" };
        print(ctx, await collectAll(listAll(ctx.client.iam.groups.listGroups, request)), groupView);
      }),
    );
  orgs
    .command("create <name>")
    .description("create an organization")
    .option("--description <text>", "what it is for")
    .action(
      bind(async (ctx, [name], o) => {
        const group = await ctx.client.iam.groups.createGroup({
          parent: "",
          group: { name, description: (o.description as string) ?? "" },
        });
        print(ctx, [group], groupView, true);
      }),
    );
  orgs
    .command("describe <org>")
    .description("show an organization (by name or uid)")
    .action(
      bind(async (ctx, [org]) =>
        print(ctx, [await resolveGroup(ctx.client, org as string)], groupView, true),
      ),
    );
  orgs
    .command("delete <org>")
    .description("delete an organization (by name or uid)")
    .action(
      bind(async (ctx, [org]) => {
        const uid = await groupUid(ctx.client, org as string);
        await ctx.client.iam.groups.deleteGroup({ uid });
        ctx.stderr.write(`deleted organization ${uid}\n`);
      }),
    );

  const folders = iam.command("folders").description("folders (groups inside an organization)");
  folders
    .command("list")
    .description("list the folders of an organization")
    .requiredOption("--parent <org>", "the organization (name or uid)")
    .action(
      bind(async (ctx, _args, o) => {
        const parent = await groupUid(ctx.client, o.parent as string);
        const uidp = { descendantsOf: parent };
        const all = await collectAll(listAll(ctx.client.iam.groups.listGroups, { uidp, orderBy: "name" }));
        // descendants_of includes the group itself: the folders are the others.
        print(
          ctx,
          all.filter((g) => g.uid !== parent),
          groupView,
        );
      }),
    );
  folders
    .command("create <name>")
    .description("create a folder")
    .requiredOption("--parent <group>", "the organization or folder it goes in (ORG[/FOLDER] or uid)")
    .option("--description <text>", "what it is for")
    .action(
      bind(async (ctx, [name], o) => {
        const parent = await groupUid(ctx.client, o.parent as string);
        const group = await ctx.client.iam.groups.createGroup({
          parent,
          group: { name, description: (o.description as string) ?? "" },
        });
        print(ctx, [group], groupView, true);
      }),
    );
  folders
    .command("describe <folder>")
    .description("show a folder (ORG/FOLDER or uid)")
    .action(
      bind(async (ctx, [f]) => print(ctx, [await resolveGroup(ctx.client, f as string)], groupView, true)),
    );
  folders
    .command("delete <folder>")
    .description("delete a folder (ORG/FOLDER or uid)")
    .action(
      bind(async (ctx, [f]) => {
        const uid = await groupUid(ctx.client, f as string);
        await ctx.client.iam.groups.deleteGroup({ uid });
        ctx.stderr.write(`deleted folder ${uid}\n`);
      }),
    );
}

function identityRelationship(o: Record<string, unknown>) {
  if (typeof o.issuerKeys === "string") {
    const keys = o.issuerKeys.startsWith("{") ? o.issuerKeys : readFileSync(o.issuerKeys, "utf8");
    if (!o.identityIssuer || !o.subject)
      throw new UsageError("static keys need --identity-issuer and --subject");
    return {
      case: "staticKeys" as const,
      value: {
        issuer: o.identityIssuer as string,
        subject: o.subject as string,
        issuerKeys: keys,
        audiences: (o.audience as string[] | undefined) ?? [],
        ...(o.expiration ? { expirationTime: timestampFromDate(new Date(o.expiration as string)) } : {}),
      },
    };
  }
  if (o.identityIssuer || o.subject || o.issuerPattern || o.subjectPattern) {
    return {
      case: "claimMatch" as const,
      value: {
        issuer: (o.identityIssuer as string) ?? "",
        subject: (o.subject as string) ?? "",
        issuerPattern: (o.issuerPattern as string) ?? "",
        subjectPattern: (o.subjectPattern as string) ?? "",
        audience: ((o.audience as string[] | undefined) ?? [])[0] ?? "",
      },
    };
  }
  return undefined;
}

function registerIdentities(iam: Command, bind: Bind): void {
  const ids = iam.command("identities").description("identities: people, CI jobs, services");
  ids
    .command("list")
    .description("list identities")
    .option("--parent <group>", "only those under this organization or folder")
    .option("--name <name>", "only the one with this name")
    .action(
      bind(async (ctx, _args, o) => {
        const uidp = await under(ctx, o.parent);
        const request = { ...(uidp ? { uidp } : {}), name: (o.name as string) ?? "", orderBy: "name" };
        print(
          ctx,
          await collectAll(listAll(ctx.client.iam.identities.listIdentities, request)),
          identityView,
        );
      }),
    );
  const relationshipOptions = (c: Command) =>
    c
      .option("--description <text>", "what it is for")
      .option("--identity-issuer <url>", "the issuer of its tokens (claim match or static keys)")
      .option("--subject <sub>", "the subject of its tokens")
      .option("--issuer-pattern <regex>", "issuer as a pattern (claim match)")
      .option("--subject-pattern <regex>", "subject as a pattern (claim match)")
      .option("--audience <aud>", "audience of its tokens (repeatable)", collect)
      .option("--issuer-keys <file|json>", "a JWKS: makes a static-keys identity")
      .option("--expiration <time>", "when static keys stop working (RFC 3339)");
  relationshipOptions(
    ids
      .command("create <name>")
      .description("create an identity (with --identity-issuer/--subject: one that exchanges tokens)")
      .requiredOption("--parent <group>", "the organization or folder it belongs to"),
  ).action(
    bind(async (ctx, [name], o) => {
      const parent = await groupUid(ctx.client, o.parent as string);
      const relationship = identityRelationship(o);
      const identity = await ctx.client.iam.identities.createIdentity({
        parent,
        identity: {
          name,
          description: (o.description as string) ?? "",
          ...(relationship ? { relationship } : {}),
        },
      });
      print(ctx, [identity], identityView, true);
    }),
  );
  ids
    .command("describe <uid>")
    .description("show an identity")
    .action(
      bind(async (ctx, [uid]) =>
        print(ctx, [await ctx.client.iam.identities.getIdentity({ uid })], identityView, true),
      ),
    );
  relationshipOptions(
    ids.command("update <uid>").description("change an identity").option("--name <name>", "new name"),
  ).action(
    bind(async (ctx, [uid], o) => {
      const relationship = identityRelationship(o);
      const paths = [
        ...(o.name !== undefined ? ["name"] : []),
        ...(o.description !== undefined ? ["description"] : []),
        ...(relationship ? [relationship.case === "staticKeys" ? "static_keys" : "claim_match"] : []),
      ];
      if (paths.length === 0)
        throw new UsageError("nothing to update: give --name, --description or a relationship");
      const identity = await ctx.client.iam.identities.updateIdentity({
        identity: {
          uid,
          name: (o.name as string) ?? "",
          description: (o.description as string) ?? "",
          ...(relationship ? { relationship } : {}),
        },
        updateMask: { paths },
      });
      print(ctx, [identity], identityView, true);
    }),
  );
  ids
    .command("delete <uid>")
    .description("delete an identity (its role bindings first)")
    .action(
      bind(async (ctx, [uid]) => {
        await ctx.client.iam.identities.deleteIdentity({ uid });
        ctx.stderr.write(`deleted identity ${uid}\n`);
      }),
    );
}

function registerRoles(iam: Command, bind: Bind): void {
  const roles = iam.command("roles").description("roles: named sets of capabilities");
  roles
    .command("list")
    .description("list roles (built-in ones and those of your groups)")
    .option("--parent <group>", "only those defined under this group")
    .option("--name <name>", "only the one with this name")
    .action(
      bind(async (ctx, _args, o) => {
        const uidp = await under(ctx, o.parent);
        const request = { ...(uidp ? { uidp } : {}), name: (o.name as string) ?? "", orderBy: "name" };
        print(ctx, await collectAll(listAll(ctx.client.iam.roles.listRoles, request)), roleView);
      }),
    );
  roles
    .command("create <name>")
    .description("create a custom role")
    .requiredOption("--parent <group>", "the organization or folder it belongs to")
    .requiredOption(
      "--capability <cap>",
      "a capability, e.g. repo.list (repeatable, or comma-separated)",
      collect,
    )
    .option("--description <text>", "what it is for")
    .action(
      bind(async (ctx, [name], o) => {
        const role = await ctx.client.iam.roles.createRole({
          parent: await groupUid(ctx.client, o.parent as string),
          role: {
            name,
            description: (o.description as string) ?? "",
            capabilities: (o.capability as string[]).map(parseCapability),
          },
        });
        print(ctx, [role], roleView, true);
      }),
    );
  roles
    .command("update <uid>")
    .description("change a custom role")
    .option("--name <name>", "new name")
    .option("--description <text>", "new description")
    .option("--capability <cap>", "its capabilities, replacing the old (repeatable)", collect)
    .action(
      bind(async (ctx, [uid], o) => {
        const role = await ctx.client.iam.roles.updateRole({
          role: {
            uid,
            name: (o.name as string) ?? "",
            description: (o.description as string) ?? "",
            capabilities: ((o.capability as string[] | undefined) ?? []).map(parseCapability),
          },
          updateMask: mask(o, { name: "name", description: "description", capability: "capabilities" }),
        });
        print(ctx, [role], roleView, true);
      }),
    );
  roles
    .command("delete <uid>")
    .description("delete a custom role")
    .action(
      bind(async (ctx, [uid]) => {
        await ctx.client.iam.roles.deleteRole({ uid });
        ctx.stderr.write(`deleted role ${uid}\n`);
      }),
    );
  roles
    .command("capabilities")
    .description("list the capabilities a role can hold")
    .action(bind(async (ctx) => print(ctx, CAPABILITIES, capabilityView)));
}

function registerRoleBindings(iam: Command, bind: Bind): void {
  const rb = iam.command("role-bindings").description("role bindings: an identity holds a role in a group");
  rb.command("list")
    .description("list role bindings")
    .option("--parent <group>", "only those in this organization or folder")
    .option("--identity <uid>", "only those of this identity")
    .action(
      bind(async (ctx, _args, o) => {
        const uidp = await under(ctx, o.parent);
        const request = { ...(uidp ? { uidp } : {}), identity: (o.identity as string) ?? "" };
        print(
          ctx,
          await collectAll(listAll(ctx.client.iam.roleBindings.listRoleBindings, request)),
          bindingView,
        );
      }),
    );
  rb.command("create")
    .description("bind an identity to a role in a group")
    .requiredOption("--parent <group>", "the organization or folder")
    .requiredOption("--identity <uid>", "the identity")
    .requiredOption("--role <role>", "the role (uid, or the name of a built-in role such as registry.pull)")
    .action(
      bind(async (ctx, _args, o) => {
        const binding = await ctx.client.iam.roleBindings.createRoleBinding({
          parent: await groupUid(ctx.client, o.parent as string),
          roleBinding: { identityUid: o.identity as string, roleUid: await roleUid(ctx, o.role as string) },
        });
        print(ctx, [binding], bindingView, true);
      }),
    );
  rb.command("update <uid>")
    .description("give a binding another role")
    .requiredOption("--role <role>", "the new role (uid or built-in name)")
    .action(
      bind(async (ctx, [uid], o) => {
        const binding = await ctx.client.iam.roleBindings.updateRoleBinding({
          roleBinding: { uid, roleUid: await roleUid(ctx, o.role as string) },
          updateMask: { paths: ["role_uid"] },
        });
        print(ctx, [binding], bindingView, true);
      }),
    );
  rb.command("delete <uid>")
    .description("delete a role binding")
    .action(
      bind(async (ctx, [uid]) => {
        await ctx.client.iam.roleBindings.deleteRoleBinding({ uid });
        ctx.stderr.write(`deleted role binding ${uid}\n`);
      }),
    );
}

/** A role's uid: a uid as is, else the role of that name the caller can see. */
async function roleUid(ctx: CommandContext, ref: string): Promise<string> {
  if (/^[0-9a-f]{40}(\/[0-9a-f]{16})*$/.test(ref)) return ref;
  for await (const role of listAll(ctx.client.iam.roles.listRoles, { name: ref })) return role.uid;
  throw new UsageError(`no role named "${ref}"`);
}

function registerIdentityProviders(iam: Command, bind: Bind): void {
  const idp = iam
    .command("identity-providers")
    .description("OpenID Connect providers people of a group log in with");
  idp
    .command("list")
    .description("list identity providers")
    .option("--parent <group>", "only those of this group")
    .action(
      bind(async (ctx, _args, o) => {
        const uidp = await under(ctx, o.parent);
        const items = listAll(ctx.client.iam.identityProviders.listIdentityProviders, uidp ? { uidp } : {});
        print(ctx, await collectAll(items), providerView);
      }),
    );
  const oidcOptions = (c: Command) =>
    c
      .option("--issuer <url>", "the OIDC issuer")
      .option("--client-id <id>", "Wharf's client id there")
      .option("--client-secret <secret>", "its secret")
      .option("--default-role <role>", "role of people who log in through it (uid or built-in name)")
      .option("--description <text>", "what it is for");
  oidcOptions(
    idp
      .command("create <name>")
      .description("add an identity provider")
      .requiredOption("--parent <group>", "the organization"),
  ).action(
    bind(async (ctx, [name], o) => {
      const provider = await ctx.client.iam.identityProviders.createIdentityProvider({
        parent: await groupUid(ctx.client, o.parent as string),
        identityProvider: {
          name,
          description: (o.description as string) ?? "",
          defaultRole: await roleUid(ctx, requireOption(o, "defaultRole", "default-role")),
          configuration: {
            case: "oidc",
            value: {
              issuer: requireOption(o, "issuer"),
              clientId: requireOption(o, "clientId", "client-id"),
              clientSecret: (o.clientSecret as string) ?? "",
            },
          },
        },
      });
      print(ctx, [provider], providerView, true);
    }),
  );
  idp
    .command("describe <uid>")
    .description("show an identity provider")
    .action(
      bind(async (ctx, [uid]) =>
        print(ctx, [await ctx.client.iam.identityProviders.getIdentityProvider({ uid })], providerView, true),
      ),
    );
  oidcOptions(
    idp
      .command("update <uid>")
      .description("change an identity provider")
      .option("--name <name>", "new name"),
  ).action(
    bind(async (ctx, [uid], o) => {
      const current = await ctx.client.iam.identityProviders.getIdentityProvider({ uid });
      const oidc = current.configuration.case === "oidc" ? current.configuration.value : undefined;
      const paths = mask(o, {
        name: "name",
        description: "description",
        defaultRole: "default_role",
        issuer: "oidc.issuer",
        clientId: "oidc.client_id",
        clientSecret: "oidc.client_secret",
      }).paths;
      const provider = await ctx.client.iam.identityProviders.updateIdentityProvider({
        identityProvider: {
          uid,
          name: (o.name as string) ?? current.name,
          description: (o.description as string) ?? current.description,
          defaultRole:
            o.defaultRole === undefined ? current.defaultRole : await roleUid(ctx, o.defaultRole as string),
          configuration: {
            case: "oidc",
            value: {
              additionalScopes: oidc?.additionalScopes ?? [],
              groupsClaim: oidc?.groupsClaim ?? "",
              pkceEnabled: oidc?.pkceEnabled ?? false,
              ...(oidc ? { correlationRule: oidc.correlationRule } : {}),
              issuer: (o.issuer as string) ?? oidc?.issuer ?? "",
              clientId: (o.clientId as string) ?? oidc?.clientId ?? "",
              clientSecret: (o.clientSecret as string) ?? "",
            },
          },
        },
        updateMask: { paths },
      });
      print(ctx, [provider], providerView, true);
    }),
  );
  idp
    .command("delete <uid>")
    .description("delete an identity provider")
    .action(
      bind(async (ctx, [uid]) => {
        await ctx.client.iam.identityProviders.deleteIdentityProvider({ uid });
        ctx.stderr.write(`deleted identity provider ${uid}\n`);
      }),
    );
}

function registerInvites(iam: Command, bind: Bind): void {
  const inv = iam.command("invites").description("invite codes that bind whoever redeems them to a role");
  inv
    .command("create")
    .description("create an invite code")
    .requiredOption("--parent <group>", "the organization or folder")
    .requiredOption("--role <role>", "the role it grants (uid or built-in name)")
    .option("--email <email>", "only this person may redeem it")
    .option("--ttl <duration>", "how long it is valid, e.g. 48h (default: the server's)")
    .option("--single-use", "it works once")
    .action(
      bind(async (ctx, _args, o) => {
        const ttl = o.ttl === undefined ? undefined : durationSeconds(o.ttl as string);
        const invite = await ctx.client.iam.groupInvites.createGroupInvite({
          parent: await groupUid(ctx.client, o.parent as string),
          invite: {
            roleUid: await roleUid(ctx, o.role as string),
            email: (o.email as string) ?? "",
            singleUse: o.singleUse === true,
            ...(ttl === undefined ? {} : { ttl: { seconds: BigInt(ttl), nanos: 0 } }),
          },
        });
        print(ctx, [invite], { ...inviteView, id: (i) => i.code }, true);
      }),
    );
  inv
    .command("list")
    .description("list invites")
    .option("--parent <group>", "only those of this group")
    .action(
      bind(async (ctx, _args, o) => {
        const uidp = await under(ctx, o.parent);
        print(
          ctx,
          await collectAll(listAll(ctx.client.iam.groupInvites.listGroupInvites, uidp ? { uidp } : {})),
          inviteView,
        );
      }),
    );
  inv
    .command("delete <uid>")
    .description("delete an invite")
    .action(
      bind(async (ctx, [uid]) => {
        await ctx.client.iam.groupInvites.deleteGroupInvite({ uid });
        ctx.stderr.write(`deleted invite ${uid}\n`);
      }),
    );
  inv
    .command("accept <code>")
    .description("redeem an invite code: you get its role in its group")
    .action(
      bind(async (ctx, [code]) => {
        const url = new URL("/auth/v1/register", ctx.apiUrl);
        const body = await callPlainRoute(ctx, url, "POST", { code });
        ctx.stdout.write(
          ctx.format === "yaml"
            ? (await import("yaml")).stringify(body)
            : `${JSON.stringify(body, null, 2)}\n`,
        );
      }),
    );
}

function durationSeconds(value: string): number {
  const match = /^(\d+)(s|m|h|d)$/.exec(value);
  if (!match) throw new UsageError(`--ttl must be a duration like 48h or 7d (got "${value}")`);
  const unit = { s: 1, m: 60, h: 3600, d: 86400 }[match[2] as "s" | "m" | "h" | "d"];
  return Number(match[1]) * unit;
}

function registerAccountAssociations(iam: Command, bind: Bind): void {
  const aa = iam.command("account-associations").description("cloud accounts associated with a group");
  aa.command("list")
    .description("list account associations")
    .option("--parent <group>", "only those of this group")
    .action(
      bind(async (ctx, _args, o) => {
        const uidp = await under(ctx, o.parent);
        const items = listAll(
          ctx.client.iam.accountAssociations.listAccountAssociations,
          uidp ? { uidp } : {},
        );
        print(ctx, await collectAll(items), associationView);
      }),
    );
  const accountOptions = (c: Command) =>
    c
      .option("--amazon-account <id>", "an AWS account id")
      .option("--google-project-id <id>", "a Google Cloud project id")
      .option("--google-project-number <n>", "its number")
      .option("--azure-tenant-id <id>", "an Azure tenant")
      .option("--description <text>", "what it is for");
  const association = (o: Record<string, unknown>) => ({
    description: (o.description as string) ?? "",
    ...(o.amazonAccount ? { amazon: { account: o.amazonAccount as string } } : {}),
    ...(o.googleProjectId
      ? {
          google: {
            projectId: o.googleProjectId as string,
            projectNumber: (o.googleProjectNumber as string) ?? "",
          },
        }
      : {}),
    ...(o.azureTenantId ? { azure: { tenantId: o.azureTenantId as string } } : {}),
  });
  accountOptions(
    aa
      .command("create <name>")
      .description("associate cloud accounts")
      .requiredOption("--parent <group>", "the group"),
  ).action(
    bind(async (ctx, [name], o) => {
      const created = await ctx.client.iam.accountAssociations.createAccountAssociation({
        parent: await groupUid(ctx.client, o.parent as string),
        accountAssociation: { name, ...association(o) },
      });
      print(ctx, [created], associationView, true);
    }),
  );
  aa.command("describe <uid>")
    .description("show an account association")
    .action(
      bind(async (ctx, [uid]) =>
        print(
          ctx,
          [await ctx.client.iam.accountAssociations.getAccountAssociation({ uid })],
          associationView,
          true,
        ),
      ),
    );
  accountOptions(aa.command("update <uid>").description("change an account association")).action(
    bind(async (ctx, [uid], o) => {
      const updated = await ctx.client.iam.accountAssociations.updateAccountAssociation({
        accountAssociation: { uid, ...association(o) },
        updateMask: mask(o, {
          description: "description",
          amazonAccount: "amazon",
          googleProjectId: "google",
          azureTenantId: "azure",
        }),
      });
      print(ctx, [updated], associationView, true);
    }),
  );
  aa.command("delete <uid>")
    .description("delete an account association")
    .action(
      bind(async (ctx, [uid]) => {
        await ctx.client.iam.accountAssociations.deleteAccountAssociation({ uid });
        ctx.stderr.write(`deleted account association ${uid}\n`);
      }),
    );
}

function registerGroupRoleMappings(iam: Command, bind: Bind): void {
  const m = iam
    .command("group-role-mappings")
    .description("roles given to members of an identity provider's external groups");
  m.command("list")
    .description("list mappings")
    .option("--parent <group>", "only those of this group")
    .option("--identity-provider <uid>", "only those of this provider")
    .action(
      bind(async (ctx, _args, o) => {
        const uidp = await under(ctx, o.parent);
        const request = {
          ...(uidp ? { uidp } : {}),
          identityProviderUid: (o.identityProvider as string) ?? "",
        };
        const items = listAll(
          ctx.client.iam.externalGroupRoleMappings.listExternalGroupRoleMappings,
          request,
        );
        print(ctx, await collectAll(items), mappingView);
      }),
    );
  m.command("create")
    .description("map an external group of an identity provider to a role in its organization")
    .requiredOption("--identity-provider <uid>", "the identity provider")
    .requiredOption("--external-group <id>", "the group id in the provider's groups claim")
    .requiredOption("--role <role>", "the role (uid or built-in name)")
    .action(
      bind(async (ctx, _args, o) => {
        const provider = o.identityProvider as string;
        const created = await ctx.client.iam.externalGroupRoleMappings.createExternalGroupRoleMapping({
          parent: provider,
          mapping: {
            externalGroupId: o.externalGroup as string,
            roleUid: await roleUid(ctx, o.role as string),
            // The role applies in the provider's organization: the root of its uid.
            scope: provider.split("/")[0] as string,
          },
        });
        print(ctx, [created], mappingView, true);
      }),
    );
  m.command("delete <uid>")
    .description("delete a mapping")
    .action(
      bind(async (ctx, [uid]) => {
        await ctx.client.iam.externalGroupRoleMappings.deleteExternalGroupRoleMapping({ uid });
        ctx.stderr.write(`deleted group role mapping ${uid}\n`);
      }),
    );
}

function registerTerms(iam: Command, bind: Bind): void {
  const terms = iam.command("terms").description("legal documents an organization accepted");
  terms
    .command("accept <documents...>")
    .description("accept documents for an organization")
    .requiredOption("--parent <org>", "the organization")
    .action(
      bind(async (ctx, documentIds, o) => {
        const group = await groupUid(ctx.client, o.parent as string);
        const accepted = await ctx.client.iam.terms.acceptTerms({ group, documentIds });
        ctx.stderr.write(`accepted ${accepted.documentIds.join(", ")} for ${accepted.group}\n`);
      }),
    );
  terms
    .command("list")
    .description("list accepted documents")
    .requiredOption("--parent <org>", "the organization")
    .action(
      bind(async (ctx, _args, o) => {
        const group = await groupUid(ctx.client, o.parent as string);
        print(
          ctx,
          await collectAll(listAll(ctx.client.iam.terms.listTermsAcceptances, { group })),
          termsView,
        );
      }),
    );
}
