import { errorOfResponse } from "../../sdk/errors.js";
import { MANIFEST_ACCEPT } from "../../sdk/registry.js";
import type { CommandContext } from "./context.js";

/** A manifest as the registry stores it: an image manifest or an index. */
export interface Manifest {
  mediaType?: string;
  artifactType?: string;
  config?: { digest: string; size: number };
  layers?: { digest: string; size: number; mediaType: string }[];
  manifests?: {
    digest: string;
    size: number;
    mediaType: string;
    artifactType?: string;
    platform?: { os: string; architecture: string; variant?: string };
  }[];
}

async function registryGet(
  ctx: CommandContext,
  repository: string,
  path: string,
  accept: string,
): Promise<Response> {
  const token = await ctx.client.registryToken(`repository:${repository}:pull`);
  const url = new URL(`/v2/${repository}/${path}`, await ctx.client.registryUrl());
  const response = await ctx.fetch(url, { headers: { accept, authorization: `Bearer ${token}` } });
  if (!response.ok) throw await errorOfResponse(response);
  return response;
}

/** The manifest `reference` (tag or digest) of `repository`, from the registry. */
export async function fetchManifest(
  ctx: CommandContext,
  repository: string,
  reference: string,
): Promise<Manifest> {
  return (await (
    await registryGet(ctx, repository, `manifests/${reference}`, MANIFEST_ACCEPT)
  ).json()) as Manifest;
}

/** The manifests whose subject is `digest` (the OCI referrers API): signatures, SBOMs, attestations. */
export async function fetchReferrers(
  ctx: CommandContext,
  repository: string,
  digest: string,
): Promise<NonNullable<Manifest["manifests"]>> {
  const index = (await (
    await registryGet(ctx, repository, `referrers/${digest}`, "application/vnd.oci.image.index.v1+json")
  ).json()) as Manifest;
  return index.manifests ?? [];
}
