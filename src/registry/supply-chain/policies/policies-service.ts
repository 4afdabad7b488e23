import { pageRequestOf, toUidpFilter } from "../../../core/api-convert.js";
import { failedPrecondition, invalidArgument, notFound, requireFound } from "../../../core/errors.js";
import { resolveUpdateMask } from "../../../core/field-mask.js";
import type { PageTokenCodec } from "../../../core/list.js";
import { paginate } from "../../../core/list.js";
import { namedResourceList, pageEnvelope } from "../../../core/list-specs.js";
import type { ServiceHandlers } from "../../../core/service.js";
import { newChildUid, parentOf, requireUidp } from "../../../core/uidp.js";
import type { EventRecorder } from "../../../events/event-recorder.js";
import { recordedMutation } from "../../../events/recorded-mutation.js";
import { Capability } from "../../../gen/platform/capabilities/capabilities_pb.js";
import {
  DeletePolicyRequestSchema,
  type PoliciesService,
  PolicySchema,
} from "../../../gen/platform/registry/v2/policies_pb.js";
import type { PullPolicyRow } from "../../../storage/pull-policy-store.js";
import type { Store } from "../../../storage/store.js";
import { validateDigest, validateTagName } from "../../names.js";
import { repoPathOf } from "../../repo-path.js";
import { requireGroupOrRepo } from "../../resource-parent.js";
import {
  modeOf,
  policyMessage,
  severityOf,
  validateExemptIdentities,
  validatePolicyName,
  validateRules,
  violationMessage,
} from "./policy-mapping.js";
import type { PullPolicies } from "./pull-policies.js";

/** What PoliciesService is built from. */
export interface PoliciesServiceDeps {
  store: Pick<
    Store,
    "pullPolicies" | "groups" | "repos" | "identities" | "manifests" | "tags" | "transaction"
  >;
  pageTokens: PageTokenCodec;
  events: EventRecorder;
  /** The evaluator `EvaluatePolicies` asks; without it (no supply-chain wing) the RPC is FAILED_PRECONDITION. */
  pullPolicies?: PullPolicies | undefined;
}

const POLICY_LIST = namedResourceList<PullPolicyRow>();

const POLICY_MASK = {
  known: [
    "uid",
    "name",
    "mode",
    "require_signature",
    "deny_severity",
    "only_fixable",
    "deny_eol",
    "require_sbom",
    "exempt_identities",
    "create_time",
    "update_time",
  ],
  updatable: [
    "name",
    "mode",
    "require_signature",
    "deny_severity",
    "only_fixable",
    "deny_eol",
    "require_sbom",
    "exempt_identities",
  ],
} as const;

/**
 * PoliciesService: pull policies under an organization, a folder or a repo (ADR 0058), and
 * EvaluatePolicies. Every write is validated (name, mode, at least one rule, existing exempt
 * identities) and is a `policy.<verb>` event of the parent; the registry sees it within the
 * change feed's delay (the evaluator follows it).
 */
export function createPoliciesService(deps: PoliciesServiceDeps): ServiceHandlers<typeof PoliciesService> {
  const { store } = deps;
  return {
    async listPolicies(req, ctx) {
      const within = await ctx.access.scopesWith([Capability.CAP_REGISTRY_POLICIES_LIST]);
      const filter = { uidp: toUidpFilter(req.uidp) };
      const page = await paginate(pageRequestOf(req), filter, POLICY_LIST, deps.pageTokens, (window) =>
        store.pullPolicies.list({ ...filter, within }, window),
      );
      return { policies: page.items.map(policyMessage), ...pageEnvelope(page) };
    },

    async getPolicy(req) {
      const row = await store.pullPolicies.get(req.uid);
      if (!row) throw notFound("policy", req.uid);
      return policyMessage(row);
    },

    async createPolicy(req, ctx) {
      requireUidp("parent", req.parent);
      const input = req.policy;
      if (!input) throw invalidArgument("policy", "is required");
      const now = ctx.clock.now();
      const row: PullPolicyRow = {
        uid: newChildUid(req.parent),
        parentUid: req.parent,
        name: validatePolicyName(input.name),
        mode: modeOf(input.mode),
        requireSignature: input.requireSignature,
        denySeverity: severityOf(input.denySeverity),
        onlyFixable: input.onlyFixable,
        denyEol: input.denyEol,
        requireSbom: input.requireSbom,
        exemptIdentities: [],
        createTime: now,
        updateTime: now,
      };
      validateRules(row);
      row.exemptIdentities = await validateExemptIdentities(store, input.exemptIdentities);
      const message = policyMessage(row);
      await recordedMutation(
        deps,
        ctx,
        async (tx) => {
          await requireGroupOrRepo(tx, req.parent);
          await tx.pullPolicies.insert(row);
        },
        {
          resource: "policy",
          verb: "created",
          subject: row.uid,
          group: row.parentUid,
          schema: PolicySchema,
          body: message,
        },
      );
      return message;
    },

    async updatePolicy(req, ctx) {
      const input = req.policy;
      if (!input) throw invalidArgument("policy", "is required");
      const current = await store.pullPolicies.get(input.uid);
      if (!current) throw notFound("policy", input.uid);
      const fields = resolveUpdateMask(POLICY_MASK, req.updateMask?.paths ?? [], () =>
        [
          input.name !== "" ? "name" : "",
          input.mode !== 0 ? "mode" : "",
          input.requireSignature ? "require_signature" : "",
          input.denySeverity !== 0 ? "deny_severity" : "",
          input.onlyFixable ? "only_fixable" : "",
          input.denyEol ? "deny_eol" : "",
          input.requireSbom ? "require_sbom" : "",
          input.exemptIdentities.length > 0 ? "exempt_identities" : "",
        ].filter(Boolean),
      );
      const next: PullPolicyRow = { ...current, updateTime: ctx.clock.now() };
      if (fields.includes("name")) next.name = validatePolicyName(input.name);
      if (fields.includes("mode")) next.mode = modeOf(input.mode);
      if (fields.includes("require_signature")) next.requireSignature = input.requireSignature;
      if (fields.includes("deny_severity")) next.denySeverity = severityOf(input.denySeverity);
      if (fields.includes("only_fixable")) next.onlyFixable = input.onlyFixable;
      if (fields.includes("deny_eol")) next.denyEol = input.denyEol;
      if (fields.includes("require_sbom")) next.requireSbom = input.requireSbom;
      validateRules(next);
      if (fields.includes("exempt_identities")) {
        next.exemptIdentities = await validateExemptIdentities(store, input.exemptIdentities);
      }
      const message = policyMessage(next);
      await recordedMutation(
        deps,
        ctx,
        (tx) => requireFound(tx.pullPolicies.update(next), "policy", next.uid),
        {
          resource: "policy",
          verb: "updated",
          subject: next.uid,
          group: next.parentUid,
          schema: PolicySchema,
          body: message,
        },
      );
      return message;
    },

    async deletePolicy(req, ctx) {
      await recordedMutation(
        deps,
        ctx,
        (tx) => requireFound(tx.pullPolicies.delete(req.uid), "policy", req.uid),
        {
          resource: "policy",
          verb: "deleted",
          subject: req.uid,
          group: parentOf(req.uid),
          schema: DeletePolicyRequestSchema,
          body: { uid: req.uid },
        },
      );
      return {};
    },

    async evaluatePolicies(req) {
      requireUidp("repo_uid", req.repoUid);
      validateDigest(req.digest);
      if (req.tag !== "") validateTagName(req.tag);
      const repo = await store.repos.get(req.repoUid);
      if (!repo) throw notFound("repo", req.repoUid);
      if (!(await store.manifests.has(repo.uid, req.digest))) throw notFound("manifest", req.digest);
      if (req.tag !== "") {
        const tag = await store.tags.getByName(repo.uid, req.tag);
        if (!tag) throw notFound("tag", req.tag);
        if (tag.digest !== req.digest) {
          throw invalidArgument("tag", `tag ${req.tag} names ${tag.digest}, not ${req.digest}`);
        }
      }
      if (deps.pullPolicies === undefined) {
        throw failedPrecondition(
          "POLICIES_UNAVAILABLE",
          "this server does not evaluate pull policies",
          repo.uid,
        );
      }
      const decision = await deps.pullPolicies.evaluate({
        repoUid: repo.uid,
        repository: await repoPathOf(store, repo),
        digest: req.digest,
        ...(req.tag === "" ? {} : { tag: req.tag }),
      });
      return {
        allowed: decision.allowed,
        violations: decision.violations.map(violationMessage),
        warnings: decision.warnings,
      };
    },
  };
}
