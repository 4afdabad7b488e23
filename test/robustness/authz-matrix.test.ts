import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { type DescMethod, fromJson, getOption, type JsonValue, toJson } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { advisoryUid } from "../../src/advisories/advisory-identity.js";
import { BUILT_IN_ROLE_UIDS, BUILT_IN_ROLES } from "../../src/authz/built-in-roles.js";
import { enumNameOf } from "../../src/authz/capabilities.js";
import { http } from "../../src/gen/google/api/annotations_pb.js";
import type { Capability } from "../../src/gen/platform/capabilities/capabilities_pb.js";
import { artifactUid } from "../../src/libraries/library-ids.js";
import { storeLibraryVersions } from "../../src/libraries/library-import.js";
import { createServiceBindings, type ServiceDeps } from "../../src/service-bindings.js";
import { buildMethodTable, type MethodEntry } from "../../src/transport/method-table.js";
import { expectJson } from "../support/api-assertions.js";
import { grpcCall } from "../support/grpc-call.js";
import { registeredPerson } from "../support/registered-person.js";
import { ociErrorOf, pushImage } from "../support/registry-push.js";
import { attachReferrer } from "../support/sbom-referrer.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

// The authorization matrix: every RPC of every bound service (enumerated from the generated
// descriptors, so a new RPC without a row fails here), called over Connect (JSON), over REST (its
// google.api.http route) and over gRPC (@grpc/grpc-js, the direct unary path) by the owner, editor and viewer of organization A, the owner of
// organization B, and an anonymous caller, each time naming a resource in A. The expected outcome
// is derived from the RPC's (platform.annotations.iam) option and the built-in roles' capabilities:
// held → past authorization (the row's success status); not held → PERMISSION_DENIED (scoped RPCs
// check before any lookup, so another organization's caller learns nothing about existence);
// anonymous → UNAUTHENTICATED. Unscoped Lists answer everyone authenticated, filtered: A's
// resource is in the answer exactly when the caller holds the capability at A.

type Json = Record<string, unknown>;
type PrincipalName = "ownerA" | "editorA" | "viewerA" | "ownerB" | "anonymous";
const PRINCIPALS: readonly PrincipalName[] = ["anonymous", "ownerB", "viewerA", "editorA", "ownerA"];
type Protocol = "connect" | "rest" | "grpc";

/** RPCs any caller, anonymous included, may call; each with why. */
const UNAUTHENTICATED_RPCS: Record<string, string> = {
  "platform.ping.v2.PingService/Ping": "a liveness probe: answers a constant, reads no data",
  "platform.ping.v1.PingService/Ping": "the v1 liveness probe: answers a constant, reads no data",
  "platform.advisory.v2.SecurityAdvisoryService/ListDocuments":
    "the public advisory feed: imported advisories, no organization's data (ADR 0025)",
  "platform.advisory.v2.SecurityAdvisoryService/ListVulnerabilityMetadata":
    "the public advisory feed: upstream CVE/GHSA metadata, no organization's data (ADR 0025)",
  "platform.advisory.v1.SecurityAdvisory/ListDocuments": "the v1 face of the public advisory documents feed",
  "platform.advisory.v1.SecurityAdvisory/ListVulnerabilityMetadata":
    "the v1 face of the public vulnerability metadata",
};

/** A scanner report the vulnerability report RPCs read and write (test/fixtures/vulnreports). */
const GRYPE_REPORT = readFileSync(new URL("../fixtures/vulnreports/grype.json", import.meta.url));
/** An OpenVEX document about `digest` (test/fixtures/vex), as CreateVexDocument takes it (base64). */
function vexDocumentAbout(digest: string): string {
  const text = readFileSync(new URL("../fixtures/vex/openvex-not-affected.json", import.meta.url), "utf8");
  return Buffer.from(text.replaceAll("a".repeat(64), digest.slice("sha256:".length))).toString("base64");
}
/** The fixtures in organization A that requests name, created once before the matrix runs. */
interface Fixtures {
  orgA: string;
  orgB: string;
  subgroup: string;
  identity: string;
  role: string;
  binding: string;
  idp: string;
  mapping: string;
  invite: string;
  repo: string;
  /** The repo's name (in its group). */
  repoName: string;
  tag: string;
  digest: string;
  subscription: string;
  /** An immutability rule at A (its pattern matches no tag of the matrix). */
  immutabilityRule: string;
  /** A retention policy on an empty repo of A (running it removes nothing). */
  retentionPolicy: string;
  /** An upstream of A (its URL a documentation address: nothing ever connects to it). */
  upstream: string;
  /** A WARN pull policy at A (it never refuses a pull of the matrix). */
  policy: string;
  /** A signing key registered at A. */
  signingKey: string;
  /** A MANUAL replication rule of A (its remote is a closed loopback port) and one run of it. */
  replicationRule: string;
  replicationRun: string;
  /** A delivery still pending to `subscription` (its sink never answers): `:redeliver` refuses it. */
  pendingDelivery: string;
  /** An imported advisory (global data, in no organization). */
  advisory: string;
  /** createdAt (RFC 3339) of the Grype report stored for `digest`. */
  vulnReportTime: string;
}

/**
 * How to call one RPC. `request` builds the request message (proto JSON) for one call; mutating
 * rows create what they change or delete per call (`fresh`), so every call has its target.
 * `list` rows are unscoped Lists: `sees` tells whether A's fixture is in the answer. `checkedOn`
 * marks unscoped RPCs whose service checks the capabilities itself on that uid.
 */
interface Row {
  /** `caller` is the calling identity's uid ("" when anonymous). */
  request(f: Fixtures, fresh: FreshFixtures, caller: string): Promise<Json> | Json;
  list?: { sees(response: Json, f: Fixtures): boolean };
  /** Unscoped, no capability: any authenticated caller. */
  open?: true;
  /** Unscoped, checked by the service like a scoped RPC. */
  checked?: true;
  /**
   * Unscoped, platform-wide data: the service requires the capabilities at some group, any
   * organization's (so B's owner reads too).
   */
  global?: true;
  /**
   * Acts on the caller's own data (Auth): past authorization is this outcome rather than 200 (the
   * caller's own state refuses the change, which proves the handler ran).
   */
  passes?: { http: number; grpc: number; code: string };
}

/** Makers of per-call resources in A (each call gets its own, so deletes and creates can repeat). */
interface FreshFixtures {
  name(prefix: string): string;
  group(): Promise<string>;
  identity(): Promise<string>;
  role(): Promise<string>;
  binding(): Promise<string>;
  idp(): Promise<string>;
  mapping(): Promise<string>;
  invite(): Promise<string>;
  repo(): Promise<string>;
  tag(): Promise<string>;
  subscription(): Promise<string>;
  immutabilityRule(): Promise<string>;
  retentionPolicy(): Promise<string>;
  upstream(): Promise<string>;
  policy(): Promise<string>;
  signingKey(): Promise<string>;
  replicationRule(): Promise<string>;
  accountAssociation(): Promise<string>;
  /** The code of a new invite to the viewer role at a new folder of A. */
  inviteCode(): Promise<string>;
}

const VIEWER = BUILT_IN_ROLE_UIDS.viewer;
/** A public key for the signing keys of the matrix. */
const MATRIX_KEY_PEM = generateKeyPairSync("ec", { namedCurve: "P-256" })
  .publicKey.export({ type: "spki", format: "pem" })
  .toString();
/** A library artifact imported before the matrix runs (library data belongs to no organization). */
const MATRIX_ARTIFACT = artifactUid("JAVA", "org.example:matrix");
const uidsOf = (items: unknown) => ((items as { uid: string }[] | undefined) ?? []).map((i) => i.uid);
const groupsOf = (items: unknown) => ((items as { group: string }[] | undefined) ?? []).map((i) => i.group);
/** The `id`s of a v1 list's `items`. */
const idsOf = (items: unknown) => ((items as { id: string }[] | undefined) ?? []).map((i) => i.id);

const ROWS: Record<string, Row> = {
  "platform.ping.v2.PingService/Ping": { request: () => ({}) },

  "platform.iam.v2.GroupsService/ListGroups": {
    request: (f) => ({ uidp: { ids: [f.orgA] } }),
    list: { sees: (r, f) => uidsOf(r.groups).includes(f.orgA) },
  },
  "platform.iam.v2.GroupsService/GetGroup": { request: (f) => ({ uid: f.subgroup }) },
  "platform.iam.v2.GroupsService/CreateGroup": {
    request: (f, fresh) => ({ parent: f.orgA, group: { name: fresh.name("g") } }),
    checked: true,
  },
  "platform.iam.v2.GroupsService/UpdateGroup": {
    request: (f) => ({ group: { uid: f.subgroup, description: "changed" }, updateMask: "description" }),
  },
  "platform.iam.v2.GroupsService/DeleteGroup": {
    request: async (_f, fresh) => ({ uid: await fresh.group() }),
  },

  "platform.iam.v2.IdentitiesService/ListIdentities": {
    request: (f) => ({ uidp: { childrenOf: f.orgA } }),
    list: { sees: (r, f) => uidsOf(r.identities).includes(f.identity) },
  },
  "platform.iam.v2.IdentitiesService/GetIdentity": { request: (f) => ({ uid: f.identity }) },
  "platform.iam.v2.IdentitiesService/CreateIdentity": {
    request: (f, fresh) => ({
      parent: f.orgA,
      identity: {
        name: fresh.name("bot"),
        claimMatch: { issuer: "https://ci.example.com", subject: fresh.name("s") },
      },
    }),
  },
  "platform.iam.v2.IdentitiesService/UpdateIdentity": {
    request: (f) => ({ identity: { uid: f.identity, description: "changed" }, updateMask: "description" }),
  },
  "platform.iam.v2.IdentitiesService/DeleteIdentity": {
    request: async (_f, fresh) => ({ uid: await fresh.identity() }),
  },
  "platform.iam.v2.IdentitiesService/LookupIdentity": {
    request: () => ({ issuer: "https://idp.example.com", subject: "someone" }),
    open: true,
  },

  "platform.iam.v2.RolesService/ListRoles": {
    request: (f) => ({ uidp: { childrenOf: f.orgA } }),
    list: { sees: (r, f) => uidsOf(r.roles).includes(f.role) },
  },
  "platform.iam.v2.RolesService/GetRole": { request: (f) => ({ uid: f.role }), checked: true },
  "platform.iam.v2.RolesService/CreateRole": {
    request: (f, fresh) => ({
      parent: f.orgA,
      role: { name: fresh.name("role"), capabilities: ["CAP_REPO_LIST"] },
    }),
  },
  "platform.iam.v2.RolesService/UpdateRole": {
    request: (f) => ({ role: { uid: f.role, description: "changed" }, updateMask: "description" }),
  },
  "platform.iam.v2.RolesService/DeleteRole": { request: async (_f, fresh) => ({ uid: await fresh.role() }) },

  "platform.iam.v2.RoleBindingsService/ListRoleBindings": {
    request: (f) => ({ group: f.orgA }),
    list: { sees: (r, f) => uidsOf(r.roleBindings).includes(f.binding) },
  },
  "platform.iam.v2.RoleBindingsService/GetRoleBinding": { request: (f) => ({ uid: f.binding }) },
  "platform.iam.v2.RoleBindingsService/CreateRoleBinding": {
    request: async (f, fresh) => ({
      parent: await fresh.group(),
      roleBinding: { identityUid: f.identity, roleUid: VIEWER },
    }),
  },
  "platform.iam.v2.RoleBindingsService/BatchCreateRoleBindings": {
    request: async (f, fresh) => ({
      parent: await fresh.group(),
      roleUid: VIEWER,
      requests: [{ roleBinding: { identityUid: f.identity } }],
    }),
  },
  "platform.iam.v2.RoleBindingsService/UpdateRoleBinding": {
    request: async (_f, fresh) => ({
      roleBinding: { uid: await fresh.binding(), roleUid: BUILT_IN_ROLE_UIDS["registry.pull"] },
      updateMask: "roleUid",
    }),
  },
  "platform.iam.v2.RoleBindingsService/DeleteRoleBinding": {
    request: async (_f, fresh) => ({ uid: await fresh.binding() }),
  },

  "platform.iam.v2.IdentityProvidersService/ListIdentityProviders": {
    request: (f) => ({ uidp: { childrenOf: f.orgA } }),
    list: { sees: (r, f) => uidsOf(r.identityProviders).includes(f.idp) },
  },
  "platform.iam.v2.IdentityProvidersService/GetIdentityProvider": { request: (f) => ({ uid: f.idp }) },
  "platform.iam.v2.IdentityProvidersService/CreateIdentityProvider": {
    request: (f, fresh) => ({
      parent: f.orgA,
      identityProvider: {
        name: fresh.name("sso"),
        defaultRole: VIEWER,
        oidc: { issuer: "https://login.example.com", clientId: "wharf", clientSecret: "s3cret" },
      },
    }),
  },
  "platform.iam.v2.IdentityProvidersService/UpdateIdentityProvider": {
    request: (f) => ({ identityProvider: { uid: f.idp, description: "changed" }, updateMask: "description" }),
  },
  "platform.iam.v2.IdentityProvidersService/DeleteIdentityProvider": {
    request: async (_f, fresh) => ({ uid: await fresh.idp() }),
  },

  "platform.iam.v2.AccountAssociationsService/ListAccountAssociations": {
    request: (f) => ({ uidp: { ids: [f.orgA] } }),
    list: { sees: (r, f) => uidsOf(r.associations).includes(f.orgA) },
  },
  "platform.iam.v2.AccountAssociationsService/GetAccountAssociation": { request: (f) => ({ uid: f.orgA }) },
  "platform.iam.v2.AccountAssociationsService/CreateAccountAssociation": {
    request: async (_f, fresh) => ({
      parent: await fresh.group(),
      accountAssociation: { name: "clouds", amazon: { account: "123456789012" } },
    }),
  },
  "platform.iam.v2.AccountAssociationsService/UpdateAccountAssociation": {
    request: (f) => ({
      accountAssociation: { uid: f.orgA, description: "changed" },
      updateMask: "description",
    }),
  },
  "platform.iam.v2.AccountAssociationsService/DeleteAccountAssociation": {
    request: async (_f, fresh) => ({ uid: await fresh.accountAssociation() }),
  },

  "platform.iam.v2.GroupInvitesService/ListGroupInvites": {
    request: (f) => ({ uidp: { childrenOf: f.orgA } }),
    list: { sees: (r, f) => uidsOf(r.invites).includes(f.invite) },
  },
  "platform.iam.v2.GroupInvitesService/GetGroupInvite": { request: (f) => ({ uid: f.invite }) },
  "platform.iam.v2.GroupInvitesService/CreateGroupInvite": {
    request: (f) => ({ parent: f.orgA, invite: { roleUid: VIEWER, ttl: "3600s" } }),
  },
  "platform.iam.v2.GroupInvitesService/DeleteGroupInvite": {
    request: async (_f, fresh) => ({ uid: await fresh.invite() }),
  },

  "platform.iam.v2.ExternalGroupRoleMappingsService/ListExternalGroupRoleMappings": {
    request: (f) => ({ identityProviderUid: f.idp }),
    list: { sees: (r, f) => uidsOf(r.mappings ?? r.externalGroupRoleMappings).includes(f.mapping) },
  },
  "platform.iam.v2.ExternalGroupRoleMappingsService/GetExternalGroupRoleMapping": {
    request: (f) => ({ uid: f.mapping }),
  },
  "platform.iam.v2.ExternalGroupRoleMappingsService/CreateExternalGroupRoleMapping": {
    request: (f, fresh) => ({
      parent: f.idp,
      mapping: { externalGroupId: fresh.name("devs"), roleUid: VIEWER },
    }),
  },
  "platform.iam.v2.ExternalGroupRoleMappingsService/DeleteExternalGroupRoleMapping": {
    request: async (_f, fresh) => ({ uid: await fresh.mapping() }),
  },
  "platform.iam.v2.ExternalGroupRoleMappingsService/BatchDeleteExternalGroupRoleMappings": {
    request: async (f, fresh) => ({ parent: f.idp, names: [await fresh.mapping()] }),
  },

  "platform.iam.v2.TermsService/AcceptTerms": {
    request: (f) => ({ group: f.orgA, documentIds: ["sfdpa.v1"] }),
  },
  "platform.iam.v2.TermsService/ListTermsAcceptances": { request: (f) => ({ group: f.orgA }) },

  "platform.iam.v1.Groups/Create": {
    request: (f, fresh) => ({ parent: f.orgA, group: { name: fresh.name("g") } }),
    checked: true,
  },
  "platform.iam.v1.Groups/List": {
    request: (f) => ({ uidp: { ids: [f.orgA] } }),
    list: { sees: (r, f) => idsOf(r.items).includes(f.orgA) },
  },
  "platform.iam.v1.Groups/Update": {
    request: async (_f, fresh) => ({
      id: await fresh.group(),
      name: fresh.name("g"),
      description: "changed",
    }),
  },
  "platform.iam.v1.Groups/Delete": { request: async (_f, fresh) => ({ id: await fresh.group() }) },
  // Everyone here has an @example.com email, and the organization example.com is verified.
  "platform.iam.v1.Groups/LookupGroup": { request: () => ({}), open: true },
  "platform.iam.v2.GroupsService/LookupGroup": { request: () => ({}), open: true },

  "platform.iam.v1.Identities/Create": {
    request: (f, fresh) => ({
      parentId: f.orgA,
      identity: {
        name: fresh.name("bot"),
        claimMatch: { issuer: "https://ci.example.com", subject: fresh.name("s") },
      },
    }),
  },
  "platform.iam.v1.Identities/List": {
    request: (f) => ({ uidp: { childrenOf: f.orgA } }),
    list: { sees: (r, f) => idsOf(r.items).includes(f.identity) },
  },
  "platform.iam.v1.Identities/Update": {
    request: async (_f, fresh) => ({
      id: await fresh.identity(),
      name: fresh.name("bot"),
      claimMatch: { issuer: "https://ci.example.com", subject: fresh.name("s") },
    }),
  },
  "platform.iam.v1.Identities/Delete": { request: async (_f, fresh) => ({ id: await fresh.identity() }) },
  "platform.iam.v1.Identities/Lookup": {
    request: () => ({ issuer: "https://idp.example.com", subject: "someone" }),
    open: true,
  },

  "platform.iam.v1.Roles/Create": {
    request: (f, fresh) => ({
      parentId: f.orgA,
      role: { name: fresh.name("role"), capabilities: ["repo.list"] },
    }),
  },
  "platform.iam.v1.Roles/List": {
    request: (f) => ({ uidp: { childrenOf: f.orgA } }),
    list: { sees: (r, f) => idsOf(r.items).includes(f.role) },
  },
  "platform.iam.v1.Roles/Update": {
    request: async (_f, fresh) => ({
      id: await fresh.role(),
      name: fresh.name("role"),
      capabilities: ["repo.list"],
    }),
  },
  "platform.iam.v1.Roles/Delete": { request: async (_f, fresh) => ({ id: await fresh.role() }) },

  "platform.iam.v1.RoleBindings/Create": {
    request: async (f, fresh) => ({
      parent: await fresh.group(),
      roleBinding: { identity: f.identity, role: VIEWER },
    }),
  },
  "platform.iam.v1.RoleBindings/CreateBatch": {
    request: async (f, fresh) => ({
      parent: await fresh.group(),
      roleBindings: [{ identity: f.identity, role: VIEWER }],
    }),
  },
  "platform.iam.v1.RoleBindings/List": {
    request: (f) => ({ uidp: { childrenOf: f.orgA } }),
    list: { sees: (r, f) => idsOf(r.items).includes(f.binding) },
  },
  "platform.iam.v1.RoleBindings/Update": {
    request: async (f, fresh) => ({
      id: await fresh.binding(),
      identity: f.identity,
      role: BUILT_IN_ROLE_UIDS["registry.pull"],
    }),
  },
  "platform.iam.v1.RoleBindings/Delete": { request: async (_f, fresh) => ({ id: await fresh.binding() }) },

  "platform.iam.v1.Terms/Accept": { request: (f) => ({ group: f.orgA, documentIds: ["sfdpa.v1"] }) },
  "platform.iam.v1.Terms/List": { request: (f) => ({ group: f.orgA }) },

  "platform.registry.v2.ReposService/ListRepos": {
    request: (f) => ({ uidp: { descendantsOf: f.orgA } }),
    list: { sees: (r, f) => uidsOf(r.repos).includes(f.repo) },
  },
  "platform.registry.v2.ReposService/GetRepo": { request: (f) => ({ uid: f.repo }) },
  "platform.registry.v2.ReposService/CreateRepo": {
    request: (f, fresh) => ({ parent: f.orgA, repo: { name: fresh.name("repo") } }),
  },
  "platform.registry.v2.ReposService/UpdateRepo": {
    request: (f) => ({ repo: { uid: f.repo, description: "changed" }, updateMask: "description" }),
  },
  "platform.registry.v2.ReposService/DeleteRepo": {
    request: async (_f, fresh) => ({ uid: await fresh.repo() }),
  },
  "platform.registry.v2.ReposService/GetRepoReadme": { request: (f) => ({ uid: f.repo }) },
  "platform.registry.v2.ReposService/UpdateRepoReadme": {
    request: (f) => ({ repoReadme: { uid: f.repo, content: "# app" }, updateMask: "content" }),
  },

  "platform.registry.v2.TagsService/ListTags": {
    request: (f) => ({ uidp: { childrenOf: f.repo } }),
    list: { sees: (r, f) => uidsOf(r.tags).includes(f.tag) },
  },
  "platform.registry.v2.TagsService/GetTag": { request: (f) => ({ uid: f.tag }) },
  "platform.registry.v2.TagsService/CreateTag": {
    request: (f, fresh) => ({ parent: f.repo, tag: { name: fresh.name("t"), digest: f.digest } }),
  },
  "platform.registry.v2.TagsService/DeleteTag": {
    request: async (_f, fresh) => ({ uid: await fresh.tag() }),
  },
  // A fresh tag restored to the digest it names: past authorization, the restore changes nothing.
  "platform.registry.v2.TagsService/RestoreTag": {
    request: async (f, fresh) => ({ uid: await fresh.tag(), digest: f.digest }),
  },

  "platform.registry.v2.ImmutabilityRulesService/ListImmutabilityRules": {
    request: (f) => ({ uidp: { descendantsOf: f.orgA } }),
    list: { sees: (r, f) => uidsOf(r.immutabilityRules).includes(f.immutabilityRule) },
  },
  "platform.registry.v2.ImmutabilityRulesService/GetImmutabilityRule": {
    request: (f) => ({ uid: f.immutabilityRule }),
  },
  "platform.registry.v2.ImmutabilityRulesService/CreateImmutabilityRule": {
    request: (f) => ({ parent: f.repo, immutabilityRule: { tagPatterns: ["matrix-never-*"] } }),
  },
  "platform.registry.v2.ImmutabilityRulesService/UpdateImmutabilityRule": {
    request: (f) => ({
      immutabilityRule: { uid: f.immutabilityRule, description: "changed" },
      updateMask: "description",
    }),
  },
  "platform.registry.v2.ImmutabilityRulesService/DeleteImmutabilityRule": {
    request: async (_f, fresh) => ({ uid: await fresh.immutabilityRule() }),
  },

  "platform.registry.v2.UpstreamsService/ListUpstreams": {
    request: (f) => ({ uidp: { childrenOf: f.orgA } }),
    list: { sees: (r, f) => uidsOf(r.upstreams).includes(f.upstream) },
  },
  "platform.registry.v2.UpstreamsService/GetUpstream": {
    request: (f) => ({ uid: f.upstream }),
  },
  "platform.registry.v2.UpstreamsService/CreateUpstream": {
    request: (f, fresh) => ({
      parent: f.orgA,
      upstream: { name: fresh.name("up"), url: "https://192.0.2.1" },
    }),
  },
  "platform.registry.v2.UpstreamsService/UpdateUpstream": {
    request: (f) => ({ upstream: { uid: f.upstream, tagTtl: "5m" }, updateMask: "tagTtl" }),
  },
  "platform.registry.v2.UpstreamsService/DeleteUpstream": {
    request: async (_f, fresh) => ({ uid: await fresh.upstream() }),
  },

  "platform.registry.v2.PoliciesService/ListPolicies": {
    request: (f) => ({ uidp: { descendantsOf: f.orgA } }),
    list: { sees: (r, f) => uidsOf(r.policies).includes(f.policy) },
  },
  "platform.registry.v2.PoliciesService/GetPolicy": { request: (f) => ({ uid: f.policy }) },
  "platform.registry.v2.PoliciesService/CreatePolicy": {
    request: (f, fresh) => ({
      parent: f.orgA,
      policy: { name: fresh.name("pol"), mode: "WARN", requireSbom: true },
    }),
  },
  "platform.registry.v2.PoliciesService/UpdatePolicy": {
    request: (f) => ({ policy: { uid: f.policy, denyEol: true }, updateMask: "denyEol" }),
  },
  "platform.registry.v2.PoliciesService/DeletePolicy": {
    request: async (_f, fresh) => ({ uid: await fresh.policy() }),
  },
  "platform.registry.v2.PoliciesService/EvaluatePolicies": {
    request: (f) => ({ repoUid: f.repo, digest: f.digest }),
  },
  "platform.registry.v2.SigningKeysService/ListSigningKeys": {
    request: (f) => ({ uidp: { childrenOf: f.orgA } }),
    list: { sees: (r, f) => uidsOf(r.signingKeys).includes(f.signingKey) },
  },
  "platform.registry.v2.SigningKeysService/GetSigningKey": {
    request: (f) => ({ uid: f.signingKey }),
  },
  "platform.registry.v2.SigningKeysService/CreateSigningKey": {
    request: (f, fresh) => ({
      parent: f.repo,
      signingKey: { name: fresh.name("key"), publicKeyPem: MATRIX_KEY_PEM },
    }),
  },
  "platform.registry.v2.SigningKeysService/DeleteSigningKey": {
    request: async (_f, fresh) => ({ uid: await fresh.signingKey() }),
  },

  "platform.registry.v2.RetentionPoliciesService/ListRetentionPolicies": {
    request: (f) => ({ uidp: { descendantsOf: f.orgA } }),
    list: { sees: (r, f) => uidsOf(r.retentionPolicies).includes(f.retentionPolicy) },
  },
  "platform.registry.v2.RetentionPoliciesService/GetRetentionPolicy": {
    request: (f) => ({ uid: f.retentionPolicy }),
  },
  "platform.registry.v2.RetentionPoliciesService/CreateRetentionPolicy": {
    request: (f) => ({ parent: f.orgA, retentionPolicy: { rules: [{ keepLatest: 5 }] } }),
  },
  "platform.registry.v2.RetentionPoliciesService/UpdateRetentionPolicy": {
    request: (f) => ({
      retentionPolicy: { uid: f.retentionPolicy, description: "changed" },
      updateMask: "description",
    }),
  },
  "platform.registry.v2.RetentionPoliciesService/DeleteRetentionPolicy": {
    request: async (_f, fresh) => ({ uid: await fresh.retentionPolicy() }),
  },
  "platform.registry.v2.RetentionPoliciesService/PreviewRetentionPolicy": {
    request: (f) => ({ uid: f.retentionPolicy }),
  },
  "platform.registry.v2.RetentionPoliciesService/RunRetentionPolicy": {
    request: (f) => ({ uid: f.retentionPolicy }),
  },

  "platform.registry.v2.ReplicationRulesService/ListReplicationRules": {
    request: (f) => ({ uidp: { descendantsOf: f.orgA } }),
    list: { sees: (r, f) => uidsOf(r.replicationRules).includes(f.replicationRule) },
  },
  "platform.registry.v2.ReplicationRulesService/GetReplicationRule": {
    request: (f) => ({ uid: f.replicationRule }),
  },
  "platform.registry.v2.ReplicationRulesService/CreateReplicationRule": {
    request: (f, fresh) => ({
      parent: f.orgA,
      replicationRule: {
        name: fresh.name("rule"),
        direction: "PUSH",
        trigger: "MANUAL",
        remote: { url: "https://127.0.0.1:9" },
      },
    }),
  },
  "platform.registry.v2.ReplicationRulesService/UpdateReplicationRule": {
    request: (f) => ({
      replicationRule: { uid: f.replicationRule, tagPattern: "v*" },
      updateMask: "tagPattern",
    }),
  },
  "platform.registry.v2.ReplicationRulesService/DeleteReplicationRule": {
    request: async (_f, fresh) => ({ uid: await fresh.replicationRule() }),
  },
  "platform.registry.v2.ReplicationRulesService/RunReplicationRule": {
    request: (f) => ({ uid: f.replicationRule }),
  },
  "platform.registry.v2.ReplicationRunsService/ListReplicationRuns": {
    request: (f) => ({ rule: f.replicationRule }),
    list: { sees: (r, f) => uidsOf(r.runs).includes(f.replicationRun) },
  },
  "platform.registry.v2.ReplicationRunsService/GetReplicationRun": {
    request: (f) => ({ uid: f.replicationRun }),
  },

  "platform.registry.v2.ImagesService/GetArchitectures": {
    request: (f) => ({ repoUid: f.repo, digest: f.digest }),
  },
  "platform.registry.v2.ImagesService/GetSize": { request: (f) => ({ repoUid: f.repo, digest: f.digest }) },
  // The fixture image carries an SPDX referrer, so a caller past authorization gets its packages.
  "platform.registry.v2.SbomService/GetSbom": { request: (f) => ({ repoUid: f.repo, digest: f.digest }) },
  // Unscoped: the answer holds A's repo exactly when the caller may list repos at A.
  "platform.registry.v2.SearchService/Search": {
    request: (f) => ({ query: f.repoName }),
    list: {
      sees: (r, f) => ((r.repos as Json[] | undefined) ?? []).some((h) => (h.repo as Json).uid === f.repo),
    },
  },
  "platform.registry.v2.SignaturesService/ListSignatures": {
    request: (f) => ({ repoUid: f.repo, digest: f.digest }),
  },

  "platform.registry.v2.QuotasService/GetUsage": { request: (f) => ({ groupUid: f.orgA }) },
  "platform.registry.v2.InsightsService/GetInsights": { request: (f) => ({ groupUid: f.orgA }) },
  // No built-in role holds registry_quotas.update: A's owner is refused like everyone else here.
  "platform.registry.v2.QuotasService/UpdateQuota": {
    request: (f) => ({ groupUid: f.orgA, storageBytes: "0", repoCount: "0" }),
  },

  "platform.registry.v1.Registry/GetVulnReport": { request: (f) => ({ repoUid: f.repo, digest: f.digest }) },
  "platform.registry.v1.Registry/ListEolTags": {
    request: (f) => ({ uidp: { childrenOf: f.repo } }),
    list: { sees: (r, f) => ((r.items as Json[] | undefined) ?? []).some((t) => t.id === f.tag) },
  },
  // v1 Registry: repos, tags, tag history, architectures and size.
  "platform.registry.v1.Registry/ListRepos": {
    request: (f) => ({ id: f.repo }),
    list: { sees: (r, f) => idsOf(r.items).includes(f.repo) },
  },
  "platform.registry.v1.Registry/CreateRepo": {
    request: (f, fresh) => ({ parentId: f.orgA, repo: { name: fresh.name("repo") }, preventExisting: true }),
  },
  "platform.registry.v1.Registry/UpdateRepo": {
    request: (f) => ({ id: f.repo, name: f.repoName, description: "changed" }),
  },
  "platform.registry.v1.Registry/DeleteRepo": { request: async (_f, fresh) => ({ id: await fresh.repo() }) },
  "platform.registry.v1.Registry/ListTags": {
    request: (f) => ({ id: f.tag }),
    list: { sees: (r, f) => idsOf(r.items).includes(f.tag) },
  },
  "platform.registry.v1.Registry/CreateTag": {
    request: (f, fresh) => ({ repoId: f.repo, tag: { name: fresh.name("t"), digest: f.digest } }),
  },
  "platform.registry.v1.Registry/UpdateTag": {
    request: (f) => ({ id: f.tag, name: "v1", digest: f.digest }),
  },
  "platform.registry.v1.Registry/DeleteTag": { request: async (_f, fresh) => ({ id: await fresh.tag() }) },
  "platform.registry.v1.Registry/ListTagHistory": { request: (f) => ({ parentId: f.tag }) },
  "platform.registry.v1.Registry/GetArchs": { request: (f) => ({ repoId: f.repo, digest: f.digest }) },
  "platform.registry.v1.Registry/GetSize": { request: (f) => ({ repoId: f.repo, digest: f.digest }) },
  "platform.registry.v1.Vulnerabilities/CreateVulnReport": {
    request: (f) => ({ repoUid: f.repo, digest: f.digest, rawReport: GRYPE_REPORT.toString("base64") }),
  },
  "platform.registry.v1.Vex/CreateVexDocument": {
    request: (f) => ({ repoUid: f.repo, digest: f.digest, document: vexDocumentAbout(f.digest) }),
  },
  "platform.registry.v1.Vulnerabilities/ListVulnReports": {
    request: (f) => ({ digest: f.digest }),
    list: { sees: (r) => ((r.items as Json[] | undefined) ?? []).length > 0 },
  },
  "platform.registry.v1.Vulnerabilities/ListVulnCountReports": {
    request: (f) => ({ repo: f.repo, tag: "v1", from: f.vulnReportTime, to: f.vulnReportTime }),
    list: { sees: (r) => ((r.items as Json[] | undefined) ?? []).length > 0 },
  },
  "platform.registry.v1.Vulnerabilities/ListVulnCountReportsCumulative": {
    request: (f) => ({ repo: f.repo, tag: "v1", from: f.vulnReportTime, to: f.vulnReportTime }),
    list: { sees: (r) => ((r.items as Json[] | undefined) ?? []).length > 0 },
  },
  "platform.registry.v1.Vulnerabilities/GetRawVulnReport": {
    request: (f) => ({ digest: f.digest, scanner: "GRYPE", createdAt: f.vulnReportTime }),
    list: { sees: (r) => typeof r.rawReport === "string" && r.rawReport !== "" },
  },

  "platform.audit.v2.AuditLogService/ListRecords": {
    request: (f) => ({ uidp: { descendantsOf: f.orgA } }),
    checked: true,
  },
  "platform.events.v2.SubscriptionsService/ListSubscriptions": {
    request: (f) => ({ uidp: { childrenOf: f.orgA } }),
    list: { sees: (r, f) => uidsOf(r.subscriptions).includes(f.subscription) },
  },
  "platform.events.v2.SubscriptionsService/GetSubscription": { request: (f) => ({ uid: f.subscription }) },
  "platform.events.v2.SubscriptionsService/CreateSubscription": {
    request: (f) => ({ parent: f.orgA, subscription: { sink: "http://127.0.0.1:9/hook" } }),
  },
  "platform.events.v2.SubscriptionsService/DeleteSubscription": {
    request: async (_f, fresh) => ({ uid: await fresh.subscription() }),
  },
  "platform.events.v2.SubscriptionsService/ListDeliveries": {
    request: (f) => ({ subscriptionUid: f.subscription }),
  },
  "platform.events.v2.SubscriptionsService/RedeliverDelivery": {
    // Past authorization the handler finds the delivery still pending (the sink never answers).
    request: (f) => ({ uid: f.pendingDelivery }),
    passes: { http: 400, grpc: 9, code: "failed_precondition" },
  },
  "platform.events.v2.SubscriptionsService/RedriveSubscription": {
    request: (f) => ({ uid: f.subscription }),
  },
  "platform.events.v2.SubscriptionsService/ReplaySubscription": {
    request: (f) => ({ uid: f.subscription, since: "2026-01-01T00:00:00Z" }),
  },

  "platform.libraries.v2.ArtifactsService/ListArtifacts": {
    request: () => ({ ecosystems: ["ECOSYSTEM_JAVA"] }),
    global: true,
  },
  "platform.libraries.v2.ArtifactsService/ListArtifactVersions": {
    request: () => ({ artifactId: MATRIX_ARTIFACT }),
    global: true,
  },
  "platform.libraries.v2.ArtifactsService/CountArtifacts": { request: () => ({}), global: true },
  "platform.vulnerabilities.v2.AdvisoriesService/ListAdvisories": {
    request: (f) => ({ uidp: { ids: [f.advisory] } }),
    global: true,
  },
  "platform.vulnerabilities.v2.AdvisoriesService/GetAdvisory": {
    request: (f) => ({ uid: f.advisory }),
    global: true,
  },
  "platform.advisory.v2.SecurityAdvisoryService/ListDocuments": { request: () => ({ id: "matrix-pkg" }) },
  "platform.advisory.v2.SecurityAdvisoryService/ListVulnerabilityMetadata": {
    request: () => ({ ids: ["CVE-2025-0001"] }),
  },
  "platform.advisory.v2.SecurityAdvisoryService/ResolvedVulns": {
    request: (f) => ({ imageRefs: [{ repo: f.repo, tags: ["v1"] }] }),
    checked: true,
  },

  "platform.ping.v1.PingService/Ping": { request: () => ({}) },
  "platform.auth.v1.Auth/Validate": { request: () => ({}), open: true },
  "platform.auth.v1.Auth/Register": {
    request: async (_f, fresh) => ({ code: await fresh.inviteCode() }),
    open: true,
  },
  "platform.auth.v1.Auth/Delete": {
    // Every principal here still holds role bindings, which v2's DeleteIdentity refuses.
    request: (f, _fresh, caller) => ({ id: caller || f.orgA }),
    open: true,
    passes: { http: 400, grpc: 9, code: "failed_precondition" },
  },

  "platform.iam.v1.IdentityProviders/List": {
    request: (f) => ({ id: f.idp }),
    list: { sees: (r, f) => idsOf(r.items).includes(f.idp) },
  },
  "platform.iam.v1.IdentityProviders/Create": {
    request: (f, fresh) => ({
      parentId: f.orgA,
      identityProvider: {
        name: fresh.name("sso"),
        defaultRole: VIEWER,
        oidc: { issuer: "https://login.example.com", clientId: "wharf", clientSecret: "s3cret" },
      },
    }),
  },
  "platform.iam.v1.IdentityProviders/Update": {
    request: async (_f, fresh) => ({
      id: await fresh.idp(),
      name: fresh.name("sso"),
      defaultRole: VIEWER,
      oidc: { issuer: "https://login.example.com", clientId: "wharf" },
    }),
  },
  "platform.iam.v1.IdentityProviders/Delete": { request: async (_f, fresh) => ({ id: await fresh.idp() }) },

  "platform.iam.v1.GroupAccountAssociations/List": {
    request: (f) => ({ group: f.orgA }),
    list: { sees: (r, f) => groupsOf(r.items).includes(f.orgA) },
  },
  "platform.iam.v1.GroupAccountAssociations/Create": {
    request: async (_f, fresh) => ({
      group: await fresh.group(),
      name: "clouds",
      amazon: { account: "123456789012" },
    }),
  },
  "platform.iam.v1.GroupAccountAssociations/Update": {
    request: async (_f, fresh) => ({
      group: await fresh.accountAssociation(),
      name: "clouds",
      description: "v1",
    }),
  },
  "platform.iam.v1.GroupAccountAssociations/Delete": {
    request: async (_f, fresh) => ({ group: await fresh.accountAssociation() }),
  },
  "platform.iam.v1.GroupAccountAssociations/Check": {
    request: (f) => ({ group: f.orgA, accountType: "ACCOUNT_TYPE_AMAZON" }),
  },

  "platform.iam.v1.GroupInvites/List": {
    request: (f) => ({ id: f.invite }),
    list: { sees: (r, f) => idsOf(r.items).includes(f.invite) },
  },
  "platform.iam.v1.GroupInvites/Create": { request: (f) => ({ group: f.orgA, role: VIEWER, ttl: "3600s" }) },
  "platform.iam.v1.GroupInvites/Delete": { request: async (_f, fresh) => ({ id: await fresh.invite() }) },

  "platform.iam.v1.ExternalGroupRoleMappings/List": {
    request: (f) => ({ identityProviderUidp: f.idp }),
    list: { sees: (r, f) => idsOf(r.items).includes(f.mapping) },
  },
  "platform.iam.v1.ExternalGroupRoleMappings/Get": { request: (f) => ({ uid: f.mapping }) },
  "platform.iam.v1.ExternalGroupRoleMappings/Create": {
    request: (f, fresh) => ({
      parentId: f.idp,
      mapping: { externalGroupId: fresh.name("devs"), roleUidp: VIEWER },
    }),
  },
  "platform.iam.v1.ExternalGroupRoleMappings/Delete": {
    request: async (_f, fresh) => ({ id: await fresh.mapping() }),
  },
  "platform.iam.v1.ExternalGroupRoleMappings/BatchDelete": {
    request: async (f, fresh) => ({ parentId: f.idp, ids: [await fresh.mapping()] }),
  },
  // v1 Subscriptions, Artifacts and SecurityAdvisory.
  "platform.events.v1.Subscriptions/List": {
    request: (f) => ({ id: f.subscription }),
    list: { sees: (r, f) => idsOf(r.items).includes(f.subscription) },
  },
  "platform.events.v1.Subscriptions/Create": {
    request: (f) => ({ parentId: f.orgA, subscription: { sink: "http://127.0.0.1:9/hook" } }),
  },
  "platform.events.v1.Subscriptions/Delete": {
    request: async (_f, fresh) => ({ id: await fresh.subscription() }),
  },
  "platform.libraries.v1.Artifacts/List": {
    request: () => ({ ecosystems: ["ECOSYSTEM_JAVA"] }),
    global: true,
  },
  "platform.libraries.v1.Artifacts/ListVersions": { request: () => ({ id: MATRIX_ARTIFACT }), global: true },
  "platform.libraries.v1.Artifacts/Count": { request: () => ({}), global: true },
  "platform.advisory.v1.SecurityAdvisory/ListDocuments": { request: () => ({ id: "matrix-pkg" }) },
  "platform.advisory.v1.SecurityAdvisory/ListVulnerabilityMetadata": {
    request: () => ({ ids: ["CVE-2025-0001"] }),
  },
  "platform.advisory.v1.SecurityAdvisory/ResolvedVulns": {
    request: (f) => ({ imageRefs: [{ repo: f.repo, tags: ["v1"] }] }),
    checked: true,
  },
  "platform.vulnerabilities.v1.Advisories/List": { request: (f) => ({ id: f.advisory }), global: true },
};

/** Every bound RPC with its annotation, read the way the transports read it. */
const METHODS: MethodEntry[] = buildMethodTable(createServiceBindings({} as ServiceDeps));

/** The capabilities a principal holds at A through its built-in role (none for B's owner and anonymous). */
function capabilitiesAtA(who: PrincipalName): ReadonlySet<Capability> {
  const role = { ownerA: "owner", editorA: "editor", viewerA: "viewer" }[who as string];
  return new Set(BUILT_IN_ROLES.find((r) => r.name === role)?.capabilities ?? []);
}

type Expected = "allowed" | "denied" | "unauthenticated" | "filtered";

/** The capabilities a principal holds at its own organization (B's owner at B). */
function capabilitiesAnywhere(who: PrincipalName): ReadonlySet<Capability> {
  if (who !== "ownerB") return capabilitiesAtA(who);
  return new Set(BUILT_IN_ROLES.find((r) => r.name === "owner")?.capabilities ?? []);
}

/** The outcome the annotation and the roles call for. */
function expectedOutcome(entry: MethodEntry, row: Row, who: PrincipalName): Expected {
  if (entry.auth.kind === "disabled") return "allowed";
  if (who === "anonymous") return "unauthenticated";
  if (row.global) {
    return entry.auth.capabilities.every((c) => capabilitiesAnywhere(who).has(c)) ? "allowed" : "denied";
  }
  const held = entry.auth.capabilities.every((c) => capabilitiesAtA(who).has(c));
  if (entry.auth.kind === "unscoped" && row.list) return held ? "allowed" : "filtered";
  return held ? "allowed" : "denied";
}

/** A call's outcome on the wire: HTTP status, gRPC-style code name, and the JSON body. */
interface Outcome {
  status: number;
  code: string;
  body: Json;
}

const CONNECT_CODES: Record<number, string> = {
  0: "ok",
  3: "invalid_argument",
  5: "not_found",
  7: "permission_denied",
  9: "failed_precondition",
  12: "unimplemented",
  16: "unauthenticated",
};

/** The REST request of `method` for `message` (proto JSON), following its google.api.http rule. */
function restRequest(method: DescMethod, message: Json): { verb: string; path: string; body?: Json } {
  const rule = getOption(method, http);
  const verb = rule.pattern.case as string;
  const rest = structuredClone(message);
  const path = (rule.pattern.value as string).replace(/\{([^}=]+)(?:=[^}]*)?\}/g, (_, fieldPath: string) => {
    const names = fieldPath.split(".").map((p) => p.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()));
    let holder = rest;
    for (const n of names.slice(0, -1)) holder = (holder[n] as Json | undefined) ?? {};
    const last = names[names.length - 1] as string;
    const value = String(holder[last] ?? "");
    delete holder[last];
    return value;
  });
  let body: Json | undefined;
  if (rule.body === "*") body = rest;
  else if (rule.body !== "") {
    const field = rule.body.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
    body = (rest[field] as Json | undefined) ?? {};
    delete rest[field];
  }
  const query = new URLSearchParams();
  const flatten = (prefix: string, value: unknown): void => {
    if (Array.isArray(value)) for (const v of value) flatten(prefix, v);
    else if (value !== null && typeof value === "object")
      for (const [k, v] of Object.entries(value)) flatten(prefix === "" ? k : `${prefix}.${k}`, v);
    else query.append(prefix, String(value));
  };
  if (rule.body !== "*") flatten("", rest);
  const q = query.toString();
  return { verb: verb.toUpperCase(), path: q === "" ? path : `${path}?${q}`, ...(body ? { body } : {}) };
}

describe("authorization matrix: every RPC × owner/editor/viewer of A, owner of B, anonymous", () => {
  let wharf: TestServer;
  const tokens = new Map<PrincipalName, string | undefined>();
  let f: Fixtures;
  let fresh: FreshFixtures;
  let counter = 0;
  let grpcClient: grpc.Client;

  const post = (path: string, body: unknown) => wharf.create(path, body);

  /** An advisory as `wharf import advisories` stores it (advisories have no create RPC). */
  async function importedAdvisory(): Promise<string> {
    const uid = advisoryUid("CGA-2222-3333-4444", "matrix-pkg");
    await wharf.store.advisories.upsert({
      uid,
      advisoryId: "CGA-2222-3333-4444",
      legacyAdvisoryId: "",
      author: "matrix",
      artifactName: "matrix-pkg",
      artifactType: "apk",
      artifactArchitecture: "",
      componentName: "",
      componentType: "",
      componentLocation: "",
      originPackage: "matrix-pkg",
      packageNamespace: "wolfi",
      aliases: ["CVE-2025-0001"],
      events: [],
      severities: [],
      findings: "",
      createTime: Date.now(),
      updateTime: Date.now(),
    });
    return uid;
  }

  async function call(
    protocol: Protocol,
    entry: MethodEntry,
    message: Json,
    token?: string,
  ): Promise<Outcome> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    let res: Response;
    if (protocol === "grpc") {
      const { response, error } = await grpcCall(
        grpcClient,
        entry.rpcPath,
        { input: entry.method.input, output: entry.method.output },
        fromJson(entry.method.input, message as JsonValue),
        token,
      );
      if (error)
        return {
          status: error.code,
          code: CONNECT_CODES[error.code] ?? `code ${error.code}`,
          body: { message: error.details },
        };
      return { status: 200, code: "ok", body: toJson(entry.method.output, response!) as Json };
    }
    if (protocol === "connect") {
      res = await fetch(`${wharf.apiUrl}${entry.rpcPath}`, {
        method: "POST",
        headers: { ...headers, "connect-protocol-version": "1" },
        body: JSON.stringify(message),
      });
    } else {
      const { verb, path, body } = restRequest(entry.method, message);
      res = await fetch(`${wharf.apiUrl}${path}`, {
        method: verb,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    }
    const text = await res.text();
    const body = (text === "" ? {} : JSON.parse(text)) as Json;
    if (res.status === 200) return { status: 200, code: "ok", body };
    const code =
      typeof body.code === "string"
        ? body.code
        : (CONNECT_CODES[body.code as number] ?? `code ${String(body.code)}`);
    return { status: res.status, code, body };
  }

  before(async () => {
    // Loopback sinks: the subscriptions here never need a receiver.
    wharf = await startTestServer({ config: { eventsAllowLoopback: "true" } });
    grpcClient = new grpc.Client(new URL(wharf.apiUrl).host, grpc.credentials.createInsecure());
    const ownerA = await registeredPerson(wharf, "owner-a");
    const editorA = await registeredPerson(wharf, "editor-a");
    const viewerA = await registeredPerson(wharf, "viewer-a");
    const ownerB = await registeredPerson(wharf, "owner-b");
    const orgA = (
      await expectJson<{ uid: string }>(
        await wharf.api("/iam/v2/groups", { method: "POST", token: ownerA.token, body: { name: "acme" } }),
      )
    ).uid;
    const orgB = (
      await expectJson<{ uid: string }>(
        await wharf.api("/iam/v2/groups", { method: "POST", token: ownerB.token, body: { name: "globex" } }),
      )
    ).uid;
    const binding = await post(`/iam/v2/roleBindings/${orgA}`, { identityUid: viewerA.uid, roleUid: VIEWER });
    await post(`/iam/v2/roleBindings/${orgA}`, {
      identityUid: editorA.uid,
      roleUid: BUILT_IN_ROLE_UIDS.editor,
    });
    // The organization of everyone's email domain, verified by the administrator (for LookupGroup).
    const domainOrg = await post("/iam/v2/groups", { name: "example.com" });
    await wharf.api(`/iam/v2/groups/${domainOrg}?updateMask=verified`, {
      method: "PATCH",
      token: wharf.adminToken,
      body: { verified: true },
    });
    tokens.set("ownerA", ownerA.token);
    tokens.set("editorA", editorA.token);
    tokens.set("viewerA", viewerA.token);
    tokens.set("ownerB", ownerB.token);
    tokens.set("anonymous", undefined);

    const name = (prefix: string) => `${prefix}-${++counter}`;
    const group = () => post(`/iam/v2/groups/${orgA}`, { name: name("g") });
    const identity = () =>
      post(`/iam/v2/identities/${orgA}`, {
        name: name("bot"),
        claimMatch: { issuer: "https://ci.example.com", subject: name("s") },
      });
    const role = () => post(`/iam/v2/roles/${orgA}`, { name: name("role"), capabilities: ["CAP_REPO_LIST"] });
    const idp = () =>
      post(`/iam/v2/identityProviders/${orgA}`, {
        name: name("sso"),
        defaultRole: VIEWER,
        oidc: { issuer: "https://login.example.com", clientId: "wharf", clientSecret: "s3cret" },
      });
    const repo = () => post(`/registry/v2/repos/${orgA}`, { name: name("repo") });
    const subscription = () => post(`/events/v2/subscriptions/${orgA}`, { sink: "http://127.0.0.1:9/hook" });
    const invite = () => post(`/iam/v2/groupInvites/${orgA}`, { roleUid: VIEWER, ttl: "3600s" });
    const immutabilityRule = () =>
      post(`/registry/v2/immutabilityRules/${orgA}`, { tagPatterns: ["matrix-never-*"] });
    const upstream = () =>
      post(`/registry/v2/upstreams/${orgA}`, { name: name("up"), url: "https://192.0.2.1" });
    const policy = () =>
      post(`/registry/v2/policies/${orgA}`, { name: name("pol"), mode: "WARN", requireSbom: true });
    const signingKey = () =>
      post(`/registry/v2/signingKeys/${orgA}`, { name: name("key"), publicKeyPem: MATRIX_KEY_PEM });
    const replicationRule = () =>
      post(`/registry/v2/replicationRules/${orgA}`, {
        name: name("rule"),
        direction: "PUSH",
        trigger: "MANUAL",
        remote: { url: "https://127.0.0.1:9" },
      });
    const replicationRuleUid = await replicationRule();
    const replicationRun = await post(`/registry/v2/replicationRules/${replicationRuleUid}:run`, {});
    const retentionRepo = await repo();
    const retentionPolicy = () =>
      post(`/registry/v2/retentionPolicies/${retentionRepo}`, { rules: [{ keepLatest: 1 }] });

    await wharf.store.transaction((tx) =>
      storeLibraryVersions(
        tx,
        [
          {
            ecosystem: "JAVA",
            name: "org.example:matrix",
            version: "1.0",
            description: "",
            publishTime: Date.now(),
            sizeBytes: 1n,
            remediated: false,
          },
        ],
        { count: () => undefined, advance: () => undefined },
      ),
    );
    const repoUid = await repo();
    const registryToken = await wharf.registryToken();
    const bareRepoName = (
      await expectJson<{ name: string }>(
        await wharf.api(`/registry/v2/repos/${repoUid}`, { token: wharf.adminToken }),
      )
    ).name;
    const image = await pushImage(wharf, `acme/${bareRepoName}`, "v1", registryToken, "matrix");
    await attachReferrer(
      wharf,
      `acme/${bareRepoName}`,
      registryToken,
      image.digest,
      readFileSync(new URL("../fixtures/sbom/spdx-2.3.json", import.meta.url)),
      {
        artifactType: "application/spdx+json",
        layerMediaType: "application/spdx+json",
        subjectSize: image.manifest.length,
      },
    );
    // An EOL rule covering the repo's tags, so ListEolTags has A's tag to show or hide.
    await wharf.store.eol.putRule({
      orgUid: orgA,
      repoName: bareRepoName,
      tagGlob: "*",
      product: "matrix",
      createTime: Date.now(),
    });
    const tagOf = async (tagName: string) =>
      (
        await expectJson<{ tags: { uid: string; name: string }[] }>(
          await wharf.api(`/registry/v2/tags?uidp.children_of=${repoUid}&name=${tagName}`, {
            token: wharf.adminToken,
          }),
        )
      ).tags[0]?.uid as string;
    const idpUid = await idp();
    const mapping = () =>
      post(`/iam/v2/externalGroupRoleMappings/${idpUid}`, { externalGroupId: name("devs"), roleUid: VIEWER });
    const identityUid = await identity();
    await post(`/iam/v2/accountAssociations/${orgA}`, {
      name: "clouds",
      amazon: { account: "123456789012" },
    });
    f = {
      orgA,
      orgB,
      subgroup: await group(),
      identity: identityUid,
      role: await role(),
      binding,
      idp: idpUid,
      mapping: await mapping(),
      invite: await invite(),
      repo: repoUid,
      repoName: bareRepoName,
      tag: await tagOf("v1"),
      digest: image.digest,
      subscription: await subscription(),
      immutabilityRule: await immutabilityRule(),
      retentionPolicy: await retentionPolicy(),
      upstream: await upstream(),
      policy: await policy(),
      signingKey: await signingKey(),
      replicationRule: replicationRuleUid,
      replicationRun,
      pendingDelivery: "",
      advisory: await importedAdvisory(),
      vulnReportTime: (
        await expectJson<{ createdAt: string }>(
          await fetch(`${wharf.apiUrl}/registry/v1/vuln_reports/${repoUid}?digest=${image.digest}`, {
            method: "POST",
            headers: { authorization: `Bearer ${wharf.adminToken}` },
            body: GRYPE_REPORT,
          }),
        )
      ).createdAt,
    };
    // A change of A after the subscription: its delivery stays pending (the sink never answers).
    await group();
    const [pending] = await wharf.store.events.deliveries({
      subscriptionUid: f.subscription,
      state: "pending",
      limit: 1,
    });
    assert.ok(pending, "the subscription owes a delivery");
    f.pendingDelivery = pending.uid;
    fresh = {
      name,
      group,
      identity,
      role,
      binding: async () => post(`/iam/v2/roleBindings/${await group()}`, { identityUid, roleUid: VIEWER }),
      idp,
      mapping,
      invite,
      repo,
      async tag() {
        const tagName = name("t");
        await post(`/registry/v2/tags/${repoUid}`, { name: tagName, digest: image.digest });
        return tagOf(tagName);
      },
      subscription,
      immutabilityRule,
      retentionPolicy,
      upstream,
      policy,
      signingKey,
      replicationRule,
      async accountAssociation() {
        const g = await group();
        await post(`/iam/v2/accountAssociations/${g}`, {
          name: "clouds",
          amazon: { account: "123456789012" },
        });
        return g;
      },
      async inviteCode() {
        const created = await wharf.api(`/iam/v2/groupInvites/${await group()}`, {
          method: "POST",
          token: wharf.adminToken,
          body: { roleUid: VIEWER, ttl: "3600s" },
        });
        return (await expectJson<{ code: string }>(created)).code;
      },
    };
  });
  after(async () => {
    grpcClient.close();
    await wharf.close();
  });

  it("has a row for every RPC, and lists every unauthenticated RPC with its reason", () => {
    const names = METHODS.map((m) => m.rpcName).sort();
    assert.deepEqual(Object.keys(ROWS).sort(), names, "one row per bound RPC, no stale rows");
    assert.deepEqual(
      METHODS.filter((m) => m.auth.kind === "disabled")
        .map((m) => m.rpcName)
        .sort(),
      Object.keys(UNAUTHENTICATED_RPCS).sort(),
      "RPCs served without authentication",
    );
    for (const m of METHODS) {
      const row = ROWS[m.rpcName] as Row;
      if (m.auth.kind !== "unscoped") continue;
      assert.ok(
        row.list || row.open || row.checked || row.global,
        `${m.rpcName} is unscoped: say how its service authorizes`,
      );
      if (row.open) assert.deepEqual(m.auth.capabilities, [], `${m.rpcName} is open but names capabilities`);
    }
  });

  for (const protocol of ["connect", "rest", "grpc"] as const) {
    it(`answers each principal as the annotations and roles say [${protocol}]`, async (t) => {
      const failures: string[] = [];
      let cells = 0;
      const callers = new Map<PrincipalName, string>();
      for (const [who, token] of tokens) callers.set(who, token === undefined ? "" : await uidOfToken(token));
      for (const entry of METHODS) {
        const row = ROWS[entry.rpcName];
        if (!row) continue; // reported by the coverage test
        for (const who of PRINCIPALS) {
          cells++;
          const expected = expectedOutcome(entry, row, who);
          const message = await row.request(f, fresh, callers.get(who) ?? "");
          const out = await call(protocol, entry, message, tokens.get(who));
          const caps =
            entry.auth.kind === "disabled" ? "" : entry.auth.capabilities.map(enumNameOf).join(",");
          const got = `${out.status} ${out.code}`;
          const where = `${entry.rpcName} as ${who} (needs ${caps || "nothing"}): expected ${expected}, got ${got} ${JSON.stringify(out.body).slice(0, 200)}`;
          // gRPC has no HTTP status: its `status` is the gRPC code (0 OK, 7, 16).
          const [okStatus, deniedStatus, anonymousStatus] =
            protocol === "grpc" ? [200, 7, 16] : [200, 403, 401];
          const passes = row.passes && {
            status: protocol === "grpc" ? row.passes.grpc : row.passes.http,
            code: row.passes.code,
          };
          const ok =
            expected === "allowed" && passes
              ? out.status === passes.status && out.code === passes.code
              : expected === "allowed"
                ? out.status === okStatus && (!row.list || row.list.sees(out.body, f))
                : expected === "filtered"
                  ? out.status === okStatus && !row.list?.sees(out.body, f)
                  : expected === "denied"
                    ? out.status === deniedStatus && out.code === "permission_denied"
                    : out.status === anonymousStatus && out.code === "unauthenticated";
          if (!ok) failures.push(where);
        }
      }
      t.diagnostic(`${protocol}: ${METHODS.length} RPCs × ${PRINCIPALS.length} principals = ${cells} cells`);
      assert.deepEqual(failures, []);
    });
  }

  it("keeps B's owner away from A's registry repo, and lets A's viewer pull but not push", async () => {
    const repoName = `acme/${(await expectJson<{ name: string }>(await wharf.api(`/registry/v2/repos/${f.repo}`, { token: wharf.adminToken }))).name}`;
    const ownerBUid = await uidOfToken(tokens.get("ownerB") as string);
    const viewerUid = await uidOfToken(tokens.get("viewerA") as string);
    const asB = await wharf.registryToken(ownerBUid);
    const asViewer = await wharf.registryToken(viewerUid);
    const reads = [
      `/v2/${repoName}/manifests/v1`,
      `/v2/${repoName}/manifests/${f.digest}`,
      `/v2/${repoName}/tags/list`,
      `/v2/${repoName}/_service/history/v1`,
    ];
    for (const path of reads) {
      const denied = await wharf.registry(path, { token: asB });
      assert.equal(denied.status, 403, `${path} as B's owner`);
      assert.equal((await ociErrorOf(denied)).code, "DENIED");
      const allowed = await wharf.registry(path, { token: asViewer });
      assert.equal(allowed.status, 200, `${path} as A's viewer`);
      await allowed.arrayBuffer();
    }
    for (const token of [asB, asViewer]) {
      const push = await wharf.registry(`/v2/${repoName}/blobs/uploads/`, { method: "POST", token });
      assert.equal(push.status, 403, "push refused");
      assert.equal((await ociErrorOf(push)).code, "DENIED");
      const tag = await wharf.registry(`/v2/${repoName}/manifests/evil`, {
        method: "PUT",
        token,
        headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" },
        body: "{}",
      });
      assert.equal(tag.status, 403, "manifest PUT refused");
      await tag.arrayBuffer();
    }
    // Nothing moved: the tag still names the pushed image.
    const head = await wharf.registry(`/v2/${repoName}/manifests/v1`, {
      method: "HEAD",
      token: await wharf.registryToken(),
    });
    assert.equal(head.headers.get("docker-content-digest"), f.digest);
  });

  /** The subject of a token this test minted. */
  async function uidOfToken(token: string): Promise<string> {
    return (JSON.parse(Buffer.from(token.split(".")[1] as string, "base64url").toString()) as { sub: string })
      .sub;
  }
});
