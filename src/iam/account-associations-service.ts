import { create } from "@bufbuild/protobuf";
import { pageRequestOf, toTimestamp, toUidpFilter } from "../core/api-convert.js";
import { invalidArgument, notFound, requireFound } from "../core/errors.js";
import { resolveUpdateMask } from "../core/field-mask.js";
import { paginate } from "../core/list.js";
import { namedResourceList, pageEnvelope } from "../core/list-specs.js";
import type { ServiceHandlers } from "../core/service.js";
import { validateDescription, validateName } from "../core/validation.js";
import { recordedMutation } from "../events/recorded-mutation.js";
import { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import {
  type AccountAssociation,
  AccountAssociation_AmazonSchema,
  AccountAssociation_AzureSchema,
  AccountAssociation_GitHubSchema,
  AccountAssociation_GoogleSchema,
  AccountAssociation_InstallationSchema,
  AccountAssociation_InstallationsSchema,
  AccountAssociationSchema,
  type AccountAssociationsService,
  DeleteAccountAssociationRequestSchema,
} from "../gen/platform/iam/v2/account_associations_pb.js";
import type { AccountAssociationFilter, AccountAssociationRow } from "../storage/iam-store.js";
import type { IamServiceDeps } from "./service-deps.js";

const ASSOCIATION_LIST = namedResourceList<AccountAssociationRow>();

const PROVIDERS = ["amazon", "google", "azure", "github"] as const;

const ASSOCIATION_MASK = {
  known: ["uid", "name", "description", "create_time", "update_time", ...PROVIDERS],
  updatable: ["name", "description", ...PROVIDERS],
} as const;

const AWS_ACCOUNT = /^\d{12}$/;
const GCP_PROJECT_ID = /^[a-z][a-z0-9-]{5,29}$/;
const DIGITS = /^\d{1,20}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_ENTRIES = 100;

/**
 * AccountAssociationsService: which cloud accounts belong to a group. One association per group,
 * whose uid is the group's uid; deletes are idempotent. Changes are events of that group (the
 * association's uid is the group's, so the group, not its parent, is where it belongs).
 */
export function createAccountAssociationsService(
  deps: IamServiceDeps,
): ServiceHandlers<typeof AccountAssociationsService> {
  const { store } = deps;
  return {
    async listAccountAssociations(req, ctx) {
      const within = await ctx.access.scopesWith([Capability.CAP_IAM_ACCOUNT_ASSOCIATIONS_LIST]);
      const filter: AccountAssociationFilter = { uidp: toUidpFilter(req.uidp) };
      if (req.name) filter.name = req.name;
      const page = await paginate(pageRequestOf(req), filter, ASSOCIATION_LIST, deps.pageTokens, (window) =>
        store.accountAssociations.list({ ...filter, within }, window),
      );
      return {
        associations: page.items.map(accountAssociationMessage),
        ...pageEnvelope(page),
      };
    },

    async getAccountAssociation(req) {
      const row = await store.accountAssociations.get(req.uid);
      if (!row) throw notFound("account_association", req.uid);
      return accountAssociationMessage(row);
    },

    async createAccountAssociation(req, ctx) {
      const input = req.accountAssociation;
      validateName(input?.name ?? "");
      validateDescription(input?.description ?? "");
      if (!input) throw invalidArgument("name", "is required");
      const blocks = providerBlocks(input, PROVIDERS);
      if (!(await store.groups.get(req.parent))) throw notFound("group", req.parent);
      const now = ctx.clock.now();
      const row: AccountAssociationRow = {
        uid: req.parent,
        name: input.name,
        description: input.description,
        ...blocks,
        createTime: now,
        updateTime: now,
      };
      const message = accountAssociationMessage(row);
      await recordedMutation(deps, ctx, (tx) => tx.accountAssociations.insert(row), {
        resource: "accountAssociation",
        verb: "created",
        subject: row.uid,
        group: row.uid,
        schema: AccountAssociationSchema,
        body: message,
      });
      return message;
    },

    async updateAccountAssociation(req, ctx) {
      const input = req.accountAssociation;
      if (!input) throw invalidArgument("account_association", "is required");
      const current = await store.accountAssociations.get(input.uid);
      if (!current) throw notFound("account_association", input.uid);
      const fields = resolveUpdateMask(ASSOCIATION_MASK, req.updateMask?.paths ?? [], () => {
        const out: string[] = [];
        if (input.name !== "") out.push("name");
        if (input.description !== "") out.push("description");
        for (const p of PROVIDERS) if (input[p] !== undefined) out.push(p);
        return out;
      });
      const next: AccountAssociationRow = { ...current, updateTime: ctx.clock.now() };
      if (fields.includes("name")) {
        validateName(input.name);
        next.name = input.name;
      }
      if (fields.includes("description")) {
        validateDescription(input.description);
        next.description = input.description;
      }
      const selected = PROVIDERS.filter((p) => fields.includes(p));
      const blocks = providerBlocks(input, selected);
      for (const p of selected) delete next[p];
      Object.assign(next, blocks);
      const message = accountAssociationMessage(next);
      await recordedMutation(
        deps,
        ctx,
        (tx) => requireFound(tx.accountAssociations.update(next), "account_association", input.uid),
        {
          resource: "accountAssociation",
          verb: "updated",
          subject: next.uid,
          group: next.uid,
          schema: AccountAssociationSchema,
          body: message,
        },
      );
      return message;
    },

    async deleteAccountAssociation(req, ctx) {
      // Idempotent: deleting a missing association succeeds and reports nothing.
      await recordedMutation(
        deps,
        ctx,
        (tx) => tx.accountAssociations.delete(req.uid),
        (deleted) =>
          deleted
            ? {
                resource: "accountAssociation",
                verb: "deleted",
                subject: req.uid,
                group: req.uid,
                schema: DeleteAccountAssociationRequestSchema,
                body: { uid: req.uid },
              }
            : undefined,
      );
      return {};
    },
  };
}

/** The API message of a stored association. */
function accountAssociationMessage(row: AccountAssociationRow): AccountAssociation {
  const msg = create(AccountAssociationSchema, {
    uid: row.uid,
    name: row.name,
    description: row.description,
    createTime: toTimestamp(row.createTime),
    updateTime: toTimestamp(row.updateTime),
  });
  if (row.amazon) msg.amazon = create(AccountAssociation_AmazonSchema, row.amazon);
  if (row.google) msg.google = create(AccountAssociation_GoogleSchema, row.google);
  if (row.azure) msg.azure = create(AccountAssociation_AzureSchema, row.azure);
  if (row.github) {
    const appInstallations: Record<string, ReturnType<typeof installations>> = {};
    for (const [app, list] of Object.entries(row.github.appInstallations))
      appInstallations[app] = installations(list);
    msg.github = create(AccountAssociation_GitHubSchema, { appInstallations });
  }
  return msg;
}

function installations(list: { installationId: string; name: string }[]) {
  return create(AccountAssociation_InstallationsSchema, {
    installations: list.map((i) =>
      create(AccountAssociation_InstallationSchema, {
        installationId: BigInt(i.installationId),
        name: i.name,
      }),
    ),
  });
}

/**
 * Validates and converts the provider blocks named in `which` that the input carries (a named
 * block the input lacks is simply absent). Errors name `<provider>.<field>`.
 */
function providerBlocks(
  input: AccountAssociation,
  which: readonly (typeof PROVIDERS)[number][],
): Pick<AccountAssociationRow, (typeof PROVIDERS)[number]> {
  const out: Pick<AccountAssociationRow, (typeof PROVIDERS)[number]> = {};
  if (which.includes("amazon") && input.amazon) {
    if (!AWS_ACCOUNT.test(input.amazon.account)) {
      throw invalidArgument("amazon.account", "must be a 12-digit AWS account id");
    }
    out.amazon = { account: input.amazon.account };
  }
  if (which.includes("google") && input.google) {
    const { projectId, projectNumber } = input.google;
    if (projectId === "" && projectNumber === "") {
      throw invalidArgument("google.project_id", "project_id or project_number is required");
    }
    if (projectId !== "" && !GCP_PROJECT_ID.test(projectId)) {
      throw invalidArgument(
        "google.project_id",
        "must be 6 to 30 lowercase letters, digits or hyphens, starting with a letter",
      );
    }
    if (projectNumber !== "" && !DIGITS.test(projectNumber)) {
      throw invalidArgument("google.project_number", "must be digits");
    }
    out.google = { projectId, projectNumber };
  }
  if (which.includes("azure") && input.azure) {
    const { tenantId, clientIds } = input.azure;
    if (!UUID.test(tenantId)) throw invalidArgument("azure.tenant_id", "must be a UUID");
    const entries = Object.entries(clientIds);
    if (entries.length > MAX_ENTRIES) throw invalidArgument("azure.client_ids", `at most ${MAX_ENTRIES}`);
    for (const [component, clientId] of entries) {
      if (component === "" || component.length > 128) {
        throw invalidArgument("azure.client_ids", "component names must be 1 to 128 characters");
      }
      if (!UUID.test(clientId)) {
        throw invalidArgument(
          `azure.client_ids[${component}]`,
          "must be a UUID (an application (client) id)",
        );
      }
    }
    out.azure = { tenantId: tenantId.toLowerCase(), clientIds: { ...clientIds } };
  }
  if (which.includes("github") && input.github) {
    const apps = Object.entries(input.github.appInstallations);
    if (apps.length > MAX_ENTRIES)
      throw invalidArgument("github.app_installations", `at most ${MAX_ENTRIES}`);
    const appInstallations: Record<string, { installationId: string; name: string }[]> = {};
    for (const [app, list] of apps) {
      if (!DIGITS.test(app) || BigInt(app) <= 0n) {
        throw invalidArgument("github.app_installations", `app id ${app} must be a positive integer`);
      }
      appInstallations[app] = list.installations.map((i) => {
        if (i.installationId <= 0n) {
          throw invalidArgument(
            `github.app_installations[${app}].installations.installation_id`,
            "must be a positive integer",
          );
        }
        if (i.name.length > 256) {
          throw invalidArgument(
            `github.app_installations[${app}].installations.name`,
            "at most 256 characters",
          );
        }
        return { installationId: i.installationId.toString(), name: i.name };
      });
    }
    out.github = { appInstallations };
  }
  return out;
}
