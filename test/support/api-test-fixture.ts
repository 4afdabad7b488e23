import { randomBytes } from "node:crypto";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { Access, Principal } from "../../src/core/context.js";
import { invalidArgument, notFound, permissionDenied, unauthenticated } from "../../src/core/errors.js";
import { bindService } from "../../src/core/service.js";
import { isAncestorOrSelf } from "../../src/core/uidp.js";
import { GroupsService } from "../../src/gen/platform/iam/v2/groups_pb.js";
import { RoleBindingsService } from "../../src/gen/platform/iam/v2/role_bindings_pb.js";
import { PingService } from "../../src/gen/platform/ping/v2/ping_pb.js";
import { type Repo, ReposService } from "../../src/gen/platform/registry/v2/repos_pb.js";
import { type ApiServer, createApiHandler, startApiServer } from "../../src/transport/create-api-handler.js";

/** Test-only: a root uid where the fixture's caller holds every capability. */
export const OWN_ORG = "1".repeat(40);
/** Test-only: a root uid where the fixture's caller holds nothing. */
export const OTHER_ORG = "2".repeat(40);
/** Test-only: the one token the fixture's authenticator accepts. */
export const GOOD_TOKEN = "good.token.value";
/** Test-only: the identity behind GOOD_TOKEN. */
export const CALLER_UID = "3".repeat(40);

/** Test-only: a started API server over small in-memory services, and what it observed. */
export interface ApiFixture {
  server: ApiServer;
  baseUrl: string;
  logLines: Record<string, unknown>[];
  /** The update masks UpdateRepo received, in order. */
  updateMasks: string[][];
  close(): Promise<void>;
}

/**
 * Test-only: boots the real transport (`createApiHandler` + `startApiServer`) with PingService and
 * tiny in-memory Repos, Groups and RoleBindings implementations. Repo names must be non-empty;
 * `GetRepo` of an unknown uid is NOT_FOUND; `ListRepos` throws a plain Error when `name` is "boom".
 * Access: everything under OWN_ORG, nothing elsewhere.
 */
export async function startApiFixture(): Promise<ApiFixture> {
  const repos = new Map<string, Repo>();
  const readmes = new Map<string, string>();
  const updateMasks: string[][] = [];
  const logLines: Record<string, unknown>[] = [];
  const now = () => timestampFromMs(1_767_225_600_000);
  const unused = async (): Promise<never> => {
    throw new Error("not used by these tests");
  };

  const bindings = [
    bindService(PingService, { ping: async () => ({ response: "pong" }) }),
    bindService(ReposService, {
      async listRepos(request) {
        if (request.name === "boom") throw new Error("database on fire at 10.0.0.7");
        const all = [...repos.values()].filter((r) => r.uid.startsWith(request.uidp?.descendantsOf ?? ""));
        return { repos: all.slice(0, request.pageSize || 50), totalCount: BigInt(all.length) };
      },
      async getRepo(request) {
        const repo = repos.get(request.uid);
        if (!repo) throw notFound("repo", request.uid);
        return repo;
      },
      async createRepo(request) {
        const name = request.repo?.name ?? "";
        if (name === "") throw invalidArgument("name", 'name must match "^[a-z0-9 ._-]{1,}$"');
        const uid = `${request.parent}/${randomBytes(8).toString("hex")}`;
        const repo = {
          uid,
          name,
          description: request.repo?.description ?? "",
          createTime: now(),
          updateTime: now(),
        };
        repos.set(uid, repo as Repo);
        return repo;
      },
      async updateRepo(request) {
        const current = repos.get(request.repo?.uid ?? "");
        if (!current || !request.repo) throw notFound("repo", request.repo?.uid ?? "");
        const paths = request.updateMask?.paths ?? [];
        updateMasks.push(paths);
        if (paths.includes("name")) current.name = request.repo.name;
        if (paths.includes("description")) current.description = request.repo.description;
        return current;
      },
      async deleteRepo(request) {
        repos.delete(request.uid);
        return {};
      },
      async getRepoReadme(request) {
        return { uid: request.uid, content: readmes.get(request.uid) ?? "" };
      },
      async updateRepoReadme(request) {
        readmes.set(request.repoReadme?.uid ?? "", request.repoReadme?.content ?? "");
        return request.repoReadme ?? {};
      },
    }),
    bindService(GroupsService, {
      createGroup: async (request) => ({
        uid: `${request.parent}|${request.group?.name}`,
        name: request.group?.name,
      }),
      listGroups: unused,
      getGroup: unused,
      updateGroup: unused,
      deleteGroup: unused,
      lookupGroup: unused,
    }),
    bindService(RoleBindingsService, {
      batchCreateRoleBindings: async (request) => ({
        roleBindings: request.requests.map((r) => ({
          uid: `${request.parent}/x`,
          identityUid: r.roleBinding?.identityUid,
          roleUid: r.roleBinding?.roleUid || request.roleUid,
        })),
      }),
      listRoleBindings: unused,
      getRoleBinding: unused,
      createRoleBinding: unused,
      updateRoleBinding: unused,
      deleteRoleBinding: unused,
    }),
  ];

  const accessFor = (principal: Principal | undefined): Access => {
    const allowed = (scope: string) => principal !== undefined && isAncestorOrSelf(OWN_ORG, scope);
    return {
      has: async (scope) => allowed(scope),
      require: async (scope) => {
        if (!allowed(scope)) throw permissionDenied(`no access to ${scope}`);
      },
      scopesWith: async () => ({ all: false, uids: principal ? [OWN_ORG] : [] }),
    };
  };

  const handler = createApiHandler({
    bindings,
    authenticator: {
      authenticate: async (token) => {
        if (token !== GOOD_TOKEN) throw unauthenticated("token is not valid");
        return { identityUid: CALLER_UID, isAdmin: false, claims: { sub: CALLER_UID } };
      },
    },
    accessFor,
    clock: { now: () => Date.now() },
    logger: (line) => logLines.push(line),
    maxBodyBytes: 64 * 1024,
    extraRoutes: [
      {
        path: "/.well-known/openid-configuration",
        handler: (_req, res) => {
          res.setHeader("content-type", "application/json");
          res.end('{"issuer":"http://example"}');
        },
      },
    ],
  });
  const server = await startApiServer({ host: "127.0.0.1", port: 0, handler });
  return {
    server,
    baseUrl: `http://127.0.0.1:${server.address.port}`,
    logLines,
    updateMasks,
    close: () => server.close({ graceMs: 500 }),
  };
}
