import { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import { parseDigest } from "../registry/digest.js";
import { OCI_INDEX } from "../registry/manifest-parser.js";
import { authorize, type Exchange, existingRepo, type RegistryDeps, sendJson } from "./registry-request.js";

/**
 * GET `/v2/<name>/referrers/<digest>?artifactType=`: an image index of the manifests whose subject
 * is `digest` (an empty index when there are none, even for an unknown digest), filtered by
 * `artifactType` with `OCI-Filters-Applied: artifactType`.
 */
export async function listReferrers(
  deps: RegistryDeps,
  ex: Exchange,
  name: string,
  digestValue: string,
): Promise<void> {
  const digest = parseDigest(digestValue);
  const { resolved } = await authorize(deps, ex, name, "pull", {
    instead: [Capability.CAP_REPO_BLOBS_GET, Capability.CAP_REFERRERS_LIST],
  });
  const repo = existingRepo(resolved);
  const artifactType = ex.url.searchParams.get("artifactType") ?? undefined;
  const rows = await deps.content.referrers(repo.uid, digest.value, artifactType);
  const index = {
    schemaVersion: 2,
    mediaType: OCI_INDEX,
    manifests: rows.map((r) => ({
      mediaType: r.mediaType,
      digest: r.digest,
      size: r.size,
      ...(r.artifactType ? { artifactType: r.artifactType } : {}),
      ...(r.annotations ? { annotations: r.annotations } : {}),
    })),
  };
  const filtered: Record<string, string> =
    artifactType !== undefined ? { "oci-filters-applied": "artifactType" } : {};
  sendJson(ex, index, filtered, OCI_INDEX);
}
