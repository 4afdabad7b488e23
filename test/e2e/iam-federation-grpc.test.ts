import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { create, type DescMessage, fromBinary, type MessageShape } from "@bufbuild/protobuf";
import { anyUnpack, durationFromMs, EmptySchema, FieldMaskSchema } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import { builtInRoleUid } from "../../src/authz/built-in-roles.js";
import { BadRequestSchema } from "../../src/gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../src/gen/google/rpc/status_pb.js";
import * as aa from "../../src/gen/platform/iam/v2/account_associations_pb.js";
import * as egrm from "../../src/gen/platform/iam/v2/external_group_role_mappings_pb.js";
import * as gi from "../../src/gen/platform/iam/v2/group_invites_pb.js";
import * as idps from "../../src/gen/platform/iam/v2/identity_providers_pb.js";
import * as terms from "../../src/gen/platform/iam/v2/terms_pb.js";
import { grpcCall } from "../support/grpc-call.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const SECRET = "grpc-client-secret-never-shown";
const VIEWER = builtInRoleUid("viewer");

/** The BadRequest field names carried in a grpc-js error's grpc-status-details-bin. */
function badRequestFields(error: grpc.ServiceError | undefined): string[] {
  const raw = error?.metadata.get("grpc-status-details-bin")[0];
  if (!(raw instanceof Buffer)) return [];
  const status = fromBinary(StatusSchema, raw);
  return status.details.flatMap((d) => {
    const bad = anyUnpack(d, BadRequestSchema);
    return bad ? bad.fieldViolations.map((v) => v.field) : [];
  });
}

describe("IAM federation services over gRPC (grpc-js)", () => {
  let wharf: TestServer;
  let client: grpc.Client;
  let org: string;

  /** One unary call as the administrator; asserts success and returns the response. */
  async function call<I extends DescMessage, O extends DescMessage>(
    service: string,
    method: string,
    schemas: { input: I; output: O },
    request: MessageShape<I>,
  ): Promise<MessageShape<O>> {
    const res = await grpcCall(
      client,
      `/platform.iam.v2.${service}/${method}`,
      schemas,
      request,
      wharf.adminToken,
    );
    assert.equal(res.error, undefined, `${method}: ${res.error?.details}`);
    assert.notEqual(res.response, undefined, `${method} answered`);
    return res.response as MessageShape<O>;
  }

  /** One unary call expected to fail with INVALID_ARGUMENT naming `field`. */
  async function invalid<I extends DescMessage, O extends DescMessage>(
    service: string,
    method: string,
    schemas: { input: I; output: O },
    request: MessageShape<I>,
    field: string,
  ): Promise<void> {
    const res = await grpcCall(
      client,
      `/platform.iam.v2.${service}/${method}`,
      schemas,
      request,
      wharf.adminToken,
    );
    assert.equal(res.error?.code, grpc.status.INVALID_ARGUMENT, `${method}: INVALID_ARGUMENT`);
    assert.ok(badRequestFields(res.error).includes(field), `${method}: BadRequest names ${field}`);
  }

  before(async () => {
    wharf = await startTestServer();
    org = await wharf.create("/iam/v2/groups", { name: "acme" });
    client = new grpc.Client(new URL(wharf.apiUrl).host, grpc.credentials.createInsecure());
  });
  after(async () => {
    client.close();
    const logs = JSON.stringify(wharf.logLines);
    await wharf.close();
    assert.equal(logs.includes(SECRET), false, "the client secret is never logged");
  });

  it("IdentityProvidersService: create, get, list, update (secret kept), delete; bad input", async () => {
    const S = "IdentityProvidersService";
    const oidc = create(idps.IdentityProvider_OIDCSchema, {
      issuer: "https://login.example.com",
      clientId: "wharf",
      clientSecret: SECRET,
      correlationRule: idps.IdentityProvider_CorrelationRule.SUB_EQUALS_EXTERNAL_ID,
    });
    const input = create(idps.IdentityProviderSchema, {
      name: "okta",
      defaultRole: VIEWER,
      configuration: { case: "oidc", value: oidc },
    });
    const createSchemas = {
      input: idps.CreateIdentityProviderRequestSchema,
      output: idps.IdentityProviderSchema,
    };
    await invalid(
      S,
      "CreateIdentityProvider",
      createSchemas,
      create(idps.CreateIdentityProviderRequestSchema, {
        parent: org,
        identityProvider: { ...input, name: "x" },
      }),
      "name",
    );
    const created = await call(
      S,
      "CreateIdentityProvider",
      createSchemas,
      create(idps.CreateIdentityProviderRequestSchema, { parent: org, identityProvider: input }),
    );
    assert.equal(created.configuration.case, "oidc", "oidc block");
    assert.equal(created.configuration.value?.clientSecret, "", "no secret in the response");
    const got = await call(
      S,
      "GetIdentityProvider",
      { input: idps.GetIdentityProviderRequestSchema, output: idps.IdentityProviderSchema },
      create(idps.GetIdentityProviderRequestSchema, { uid: created.uid }),
    );
    assert.equal(got.name, "okta", "get");
    const list = await call(
      S,
      "ListIdentityProviders",
      { input: idps.ListIdentityProvidersRequestSchema, output: idps.ListIdentityProvidersResponseSchema },
      create(idps.ListIdentityProvidersRequestSchema, { uidp: { descendantsOf: org } }),
    );
    assert.equal(list.totalCount, 1n, "listed");
    // No mask: the populated fields change; the empty secret keeps the stored one.
    const updated = await call(
      S,
      "UpdateIdentityProvider",
      { input: idps.UpdateIdentityProviderRequestSchema, output: idps.IdentityProviderSchema },
      create(idps.UpdateIdentityProviderRequestSchema, {
        identityProvider: {
          uid: created.uid,
          description: "sso",
          configuration: {
            case: "oidc",
            value: create(idps.IdentityProvider_OIDCSchema, { clientId: "wharf-2" }),
          },
        },
      }),
    );
    assert.equal(updated.description, "sso", "description");
    assert.equal(updated.configuration.value?.clientId, "wharf-2", "client id");
    assert.equal(updated.configuration.value?.issuer, "https://login.example.com", "issuer kept");
    assert.equal(
      (await wharf.store.identityProviders.get(created.uid))?.oidc.clientSecret,
      SECRET,
      "secret kept",
    );
    await invalid(
      S,
      "UpdateIdentityProvider",
      { input: idps.UpdateIdentityProviderRequestSchema, output: idps.IdentityProviderSchema },
      create(idps.UpdateIdentityProviderRequestSchema, {
        identityProvider: {
          uid: created.uid,
          configuration: { case: "oidc", value: create(idps.IdentityProvider_OIDCSchema) },
        },
        updateMask: create(FieldMaskSchema, { paths: ["oidc.client_secret"] }),
      }),
      "oidc.client_secret",
    );
    await call(
      S,
      "DeleteIdentityProvider",
      { input: idps.DeleteIdentityProviderRequestSchema, output: EmptySchema },
      create(idps.DeleteIdentityProviderRequestSchema, { uid: created.uid }),
    );
    assert.equal(await wharf.store.identityProviders.get(created.uid), undefined, "deleted");
  });

  it("ExternalGroupRoleMappingsService: create, get, list, batchDelete, delete; bad input", async () => {
    const idp = await wharf.create(`/iam/v2/identityProviders/${org}`, {
      name: "google",
      defaultRole: VIEWER,
      oidc: { issuer: "https://accounts.example.com", clientId: "c", pkceEnabled: true },
    });
    const S = "ExternalGroupRoleMappingsService";
    const schemas = {
      input: egrm.CreateExternalGroupRoleMappingRequestSchema,
      output: egrm.ExternalGroupRoleMappingSchema,
    };
    await invalid(
      S,
      "CreateExternalGroupRoleMapping",
      schemas,
      create(egrm.CreateExternalGroupRoleMappingRequestSchema, { parent: idp, mapping: { roleUid: VIEWER } }),
      "external_group_id",
    );
    const m = await call(
      S,
      "CreateExternalGroupRoleMapping",
      schemas,
      create(egrm.CreateExternalGroupRoleMappingRequestSchema, {
        parent: idp,
        mapping: { externalGroupId: "devs", roleUid: VIEWER },
      }),
    );
    assert.equal(m.scope, org, "scope = organization");
    const got = await call(
      S,
      "GetExternalGroupRoleMapping",
      { input: egrm.GetExternalGroupRoleMappingRequestSchema, output: egrm.ExternalGroupRoleMappingSchema },
      create(egrm.GetExternalGroupRoleMappingRequestSchema, { uid: m.uid }),
    );
    assert.equal(got.externalGroupId, "devs", "get");
    const list = await call(
      S,
      "ListExternalGroupRoleMappings",
      {
        input: egrm.ListExternalGroupRoleMappingsRequestSchema,
        output: egrm.ListExternalGroupRoleMappingsResponseSchema,
      },
      create(egrm.ListExternalGroupRoleMappingsRequestSchema, { identityProviderUid: idp }),
    );
    assert.deepEqual(
      list.externalGroupRoleMappings.map((x) => x.uid),
      [m.uid],
      "listed",
    );
    const batch = await call(
      S,
      "BatchDeleteExternalGroupRoleMappings",
      {
        input: egrm.BatchDeleteExternalGroupRoleMappingsRequestSchema,
        output: egrm.BatchDeleteExternalGroupRoleMappingsResponseSchema,
      },
      create(egrm.BatchDeleteExternalGroupRoleMappingsRequestSchema, { parent: idp, names: [m.uid] }),
    );
    assert.deepEqual(
      batch.externalGroupRoleMappings.map((x) => x.uid),
      [m.uid],
      "batch deleted",
    );
    const res = await grpcCall(
      client,
      `/platform.iam.v2.${S}/DeleteExternalGroupRoleMapping`,
      { input: egrm.DeleteExternalGroupRoleMappingRequestSchema, output: EmptySchema },
      create(egrm.DeleteExternalGroupRoleMappingRequestSchema, { uid: m.uid }),
      wharf.adminToken,
    );
    assert.equal(res.error?.code, grpc.status.NOT_FOUND, "already gone");
  });

  it("AccountAssociationsService: create, get, list, update, delete; bad input", async () => {
    const S = "AccountAssociationsService";
    const schemas = { input: aa.CreateAccountAssociationRequestSchema, output: aa.AccountAssociationSchema };
    await invalid(
      S,
      "CreateAccountAssociation",
      schemas,
      create(aa.CreateAccountAssociationRequestSchema, {
        parent: org,
        accountAssociation: { name: "cloud", amazon: { account: "12" } },
      }),
      "amazon.account",
    );
    const created = await call(
      S,
      "CreateAccountAssociation",
      schemas,
      create(aa.CreateAccountAssociationRequestSchema, {
        parent: org,
        accountAssociation: {
          name: "cloud",
          github: { appInstallations: { "77": { installations: [{ installationId: 9n, name: "acme" }] } } },
        },
      }),
    );
    assert.equal(created.uid, org, "uid = group");
    assert.equal(created.github?.appInstallations["77"]?.installations[0]?.installationId, 9n, "int64 ids");
    const updated = await call(
      S,
      "UpdateAccountAssociation",
      { input: aa.UpdateAccountAssociationRequestSchema, output: aa.AccountAssociationSchema },
      create(aa.UpdateAccountAssociationRequestSchema, {
        accountAssociation: { uid: org, amazon: { account: "123456789012" } },
      }),
    );
    assert.equal(updated.amazon?.account, "123456789012", "amazon added");
    assert.notEqual(updated.github, undefined, "github kept");
    const got = await call(
      S,
      "GetAccountAssociation",
      { input: aa.GetAccountAssociationRequestSchema, output: aa.AccountAssociationSchema },
      create(aa.GetAccountAssociationRequestSchema, { uid: org }),
    );
    assert.equal(got.name, "cloud", "get");
    const list = await call(
      S,
      "ListAccountAssociations",
      { input: aa.ListAccountAssociationsRequestSchema, output: aa.ListAccountAssociationsResponseSchema },
      create(aa.ListAccountAssociationsRequestSchema),
    );
    assert.equal(list.totalCount, 1n, "listed");
    for (let i = 0; i < 2; i++) {
      await call(
        S,
        "DeleteAccountAssociation",
        { input: aa.DeleteAccountAssociationRequestSchema, output: EmptySchema },
        create(aa.DeleteAccountAssociationRequestSchema, { uid: org }),
      );
    }
  });

  it("GroupInvitesService: create (code once), get, list, delete; bad input", async () => {
    const S = "GroupInvitesService";
    const schemas = { input: gi.CreateGroupInviteRequestSchema, output: gi.GroupInviteSchema };
    await invalid(
      S,
      "CreateGroupInvite",
      schemas,
      create(gi.CreateGroupInviteRequestSchema, { parent: org, invite: { roleUid: VIEWER } }),
      "ttl",
    );
    const created = await call(
      S,
      "CreateGroupInvite",
      schemas,
      create(gi.CreateGroupInviteRequestSchema, {
        parent: org,
        invite: { roleUid: VIEWER, ttl: durationFromMs(3_600_000), singleUse: true },
      }),
    );
    assert.match(created.code, /^wharf_inv_/, "code on create");
    assert.equal(created.role?.name, "viewer", "role hydrated");
    const got = await call(
      S,
      "GetGroupInvite",
      { input: gi.GetGroupInviteRequestSchema, output: gi.GroupInviteSchema },
      create(gi.GetGroupInviteRequestSchema, { uid: created.uid }),
    );
    assert.equal(got.code, "", "never again");
    const list = await call(
      S,
      "ListGroupInvites",
      { input: gi.ListGroupInvitesRequestSchema, output: gi.ListGroupInvitesResponseSchema },
      create(gi.ListGroupInvitesRequestSchema, { keyId: created.keyId }),
    );
    assert.deepEqual(
      list.invites.map((i) => i.uid),
      [created.uid],
      "by key id",
    );
    await call(
      S,
      "DeleteGroupInvite",
      { input: gi.DeleteGroupInviteRequestSchema, output: EmptySchema },
      create(gi.DeleteGroupInviteRequestSchema, { uid: created.uid }),
    );
    assert.equal(await wharf.store.groupInvites.get(created.uid), undefined, "deleted");
  });

  it("TermsService: accept and list; unknown document refused", async () => {
    const S = "TermsService";
    const schemas = { input: terms.AcceptTermsRequestSchema, output: terms.AcceptTermsResponseSchema };
    await invalid(
      S,
      "AcceptTerms",
      schemas,
      create(terms.AcceptTermsRequestSchema, { group: org, documentIds: ["nope.v9"] }),
      "document_ids",
    );
    const accepted = await call(
      S,
      "AcceptTerms",
      schemas,
      create(terms.AcceptTermsRequestSchema, { group: org, documentIds: ["guardener-tos.v1"] }),
    );
    assert.deepEqual(accepted.documentIds, ["guardener-tos.v1"], "accepted");
    const list = await call(
      S,
      "ListTermsAcceptances",
      { input: terms.ListTermsAcceptancesRequestSchema, output: terms.ListTermsAcceptancesResponseSchema },
      create(terms.ListTermsAcceptancesRequestSchema, { group: org }),
    );
    assert.deepEqual(
      list.termsAcceptances.map((t) => [t.docId, t.orgUid]),
      [["guardener-tos.v1", org]],
      "listed",
    );
    assert.equal(list.totalCount, 1n, "total");
  });
});
