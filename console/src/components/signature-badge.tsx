/** A signer as the API gives it (a v2 Tag's `verifiedSigners`). */
export interface SignerLike {
  keyUid: string;
  keyName: string;
}

/**
 * "signed · <key>[, <key>…]" when trusted keys verified the image's signatures, else "unsigned"
 * (no signature, or none a trusted key verifies).
 */
export function SignatureBadge({ signers }: { signers: readonly SignerLike[] }) {
  if (signers.length === 0) {
    return (
      <span className="badge" data-testid="signature-badge" title="not signed by a trusted key">
        unsigned
      </span>
    );
  }
  const names = signers.map((s) => s.keyName || s.keyUid).join(", ");
  return (
    <span className="badge ok" data-testid="signature-badge" title={`verified signatures by ${names}`}>
      signed · {names}
    </span>
  );
}
