import { shortDigest } from "../lib/format";
import { useQuery } from "../lib/use-query";
import { useClient } from "../lib/wharf-context";
import { ApiError } from "./api-error";
import { SignatureBadge, type SignerLike } from "./signature-badge";

/**
 * The signatures of an image: a badge naming the trusted keys that verified it, and each
 * signature with whether it verifies and why.
 */
export function SignaturesPanel({ repoUid, digest }: { repoUid: string; digest: string }) {
  const client = useClient();
  const signatures = useQuery(
    async () => (await client.registry.signatures.listSignatures({ repoUid, digest })).signatures,
    [client, repoUid, digest],
  );
  const signers: SignerLike[] = [];
  for (const s of signatures.data ?? []) {
    if (s.verified && !signers.some((k) => k.keyUid === s.keyUid)) signers.push(s);
  }
  return (
    <section aria-labelledby="signatures-heading">
      <h2 id="signatures-heading">Signatures</h2>
      <ApiError error={signatures.error} />
      {signatures.data && (
        <p>
          <SignatureBadge signers={signers} />
        </p>
      )}
      {signatures.data?.length === 0 && (
        <p className="muted">
          No signatures. Sign with{" "}
          <code>cosign sign --key cosign.key &lt;image&gt;@{shortDigest(digest)}</code>.
        </p>
      )}
      {signatures.data && signatures.data.length > 0 && (
        <ul data-testid="signatures">
          {signatures.data.map((s, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a .sig tag carries several signatures under one referrer
            <li key={`${s.referrer}-${i}`}>
              <span className={s.verified ? "badge ok" : "badge warn"}>
                {s.verified ? "verified" : "not verified"}
              </span>{" "}
              {s.reason} <code>{shortDigest(s.referrer)}</code> ({s.layout})
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
