import { create } from "@bufbuild/protobuf";
import {
  type Artifact,
  ArtifactSchema,
  type ArtifactVersion,
  ArtifactVersionSchema,
  SourceType,
} from "../../gen/platform/libraries/v1/artifacts_pb.js";
import type {
  Artifact as V2Artifact,
  ArtifactVersion as V2ArtifactVersion,
} from "../../gen/platform/libraries/v2/artifacts_pb.js";

/** The v1 artifact of a v2 one: `id`, and `created_at`/`updated_at` for the v2 times. */
export function artifactV1(a: V2Artifact): Artifact {
  return create(ArtifactSchema, {
    id: a.uid,
    name: a.name,
    description: a.description,
    ecosystem: a.ecosystem,
    latestVersion: a.latestVersion,
    ...(a.createTime ? { createdAt: a.createTime } : {}),
    ...(a.updateTime ? { updatedAt: a.updateTime } : {}),
  });
}

/**
 * The v1 version of a v2 one. Every version Wharf holds was built from source (`INTERNAL`, or
 * `INTERNAL_REMEDIATED` for a remediated build); Wharf imports no malware scans or upstream dates,
 * so those fields stay empty.
 */
export function artifactVersionV1(v: V2ArtifactVersion): ArtifactVersion {
  return create(ArtifactVersionSchema, {
    id: v.uid,
    name: v.name,
    version: v.version,
    description: v.description,
    sizeBytes: v.sizeBytes,
    sourceType: v.remediated ? SourceType.INTERNAL_REMEDIATED : SourceType.INTERNAL,
    ...(v.createTime ? { createdAt: v.createTime } : {}),
    ...(v.updateTime ? { updatedAt: v.updateTime } : {}),
  });
}
