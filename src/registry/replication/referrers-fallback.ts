import { parseDigest } from "../digest.js";
import { OCI_INDEX, parseManifest } from "../manifest-parser.js";
import { RemoteError, type RemoteRegistry } from "../remote/remote-registry.js";
import type { EndpointManifest } from "./replication-endpoint.js";

/** The OCI 1.1 referrers tag schema's tag of `subject`: `<algorithm>-<hex>`. */
export function referrersTag(subject: string): string {
  const digest = parseDigest(subject);
  return `${digest.algorithm}-${digest.hex}`;
}

/**
 * Keeps a remote's referrers discoverable after `referrer` of `subject` was pushed into `repo`
 * (OCI distribution 1.1, "pushing manifests with subject"): when the remote's referrers answer
 * already lists it (the remote offers the referrers API, or the fallback tag holds it), nothing;
 * otherwise the fallback tag's index (`sha256-<hex>`) is read, the referrer's descriptor added,
 * and the index put back. Registries without the API (CNCF distribution 2.8) then show the
 * referrer to clients that follow the spec (cosign, oras, Wharf's own PULL).
 */
export async function keepReferrersTag(
  remote: RemoteRegistry,
  repo: string,
  subject: string,
  referrer: EndpointManifest,
  signal: AbortSignal,
): Promise<void> {
  const listed = await remote.referrers(repo, subject, signal);
  if (listed.some((d) => d.digest === referrer.digest)) return;
  const tag = referrersTag(subject);
  let manifests: unknown[] = [];
  try {
    const current = await remote.getManifest(repo, tag, signal);
    const doc = JSON.parse(Buffer.from(current.content).toString("utf8")) as { manifests?: unknown };
    if (Array.isArray(doc.manifests)) manifests = doc.manifests;
  } catch (err) {
    if (!(err instanceof RemoteError && err.kind === "not-found")) throw err;
  }
  const parsed = parseManifest(referrer.content, referrer.mediaType);
  const index = {
    schemaVersion: 2,
    mediaType: OCI_INDEX,
    manifests: [
      ...manifests,
      {
        mediaType: referrer.mediaType,
        digest: referrer.digest,
        size: referrer.content.byteLength,
        ...(parsed.artifactType ? { artifactType: parsed.artifactType } : {}),
        ...(parsed.annotations ? { annotations: parsed.annotations } : {}),
      },
    ],
  };
  await remote.putManifest(repo, tag, OCI_INDEX, Buffer.from(JSON.stringify(index)), signal);
}
