import { Code, countBySeverity, isWharfApiError, type SeverityName, type WharfClient } from "wharf/sdk";

/** A vulnerability report as GetVulnReport answers it (the tenant view). */
export type VulnReport = Awaited<ReturnType<WharfClient["registryV1"]["registry"]["getVulnReport"]>>;

/** What the console shows about one image digest of a repository. */
export interface DigestDetails {
  architectures: string[];
  /** Size (config + layers) per architecture. */
  sizes: { architecture: string; size: bigint }[];
  /** The current report, when the image has one the caller may read. */
  report: VulnReport | undefined;
  /** Distinct vulnerability ids per severity (VEX-suppressed ones left out), when there is a report. */
  counts: Partial<Record<SeverityName, number>> | undefined;
}

const cache = new WeakMap<WharfClient, Map<string, Promise<DigestDetails>>>();

/**
 * The details of `digest` in `repoUid`: architectures, size of each, and the vulnerability report
 * (none when NOT_FOUND or not readable). Asked once per client, repo and digest (a timeline
 * shows the same digest many times); a failed look-up is asked again next time.
 */
export function digestDetails(client: WharfClient, repoUid: string, digest: string): Promise<DigestDetails> {
  let byKey = cache.get(client);
  if (!byKey) {
    byKey = new Map();
    cache.set(client, byKey);
  }
  const key = `${repoUid}@${digest}`;
  let details = byKey.get(key);
  if (!details) {
    details = load(client, repoUid, digest);
    details.catch(() => byKey.delete(key));
    byKey.set(key, details);
  }
  return details;
}

async function load(client: WharfClient, repoUid: string, digest: string): Promise<DigestDetails> {
  const [{ architectures }, report] = await Promise.all([
    client.registry.images.getArchitectures({ repoUid, digest }),
    optionalReport(client, repoUid, digest),
  ]);
  const sizes = await Promise.all(
    architectures.map(async (architecture) => {
      const { size } = await client.registry.images.getSize({ repoUid, digest, architecture });
      return { architecture, size };
    }),
  );
  return {
    architectures,
    sizes,
    report,
    // VEX-suppressed matches do not count (extensions.md "VEX and SBOMs").
    counts: report ? countBySeverity(report.vulnerabilityMatches.filter((m) => !m.suppressed)) : undefined,
  };
}

async function optionalReport(
  client: WharfClient,
  repoUid: string,
  digest: string,
): Promise<VulnReport | undefined> {
  try {
    return await client.registryV1.registry.getVulnReport({ repoUid, digest });
  } catch (err) {
    if (isWharfApiError(err) && (err.code === Code.NotFound || err.code === Code.PermissionDenied))
      return undefined;
    throw err;
  }
}
