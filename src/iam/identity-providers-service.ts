import { pageRequestOf, toUidpFilter } from "../core/api-convert.js";
import { invalidArgument, notFound, requireFound } from "../core/errors.js";
import { resolveUpdateMask, toSnake } from "../core/field-mask.js";
import { paginate } from "../core/list.js";
import { namedResourceList, pageEnvelope } from "../core/list-specs.js";
import type { ServiceHandlers } from "../core/service.js";
import { newChildUid, parentOf } from "../core/uidp.js";
import { validateDescription } from "../core/validation.js";
import { recordedMutation } from "../events/recorded-mutation.js";
import { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import {
  IdentityProvider_CorrelationRule as CorrelationRule,
  DeleteIdentityProviderRequestSchema,
  type IdentityProvider,
  type IdentityProvider_OIDC,
  IdentityProviderSchema,
  type IdentityProvidersService,
} from "../gen/platform/iam/v2/identity_providers_pb.js";
import type { IdentityProviderFilter, IdentityProviderRow, OidcProviderData } from "../storage/iam-store.js";
import { identityProviderMessage } from "./identity-provider-mapping.js";
import { isLoopbackHost, validateLongName, visibleRole } from "./resource-rules.js";
import type { IamServiceDeps } from "./service-deps.js";

const IDP_LIST = namedResourceList<IdentityProviderRow>();

const IDP_MASK = {
  known: ["uid", "name", "description", "create_time", "update_time", "default_role", "oidc"],
  updatable: ["name", "description", "default_role", "oidc"],
} as const;

/** The sub-fields of `oidc` (proto names), as an update mask may name them. */
const OIDC_FIELDS = [
  "issuer",
  "client_id",
  "client_secret",
  "additional_scopes",
  "groups_claim",
  "correlation_rule",
  "pkce_enabled",
] as const;
type OidcField = (typeof OIDC_FIELDS)[number];

/** An OAuth scope token (RFC 6749 §3.3). */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]{1,128}$/;
const MAX_SCOPES = 32;

/**
 * IdentityProvidersService: an organization's own OIDC providers. The client secret is write-only:
 * kept in the store for the login flow, never in a response (nor in errors, logs or events: the
 * events carry the same secret-free message as the response).
 */
export function createIdentityProvidersService(
  deps: IamServiceDeps,
): ServiceHandlers<typeof IdentityProvidersService> {
  const { store } = deps;
  return {
    async listIdentityProviders(req, ctx) {
      const within = await ctx.access.scopesWith([Capability.CAP_IAM_IDENTITY_PROVIDERS_LIST]);
      const filter: IdentityProviderFilter = { uidp: toUidpFilter(req.uidp) };
      if (req.name) filter.name = req.name;
      const page = await paginate(pageRequestOf(req), filter, IDP_LIST, deps.pageTokens, (window) =>
        store.identityProviders.list({ ...filter, within }, window),
      );
      return {
        identityProviders: page.items.map(identityProviderMessage),
        ...pageEnvelope(page),
      };
    },

    async getIdentityProvider(req) {
      const row = await store.identityProviders.get(req.uid);
      if (!row) throw notFound("identity_provider", req.uid);
      return identityProviderMessage(row);
    },

    async createIdentityProvider(req, ctx) {
      const input = req.identityProvider;
      validateLongName(input?.name ?? "");
      validateDescription(input?.description ?? "");
      if (!input) throw invalidArgument("name", "is required");
      if (input.configuration.case !== "oidc") throw invalidArgument("oidc", "is required");
      const oidc = validateOidc(oidcData(input.configuration.value));
      if (!(await store.groups.get(req.parent))) throw notFound("group", req.parent);
      await visibleRole(store, input.defaultRole, req.parent, "default_role");
      const now = ctx.clock.now();
      const row: IdentityProviderRow = {
        uid: newChildUid(req.parent),
        groupUid: req.parent,
        name: input.name,
        description: input.description,
        defaultRole: input.defaultRole,
        oidc,
        createTime: now,
        updateTime: now,
      };
      const message = identityProviderMessage(row);
      await recordedMutation(deps, ctx, (tx) => tx.identityProviders.insert(row), {
        resource: "identityProvider",
        verb: "created",
        subject: row.uid,
        group: row.groupUid,
        schema: IdentityProviderSchema,
        body: message,
      });
      return message;
    },

    async updateIdentityProvider(req, ctx) {
      const input = req.identityProvider;
      if (!input) throw invalidArgument("identity_provider", "is required");
      const current = await store.identityProviders.get(input.uid);
      if (!current) throw notFound("identity_provider", input.uid);
      const explicit = req.updateMask?.paths ?? [];
      const paths = explicit.length > 0 ? explicit : populatedPaths(input);
      const fields = resolveUpdateMask(IDP_MASK, paths, () => []);
      const next: IdentityProviderRow = {
        ...current,
        oidc: { ...current.oidc },
        updateTime: ctx.clock.now(),
      };
      if (fields.includes("name")) {
        validateLongName(input.name);
        next.name = input.name;
      }
      if (fields.includes("description")) {
        validateDescription(input.description);
        next.description = input.description;
      }
      if (fields.includes("default_role")) {
        await visibleRole(store, input.defaultRole, current.groupUid, "default_role");
        next.defaultRole = input.defaultRole;
      }
      if (fields.includes("oidc")) {
        const given = oidcData(input.configuration.case === "oidc" ? input.configuration.value : undefined);
        const { selected, secretNamed } = oidcFieldsOf(paths);
        for (const field of selected) {
          switch (field) {
            case "client_secret":
              // An empty secret keeps the stored one unless the mask names it explicitly.
              if (given.clientSecret !== "" || secretNamed) next.oidc.clientSecret = given.clientSecret;
              break;
            case "correlation_rule":
              if (given.correlationRule !== current.oidc.correlationRule) {
                // A whole-`oidc` replacement that leaves it unset restates nothing.
                if (given.correlationRule === CorrelationRule.UNSPECIFIED && !explicitlyNamed(paths, field))
                  break;
                throw invalidArgument("oidc.correlation_rule", "is immutable after create");
              }
              break;
            default:
              assignOidc(next.oidc, given, field);
          }
        }
        next.oidc = validateOidc(next.oidc);
      }
      const message = identityProviderMessage(next);
      await recordedMutation(
        deps,
        ctx,
        (tx) => requireFound(tx.identityProviders.update(next), "identity_provider", input.uid),
        {
          resource: "identityProvider",
          verb: "updated",
          subject: next.uid,
          group: next.groupUid,
          schema: IdentityProviderSchema,
          body: message,
        },
      );
      return message;
    },

    async deleteIdentityProvider(req, ctx) {
      await recordedMutation(
        deps,
        ctx,
        (tx) => requireFound(tx.identityProviders.delete(req.uid), "identity_provider", req.uid),
        {
          resource: "identityProvider",
          verb: "deleted",
          subject: req.uid,
          group: parentOf(req.uid),
          schema: DeleteIdentityProviderRequestSchema,
          body: { uid: req.uid },
        },
      );
      return {};
    },
  };
}

/** The stored form of an API OIDC block (defaults when absent). */
function oidcData(oidc: IdentityProvider_OIDC | undefined): OidcProviderData {
  return {
    issuer: oidc?.issuer ?? "",
    clientId: oidc?.clientId ?? "",
    clientSecret: oidc?.clientSecret ?? "",
    additionalScopes: [...(oidc?.additionalScopes ?? [])],
    groupsClaim: oidc?.groupsClaim ?? "",
    correlationRule: oidc?.correlationRule ?? CorrelationRule.UNSPECIFIED,
    pkceEnabled: oidc?.pkceEnabled ?? false,
  };
}

function assignOidc(target: OidcProviderData, from: OidcProviderData, field: OidcField): void {
  switch (field) {
    case "issuer":
      target.issuer = from.issuer;
      break;
    case "client_id":
      target.clientId = from.clientId;
      break;
    case "additional_scopes":
      target.additionalScopes = from.additionalScopes;
      break;
    case "groups_claim":
      target.groupsClaim = from.groupsClaim;
      break;
    case "pkce_enabled":
      target.pkceEnabled = from.pkceEnabled;
      break;
    default:
      break;
  }
}

/**
 * Which `oidc` sub-fields the mask selects: `*` or `oidc` select all of them, `oidc.<field>` just
 * that one (unknown sub-fields are INVALID_ARGUMENT on `update_mask`). `secretNamed` is true only
 * when `oidc.client_secret` itself is in the mask.
 */
function oidcFieldsOf(paths: readonly string[]): { selected: Set<OidcField>; secretNamed: boolean } {
  const selected = new Set<OidcField>();
  for (const raw of paths) {
    const path = raw.trim();
    const [top, sub, ...rest] = path.split(".");
    if (path === "*" || (toSnake(top ?? "") === "oidc" && sub === undefined)) {
      for (const f of OIDC_FIELDS) selected.add(f);
      continue;
    }
    if (toSnake(top ?? "") !== "oidc") continue;
    const field = toSnake(sub ?? "") as OidcField;
    if (!OIDC_FIELDS.includes(field) || rest.length > 0) {
      throw invalidArgument("update_mask", `unknown field path "${path}"`);
    }
    selected.add(field);
  }
  return { selected, secretNamed: explicitlyNamed(paths, "client_secret") };
}

function explicitlyNamed(paths: readonly string[], field: OidcField): boolean {
  return paths.some((p) => {
    const [top, sub, ...rest] = p.trim().split(".");
    return toSnake(top ?? "") === "oidc" && toSnake(sub ?? "") === field && rest.length === 0;
  });
}

/** The mask of a request without one (gRPC/Connect): the non-default fields, oidc by sub-field. */
function populatedPaths(input: IdentityProvider): string[] {
  const out: string[] = [];
  if (input.name !== "") out.push("name");
  if (input.description !== "") out.push("description");
  if (input.defaultRole !== "") out.push("default_role");
  if (input.configuration.case === "oidc") {
    const o = input.configuration.value;
    const set: [OidcField, boolean][] = [
      ["issuer", o.issuer !== ""],
      ["client_id", o.clientId !== ""],
      ["client_secret", o.clientSecret !== ""],
      ["additional_scopes", o.additionalScopes.length > 0],
      ["groups_claim", o.groupsClaim !== ""],
      ["correlation_rule", o.correlationRule !== CorrelationRule.UNSPECIFIED],
      ["pkce_enabled", o.pkceEnabled],
    ];
    const subs = set.filter(([, present]) => present).map(([f]) => `oidc.${f}`);
    out.push(...(subs.length > 0 ? subs : ["oidc"]));
  }
  return out;
}

/**
 * Validates a complete OIDC block: the issuer is an absolute https URL (http only for loopback
 * hosts) without credentials, query or fragment; a client id; a client secret unless PKCE is
 * enabled; scope tokens; a known correlation rule. Errors name `oidc.<field>` and never echo the
 * secret. Returns the block with `openid` and duplicate scopes dropped.
 */
function validateOidc(oidc: OidcProviderData): OidcProviderData {
  if (oidc.issuer === "") throw invalidArgument("oidc.issuer", "is required");
  let url: URL;
  try {
    url = new URL(oidc.issuer);
  } catch {
    throw invalidArgument("oidc.issuer", "must be an absolute https URL");
  }
  const httpsOrLoopback =
    url.protocol === "https:" || (url.protocol === "http:" && isLoopbackHost(url.hostname));
  if (!httpsOrLoopback) {
    throw invalidArgument("oidc.issuer", "must be an https URL (http only for loopback hosts)");
  }
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") {
    throw invalidArgument("oidc.issuer", "must not carry credentials, a query or a fragment");
  }
  if (oidc.clientId.trim() === "") throw invalidArgument("oidc.client_id", "is required");
  if (oidc.clientId.length > 512) throw invalidArgument("oidc.client_id", "must be at most 512 characters");
  if (oidc.clientSecret === "" && !oidc.pkceEnabled) {
    throw invalidArgument("oidc.client_secret", "is required unless pkce_enabled is set");
  }
  if (oidc.clientSecret.length > 1024) {
    throw invalidArgument("oidc.client_secret", "must be at most 1024 characters");
  }
  const scopes = [...new Set(oidc.additionalScopes)].filter((s) => s !== "openid");
  if (scopes.length > MAX_SCOPES) throw invalidArgument("oidc.additional_scopes", `at most ${MAX_SCOPES}`);
  for (const scope of scopes) {
    if (!SCOPE_TOKEN.test(scope)) {
      throw invalidArgument("oidc.additional_scopes", `"${scope}" is not a valid OAuth scope`);
    }
  }
  if (oidc.groupsClaim.length > 256 || /\s/.test(oidc.groupsClaim)) {
    throw invalidArgument("oidc.groups_claim", "must be a claim name (no spaces, at most 256 characters)");
  }
  if (CorrelationRule[oidc.correlationRule] === undefined) {
    throw invalidArgument("oidc.correlation_rule", `unknown correlation rule ${oidc.correlationRule}`);
  }
  return { ...oidc, additionalScopes: scopes };
}
