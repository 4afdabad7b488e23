// `wharf iam identity-providers …`: the OpenID Connect providers people of a group log in with.
import type { Command } from "commander";
import { IdentityProviderSchema } from "../../../../gen/platform/iam/v2/identity_providers_pb.js";
import { listAll } from "../../../../sdk/pages.js";
import { type Bind, print } from "../../program.js";
import { groupUid } from "../../resolve.js";
import { field, protoView } from "../../views.js";
import { deleteVerb, describeVerb, listVerb, mask, requireOption, roleUid } from "./shared.js";

const providerView = protoView(IdentityProviderSchema, [
  field("UID", "uid"),
  field("NAME", "name"),
  { header: "ISSUER", cell: (p) => p.configuration.value?.issuer ?? "" },
  { header: "CLIENT ID", cell: (p) => p.configuration.value?.clientId ?? "" },
  field("DEFAULT ROLE", "defaultRole"),
]);

/** The options of `oidcOptions`. */
type OidcOptions = {
  issuer?: string;
  clientId?: string;
  clientSecret?: string;
  defaultRole?: string;
  description?: string;
};

export function registerIdentityProviders(iam: Command, bind: Bind): void {
  const idp = iam
    .command("identity-providers")
    .description("OpenID Connect providers people of a group log in with");
  listVerb(idp, bind, {
    description: "list identity providers",
    parent: "only those of this group",
    view: providerView,
    items: (ctx, _o, uidp) =>
      listAll(ctx.client.iam.identityProviders.listIdentityProviders, uidp ? { uidp } : {}),
  });
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
    bind(async (ctx, [name]: [string], o: OidcOptions & { parent: string }) => {
      const provider = await ctx.client.iam.identityProviders.createIdentityProvider({
        parent: await groupUid(ctx.client, o.parent),
        identityProvider: {
          name,
          description: o.description ?? "",
          defaultRole: await roleUid(ctx, requireOption(o, "defaultRole", "default-role")),
          configuration: {
            case: "oidc",
            value: {
              issuer: requireOption(o, "issuer"),
              clientId: requireOption(o, "clientId", "client-id"),
              clientSecret: o.clientSecret ?? "",
            },
          },
        },
      });
      print(ctx, [provider], providerView, true);
    }),
  );
  describeVerb(idp, bind, "describe <uid>", "show an identity provider", providerView, (ctx, uid) =>
    ctx.client.iam.identityProviders.getIdentityProvider({ uid }),
  );
  oidcOptions(
    idp
      .command("update <uid>")
      .description("change an identity provider")
      .option("--name <name>", "new name"),
  ).action(
    bind(async (ctx, [uid]: [string], o: OidcOptions & { name?: string }) => {
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
          name: o.name ?? current.name,
          description: o.description ?? current.description,
          defaultRole: o.defaultRole === undefined ? current.defaultRole : await roleUid(ctx, o.defaultRole),
          configuration: {
            case: "oidc",
            value: {
              additionalScopes: oidc?.additionalScopes ?? [],
              groupsClaim: oidc?.groupsClaim ?? "",
              pkceEnabled: oidc?.pkceEnabled ?? false,
              ...(oidc ? { correlationRule: oidc.correlationRule } : {}),
              issuer: o.issuer ?? oidc?.issuer ?? "",
              clientId: o.clientId ?? oidc?.clientId ?? "",
              clientSecret: o.clientSecret ?? "",
            },
          },
        },
        updateMask: { paths },
      });
      print(ctx, [provider], providerView, true);
    }),
  );
  deleteVerb(idp, bind, "delete <uid>", "delete an identity provider", "identity provider", (ctx, uid) =>
    ctx.client.iam.identityProviders.deleteIdentityProvider({ uid }),
  );
}
