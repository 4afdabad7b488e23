import { create } from "@bufbuild/protobuf";
import { pageRequestOf, toTimestamp } from "../core/api-convert.js";
import type { RequestContext } from "../core/context.js";
import { invalidArgument, notFound, permissionDenied } from "../core/errors.js";
import { type ListSpec, type PageTokenCodec, paginate } from "../core/list.js";
import { pageEnvelope } from "../core/list-specs.js";
import type { ServiceHandlers } from "../core/service.js";
import { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import {
  type Artifact,
  ArtifactSchema,
  type ArtifactsService,
  type ArtifactVersion,
  ArtifactVersionSchema,
  type Ecosystem,
  EcosystemCountSchema,
} from "../gen/platform/libraries/v2/artifacts_pb.js";
import type {
  LibraryArtifactRow,
  LibraryEcosystemName,
  LibraryVersionRow,
} from "../storage/library-store.js";
import type { Store } from "../storage/store.js";
import { ecosystemEnum, ecosystemOfEnum, LIBRARY_ECOSYSTEMS } from "./ecosystems.js";
import { normalizeCudaVersion } from "./version-order.js";

/** What ArtifactsService is built from (the composition root provides it). */
export interface ArtifactsServiceDeps {
  /** The library catalogue, read only. */
  store: Pick<Store, "libraries">;
  pageTokens: PageTokenCodec;
}

const READ = [Capability.CAP_LIBRARIES_ARTIFACTS_LIST];

/** Artifacts list by name (the hosted service's default), or uid and the two times. */
const ARTIFACT_LIST: ListSpec<LibraryArtifactRow> = {
  allowedOrder: ["name", "uid", "create_time", "update_time"],
  defaultOrder: { field: "name", desc: false },
  sortValue: (row, field) =>
    field === "name"
      ? row.name
      : field === "create_time"
        ? row.createTime
        : field === "update_time"
          ? row.updateTime
          : row.uid,
  uidOf: (row) => row.uid,
};

/** Versions list newest first in the ecosystem's order (the rank), or by publish time or uid. */
const VERSION_LIST: ListSpec<LibraryVersionRow> = {
  allowedOrder: ["version", "create_time", "uid"],
  defaultOrder: { field: "version", desc: true },
  sortValue: (row, field) =>
    field === "version" ? row.rank : field === "create_time" ? row.publishTime : row.uid,
  uidOf: (row) => row.uid,
};

function artifactMessage(row: LibraryArtifactRow): Artifact {
  return create(ArtifactSchema, {
    uid: row.uid,
    name: row.name,
    description: row.description,
    ecosystem: ecosystemEnum(row.ecosystem),
    latestVersion: row.latestVersion,
    versionCount: row.versionCount,
    createTime: toTimestamp(row.createTime),
    updateTime: toTimestamp(row.updateTime),
  });
}

function versionMessage(row: LibraryVersionRow, name: string): ArtifactVersion {
  return create(ArtifactVersionSchema, {
    uid: row.uid,
    name,
    version: row.version,
    description: row.description,
    createTime: toTimestamp(row.publishTime),
    updateTime: toTimestamp(row.publishTime),
    sizeBytes: row.sizeBytes,
    remediated: row.remediated,
  });
}

/**
 * The library catalogue is the same for everyone: a caller may read all of it when it holds
 * CAP_LIBRARIES_ARTIFACTS_LIST at some group (any), else PERMISSION_DENIED.
 */
async function requireReader(ctx: RequestContext): Promise<void> {
  const scopes = await ctx.access.scopesWith(READ);
  if (!scopes.all && scopes.uids.length === 0) {
    throw permissionDenied("requires libraries.artifacts.list on some group");
  }
}

/** The ecosystems of a request, deduplicated; INVALID_ARGUMENT on `field` for UNSPECIFIED or unknown values. */
function ecosystemsOf(values: readonly Ecosystem[], field: string): LibraryEcosystemName[] {
  const names = new Set<LibraryEcosystemName>();
  for (const value of values) {
    const name = ecosystemOfEnum(value);
    if (name === undefined) {
      throw invalidArgument(
        field,
        `unknown ecosystem ${value}; use one of ${LIBRARY_ECOSYSTEMS.map((e) => `ECOSYSTEM_${e}`).join(", ")}`,
      );
    }
    names.add(name);
  }
  return [...names];
}

/**
 * ArtifactsService (read-only): the library catalogue imported by `wharf import libraries`.
 * ListArtifacts needs `ecosystems` (INVALID_ARGUMENT otherwise) and filters by a case-insensitive
 * name substring, remediated builds and a PyPI CUDA version; ListArtifactVersions lists one
 * artifact's versions (NOT_FOUND for an unknown artifact); CountArtifacts counts per ecosystem.
 */
export function createArtifactsService(deps: ArtifactsServiceDeps): ServiceHandlers<typeof ArtifactsService> {
  const { store } = deps;
  return {
    async listArtifacts(req, ctx) {
      await requireReader(ctx);
      if (req.ecosystems.length === 0) {
        throw invalidArgument(
          "ecosystems",
          "name at least one ecosystem (ECOSYSTEM_JAVA, ECOSYSTEM_PYTHON, ECOSYSTEM_JAVASCRIPT)",
        );
      }
      const ecosystems = ecosystemsOf(req.ecosystems, "ecosystems");
      let cudaVersion: string | undefined;
      if (req.cudaVersion !== "") {
        cudaVersion = normalizeCudaVersion(req.cudaVersion);
        if (cudaVersion === undefined) {
          throw invalidArgument("cuda_version", `"${req.cudaVersion}" is not a CUDA version (12.1 or cu121)`);
        }
      }
      if (req.query.length > 214) throw invalidArgument("query", "is longer than 214 characters");
      const filter = {
        ecosystems: [...ecosystems].sort(),
        query: req.query,
        remediated: req.remediated,
        ...(cudaVersion === undefined ? {} : { cudaVersion }),
      };
      const page = await paginate(pageRequestOf(req), filter, ARTIFACT_LIST, deps.pageTokens, (window) =>
        store.libraries.listArtifacts(filter, window),
      );
      return { artifacts: page.items.map(artifactMessage), ...pageEnvelope(page) };
    },

    async listArtifactVersions(req, ctx) {
      await requireReader(ctx);
      if (!/^[0-9a-f]{40}$/.test(req.artifactId)) {
        throw invalidArgument("artifact_id", "must be an artifact uid (40 lowercase hex)");
      }
      const artifact = await store.libraries.getArtifact(req.artifactId);
      if (artifact === undefined) throw notFound("artifact", req.artifactId);
      const page = await paginate(
        pageRequestOf(req),
        { artifact: artifact.uid },
        VERSION_LIST,
        deps.pageTokens,
        (window) => store.libraries.listVersions(artifact.uid, window),
      );
      return {
        artifactVersions: page.items.map((row) => versionMessage(row, artifact.name)),
        ...pageEnvelope(page),
      };
    },

    async countArtifacts(req, ctx) {
      await requireReader(ctx);
      const asked = ecosystemsOf(req.ecosystems, "ecosystems");
      const ecosystems = LIBRARY_ECOSYSTEMS.filter((e) => asked.length === 0 || asked.includes(e));
      const counts = await store.libraries.countArtifacts(ecosystems);
      return {
        counts: ecosystems.map((e) =>
          create(EcosystemCountSchema, {
            ecosystem: ecosystemEnum(e),
            totalCount: BigInt(counts.get(e) ?? 0),
          }),
        ),
      };
    },
  };
}
