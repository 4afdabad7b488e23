import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import type { RequestContext } from "../../core/context.js";
import { isDomainError } from "../../core/errors.js";
import type { ServiceHandlers } from "../../core/service.js";
import { everyV2Item, withIdFilter } from "../../core/v1-face.js";
import { v1Resource } from "../../core/v1-face-convert.js";
import { Capability } from "../../gen/platform/capabilities/capabilities_pb.js";
import type { Registry } from "../../gen/platform/registry/v1/registry_pb.js";
import { type Repo, RepoSchema } from "../../gen/platform/registry/v1/repos_tags_pb.js";
import {
  CreateRepoRequestSchema,
  DeleteRepoRequestSchema,
  GetRepoReadmeRequestSchema,
  ListReposRequestSchema,
  type ReposService,
  UpdateRepoReadmeRequestSchema,
  UpdateRepoRequestSchema,
  type Repo as V2Repo,
  RepoSchema as V2RepoSchema,
} from "../../gen/platform/registry/v2/repos_pb.js";
import type { Store } from "../../storage/store.js";
import { validateReadme } from "../readme.js";

/**
 * A v1 repo: the v2 repo by table (`uid` → `id`; v1 keeps `create_time`). Catalog tier, bundles,
 * aliases, active tags, sync_config and custom_overlay stay empty: Wharf stores none of them. A PUT
 * replaces name and description through the v2 UpdateRepo; the readme goes through UpdateRepoReadme.
 */
const REPO_V1 = v1Resource({ v1: RepoSchema, v2: V2RepoSchema, updatable: ["name", "description"] });

/** The v1 repo of a v2 repo and its readme (a v2 sub-resource, inline in v1). */
const repoV1 = (repo: V2Repo, readme: string): Repo => Object.assign(REPO_V1.toV1(repo), { readme });

/**
 * The v1 repo RPCs of the Registry service, as a face over the v2 ReposService handlers
 * (docs/adr/0030): the v1 inline readme is written through the v2 readme sub-resource, and read
 * through it by a PUT. `store` is read to find the repo a create collides with, and for the readmes
 * of a listed page in one read.
 */
export function createReposV1Handlers(
  repos: ServiceHandlers<typeof ReposService>,
  store: Pick<Store, "repos">,
): Pick<ServiceHandlers<typeof Registry>, "listRepos" | "createRepo" | "updateRepo" | "deleteRepo"> {
  const readmeOf = async (uid: string, ctx: RequestContext): Promise<string> =>
    (await repos.getRepoReadme(create(GetRepoReadmeRequestSchema, { uid }), ctx)).content ?? "";

  const writeReadme = (uid: string, content: string, ctx: RequestContext) =>
    repos.updateRepoReadme(
      create(UpdateRepoReadmeRequestSchema, {
        repoReadme: { uid, content },
        updateMask: { paths: ["content"] },
      }),
      ctx,
    );

  /** PUT semantics: every updatable field takes the body's value, an omitted one its zero value. */
  const replace = async (input: Repo, ctx: RequestContext): Promise<Repo> => {
    validateReadme(input.readme);
    const updated = create(
      V2RepoSchema,
      await repos.updateRepo(
        create(UpdateRepoRequestSchema, {
          repo: REPO_V1.toV2(input),
          updateMask: REPO_V1.mask,
        }),
        ctx,
      ),
    );
    if ((await readmeOf(input.id, ctx)) !== input.readme) await writeReadme(input.id, input.readme, ctx);
    return repoV1(updated, input.readme);
  };

  return {
    async listRepos(req, ctx) {
      const uidp = withIdFilter(req.uidp, req.id);
      if (!uidp) return { items: [] };
      // Each page's readmes in one store read. The v2 List answers only repos where the caller holds
      // CAP_REPO_LIST, the one capability GetRepoReadme asks at the repo, so the List has already
      // authorized every readme read here (one GetRepoReadme per repo read the same rows one by one).
      const items = await everyV2Item(
        "/registry/v2/repos",
        async (paging) => {
          const page = await repos.listRepos(
            create(ListReposRequestSchema, { uidp, name: req.name, ...paging }),
            ctx,
          );
          const listed = (page.repos ?? []).map((r) => create(V2RepoSchema, r));
          const readmes = await store.repos.readmes(listed.map((r) => r.uid));
          return { ...page, v1: listed.map((r) => repoV1(r, readmes.get(r.uid) ?? "")) };
        },
        (page) => page.v1,
      );
      return { items };
    },

    async createRepo(req, ctx) {
      const input = req.repo ?? create(RepoSchema);
      if (input.readme !== "") {
        // Writing a readme is a repo update in v2 (UpdateRepoReadme): the caller needs that too.
        validateReadme(input.readme);
        await ctx.access.require(req.parentId, [Capability.CAP_REPO_UPDATE]);
      }
      let created: V2Repo;
      try {
        created = create(
          V2RepoSchema,
          await repos.createRepo(
            create(CreateRepoRequestSchema, {
              parent: req.parentId,
              repo: { name: input.name, description: input.description },
            }),
            ctx,
          ),
        );
      } catch (err) {
        if (req.preventExisting || !isDomainError(err) || err.code !== Code.AlreadyExists) throw err;
        // Without prevent_existing a name collision updates the existing repo: that is the v2
        // UpdateRepo, so the caller needs its capability (the RPC's annotation names only create).
        await ctx.access.require(req.parentId, [Capability.CAP_REPO_UPDATE]);
        const existing = await store.repos.getByName(req.parentId, input.name);
        if (!existing) throw err;
        return replace({ ...input, id: existing.uid }, ctx);
      }
      if (input.readme !== "") await writeReadme(created.uid, input.readme, ctx);
      return repoV1(created, input.readme);
    },

    updateRepo: (req, ctx) => replace(req, ctx),

    async deleteRepo(req, ctx) {
      await repos.deleteRepo(create(DeleteRepoRequestSchema, { uid: req.id }), ctx);
      return {};
    },
  };
}
