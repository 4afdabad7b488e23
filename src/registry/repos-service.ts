import { pageRequestOf, toUidpFilter } from "../core/api-convert.js";
import type { RequestContext } from "../core/context.js";
import { invalidArgument, notFound, requireFound } from "../core/errors.js";
import { resolveUpdateMask } from "../core/field-mask.js";
import { paginate } from "../core/list.js";
import { namedResourceList, pageEnvelope } from "../core/list-specs.js";
import type { ServiceHandlers } from "../core/service.js";
import { parentOf } from "../core/uidp.js";
import { validateDescription } from "../core/validation.js";
import { recordedMutation } from "../events/recorded-mutation.js";
import { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import {
  DeleteRepoRequestSchema,
  type Repo,
  RepoSchema,
  type ReposService,
} from "../gen/platform/registry/v2/repos_pb.js";
import type { RepoFilter, RepoRow } from "../storage/registry-store.js";
import type { Store } from "../storage/store.js";
import { refuseRepoWithImmutableTags } from "./immutability/tag-guard.js";
import { repoMessage } from "./mapping.js";
import { withRepoRefusalRecorded } from "./quotas/repo-quota.js";
import { quotaEventSink } from "./quotas/storage-quota.js";
import { validateReadme } from "./readme.js";
import { createRepoIn, newRepoRow, validateNewRepo } from "./repo-creation.js";
import type { RegistryServiceDeps } from "./service-deps.js";
import { refuseRepoInUpstreamNamespace } from "./upstreams/upstream-namespace.js";

const REPO_LIST = namedResourceList<RepoRow>();

const REPO_MASK = {
  known: ["uid", "name", "description", "create_time", "update_time"],
  updatable: ["name", "description"],
} as const;

/**
 * ReposService: repositories under groups, and their readmes. Changes are events of the repo's
 * group; a readme update is a `repo.updated` event with the repo as its body. A repo holding a tag
 * an immutability rule protects is not deleted (FAILED_PRECONDITION `TAG_IMMUTABLE`, ADR 0045).
 */
export function createReposService(deps: RegistryServiceDeps): ServiceHandlers<typeof ReposService> {
  const { store } = deps;

  /** Writes `next` over the stored repo and records it as updated, in one transaction. */
  const updated = async (next: RepoRow, ctx: RequestContext): Promise<Repo> => {
    const message = repoMessage(next);
    await recordedMutation(deps, ctx, (tx) => requireFound(tx.repos.update(next), "repo", next.uid), {
      resource: "repo",
      verb: "updated",
      subject: next.uid,
      group: next.groupUid,
      schema: RepoSchema,
      body: message,
    });
    return message;
  };

  return {
    async listRepos(req, ctx) {
      const within = await ctx.access.scopesWith([Capability.CAP_REPO_LIST]);
      const filter: RepoFilter = { uidp: toUidpFilter(req.uidp) };
      if (req.name) filter.name = req.name;
      const page = await paginate(pageRequestOf(req), filter, REPO_LIST, deps.pageTokens, (window) =>
        store.repos.list({ ...filter, within }, window),
      );
      return {
        repos: page.items.map(repoMessage),
        ...pageEnvelope(page),
      };
    },

    async getRepo(req) {
      const row = await store.repos.get(req.uid);
      if (!row) throw notFound("repo", req.uid);
      return repoMessage(row);
    },

    async createRepo(req, ctx) {
      const input = req.repo;
      validateNewRepo(input?.name ?? "", input?.description ?? "");
      if (!(await store.groups.get(req.parent))) throw notFound("group", req.parent);
      await refuseRepoInUpstreamNamespace(store, req.parent);
      const row = newRepoRow(req.parent, input?.name ?? "", input?.description ?? "", ctx.clock.now());
      await withRepoRefusalRecorded(
        store,
        quotaEventSink(deps.events, ctx),
        { groupUid: req.parent, repository: row.name },
        () => store.transaction((tx) => createRepoIn(tx, deps, ctx, row), ctx.signal),
      );
      return repoMessage(row);
    },

    async updateRepo(req, ctx) {
      const input = req.repo;
      if (!input) throw invalidArgument("repo", "is required");
      const current = await store.repos.get(input.uid);
      if (!current) throw notFound("repo", input.uid);
      const fields = resolveUpdateMask(REPO_MASK, req.updateMask?.paths ?? [], () =>
        [input.name !== "" ? "name" : "", input.description !== "" ? "description" : ""].filter(Boolean),
      );
      const next: RepoRow = { ...current, updateTime: ctx.clock.now() };
      if (fields.includes("name") && input.name !== current.name) {
        // The name is the last component of the image path: renaming would break every pull.
        throw invalidArgument("name", "a repo cannot be renamed");
      }
      if (fields.includes("description")) {
        validateDescription(input.description);
        next.description = input.description;
      }
      return updated(next, ctx);
    },

    async deleteRepo(req, ctx) {
      const deleteRepo = async (tx: Store) => {
        await refuseRepoWithImmutableTags(tx, req.uid);
        return requireFound(tx.repos.delete(req.uid), "repo", req.uid);
      };
      await recordedMutation(deps, ctx, deleteRepo, {
        resource: "repo",
        verb: "deleted",
        subject: req.uid,
        group: parentOf(req.uid),
        schema: DeleteRepoRequestSchema,
        body: { uid: req.uid },
      });
      return {};
    },

    async getRepoReadme(req) {
      const row = await store.repos.get(req.uid);
      if (!row) throw notFound("repo", req.uid);
      return { uid: row.uid, content: row.readme };
    },

    async updateRepoReadme(req, ctx) {
      const input = req.repoReadme;
      if (!input) throw invalidArgument("repo_readme", "is required");
      const current = await store.repos.get(input.uid);
      if (!current) throw notFound("repo", input.uid);
      const fields = resolveUpdateMask(
        { known: ["uid", "content"], updatable: ["content"] },
        req.updateMask?.paths ?? [],
        () => ["content"],
      );
      if (!fields.includes("content")) return { uid: current.uid, content: current.readme };
      validateReadme(input.content);
      const next: RepoRow = { ...current, readme: input.content, updateTime: ctx.clock.now() };
      await updated(next, ctx);
      return { uid: next.uid, content: next.readme };
    },
  };
}
