// `wharf iam identities …`: people, CI jobs and services, and the tokens they exchange.
import { readFileSync } from "node:fs";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Command } from "commander";
import { IdentitySchema } from "../../../../gen/platform/iam/v2/identities_pb.js";
import { listAll } from "../../../../sdk/pages.js";
import { UsageError } from "../../output.js";
import { type Bind, collect, print } from "../../program.js";
import { groupUid } from "../../resolve.js";
import { field, protoView } from "../../views.js";
import { deleteVerb, describeVerb, listVerb, type ParentFilter } from "./shared.js";

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

/** The options of `relationshipOptions`: what the identity is, and how its tokens are matched. */
type RelationshipOptions = {
  description?: string;
  identityIssuer?: string;
  subject?: string;
  issuerPattern?: string;
  subjectPattern?: string;
  audience?: string[];
  issuerKeys?: string;
  expiration?: string;
};

function identityRelationship(o: RelationshipOptions) {
  if (typeof o.issuerKeys === "string") {
    const keys = o.issuerKeys.startsWith("{") ? o.issuerKeys : readFileSync(o.issuerKeys, "utf8");
    if (!o.identityIssuer || !o.subject)
      throw new UsageError("static keys need --identity-issuer and --subject");
    return {
      case: "staticKeys" as const,
      value: {
        issuer: o.identityIssuer,
        subject: o.subject,
        issuerKeys: keys,
        audiences: o.audience ?? [],
        ...(o.expiration ? { expirationTime: timestampFromDate(new Date(o.expiration)) } : {}),
      },
    };
  }
  if (o.identityIssuer || o.subject || o.issuerPattern || o.subjectPattern) {
    return {
      case: "claimMatch" as const,
      value: {
        issuer: o.identityIssuer ?? "",
        subject: o.subject ?? "",
        issuerPattern: o.issuerPattern ?? "",
        subjectPattern: o.subjectPattern ?? "",
        audience: (o.audience ?? [])[0] ?? "",
      },
    };
  }
  return undefined;
}

export function registerIdentities(iam: Command, bind: Bind): void {
  const ids = iam.command("identities").description("identities: people, CI jobs, services");
  listVerb(ids, bind, {
    description: "list identities",
    parent: "only those under this organization or folder",
    options: (c) => c.option("--name <name>", "only the one with this name"),
    view: identityView,
    items: (ctx, o: ParentFilter & { name?: string }, uidp) =>
      listAll(ctx.client.iam.identities.listIdentities, {
        ...(uidp ? { uidp } : {}),
        name: o.name ?? "",
        orderBy: "name",
      }),
  });
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
    bind(async (ctx, [name]: [string], o: RelationshipOptions & { parent: string }) => {
      const parent = await groupUid(ctx.client, o.parent);
      const relationship = identityRelationship(o);
      const identity = await ctx.client.iam.identities.createIdentity({
        parent,
        identity: {
          name,
          description: o.description ?? "",
          ...(relationship ? { relationship } : {}),
        },
      });
      print(ctx, [identity], identityView, true);
    }),
  );
  describeVerb(ids, bind, "describe <uid>", "show an identity", identityView, (ctx, uid) =>
    ctx.client.iam.identities.getIdentity({ uid }),
  );
  relationshipOptions(
    ids.command("update <uid>").description("change an identity").option("--name <name>", "new name"),
  ).action(
    bind(async (ctx, [uid]: [string], o: RelationshipOptions & { name?: string }) => {
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
          name: o.name ?? "",
          description: o.description ?? "",
          ...(relationship ? { relationship } : {}),
        },
        updateMask: { paths },
      });
      print(ctx, [identity], identityView, true);
    }),
  );
  deleteVerb(
    ids,
    bind,
    "delete <uid>",
    "delete an identity (its role bindings first)",
    "identity",
    (ctx, uid) => ctx.client.iam.identities.deleteIdentity({ uid }),
  );
}
