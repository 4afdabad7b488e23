import { useState } from "react";
import { Code, isWharfApiError, type WharfClient } from "wharf/sdk";
import { ApiError } from "../components/api-error";
import { EmptyState } from "../components/empty-state";
import { Loading } from "../components/loading";
import { shortDigest } from "../lib/format";
import { filterPackages } from "../lib/sbom-filter";
import { useQuery } from "../lib/use-query";
import { useClient } from "../lib/wharf-context";

/** The image's SBOM, or null when it has none (NOT_FOUND). */
async function optionalSbom(client: WharfClient, repoUid: string, digest: string) {
  try {
    return await client.registry.sbom.getSbom({ repoUid, digest });
  } catch (err) {
    if (isWharfApiError(err) && err.code === Code.NotFound) return null;
    throw err;
  }
}

/**
 * The image page's SBOM section: the packages of the image's newest SBOM with a search box that
 * filters them in the browser, or "No SBOM attached" with how to attach one.
 */
export function ImageSbom({ repoUid, digest }: { repoUid: string; digest: string }) {
  const client = useClient();
  const sbom = useQuery(() => optionalSbom(client, repoUid, digest), [client, repoUid, digest]);
  const [search, setSearch] = useState("");
  const packages = sbom.data ? filterPackages(sbom.data.packages, search) : [];
  return (
    <section aria-labelledby="sbom-heading">
      <h2 id="sbom-heading">SBOM</h2>
      <ApiError error={sbom.error} />
      {sbom.loading && sbom.data === undefined && <Loading what="Loading the SBOM" />}
      {sbom.data === null && (
        <EmptyState title="No SBOM attached">
          <p>
            Attach an SPDX 2.3 or CycloneDX 1.5/1.6 JSON SBOM to the image, e.g.{" "}
            <code>cosign attest --type spdxjson --predicate sbom.spdx.json &lt;image&gt;</code> or{" "}
            <code>oras attach --artifact-type application/spdx+json &lt;image&gt; sbom.spdx.json</code>.
          </p>
        </EmptyState>
      )}
      {sbom.data && (
        <>
          <p className="muted">
            {sbom.data.format}, {sbom.data.packages.length} packages, from referrer{" "}
            <code>{shortDigest(sbom.data.referrer)}</code>
          </p>
          <div className="toolbar">
            <div className="field">
              <label htmlFor="sbom-search">Search packages</label>
              <input
                id="sbom-search"
                type="search"
                value={search}
                onChange={(e) => setSearch(e.target.value)}
                spellCheck={false}
              />
            </div>
          </div>
          <div className="table-wrap">
            <table data-testid="sbom-packages">
              <caption className="visually-hidden">Packages of the SBOM</caption>
              <thead>
                <tr>
                  <th scope="col">Package</th>
                  <th scope="col">Version</th>
                  <th scope="col">License</th>
                  <th scope="col">Package URL</th>
                </tr>
              </thead>
              <tbody>
                {packages.map((p, i) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: an SBOM may list one package twice
                  <tr key={`${p.purl || p.name}-${i}`}>
                    <td>{p.name}</td>
                    <td>{p.version}</td>
                    <td>{p.license}</td>
                    <td className="mono">{p.purl}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {packages.length === 0 && <p className="muted">No package matches the search.</p>}
        </>
      )}
    </section>
  );
}
