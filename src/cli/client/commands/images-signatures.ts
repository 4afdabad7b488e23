import type { Command } from "commander";
import { type Signature, SignatureSchema } from "../../../gen/platform/registry/v2/signatures_pb.js";
import type { CommandContext } from "../context.js";
import { type Bind, print } from "../program.js";
import { parseImage, resolveRepo } from "../resolve.js";
import { protoView } from "../views.js";

const signatureView = protoView(
  SignatureSchema,
  [
    { header: "VERIFIED", cell: (s: Signature) => (s.verified ? "yes" : "no") },
    { header: "KEY", cell: (s: Signature) => s.keyName },
    { header: "LAYOUT", cell: (s: Signature) => s.layout },
    { header: "REFERRER", cell: (s: Signature) => s.referrer },
    { header: "REASON", cell: (s: Signature) => s.reason },
  ],
  (s: Signature) => s.referrer,
);

/** A trusted key that signed an image, as `images describe` shows it. */
export interface Signer {
  keyUid: string;
  keyName: string;
}

/** The signatures of image `ref` (ORG/REPO[:TAG|@DIGEST]; a tag resolves to its digest). */
export async function signaturesOf(ctx: CommandContext, ref: string, digest?: string): Promise<Signature[]> {
  const image = parseImage(ref);
  const repo = await resolveRepo(ctx.client, image.repository);
  const resolved =
    digest ?? image.digest ?? (await ctx.client.resolve(`${image.repository}:${image.tag ?? "latest"}`));
  return (await ctx.client.registry.signatures.listSignatures({ repoUid: repo.uid, digest: resolved }))
    .signatures;
}

/** The distinct keys among `signatures` that verified. */
export function verifiedSigners(signatures: readonly Signature[]): Signer[] {
  const seen = new Map<string, string>();
  for (const s of signatures) if (s.verified && !seen.has(s.keyUid)) seen.set(s.keyUid, s.keyName);
  return [...seen].map(([keyUid, keyName]) => ({ keyUid, keyName }));
}

/** `release (verified)` per signer, or `not signed by a trusted key`. */
export function signedByCell(signers: readonly Signer[]): string {
  return signers.length === 0
    ? "not signed by a trusted key"
    : signers.map((s) => `${s.keyName || s.keyUid} (verified)`).join("\n");
}

/** `wharf images signatures <image>`: every signature of an image and whether a trusted key verifies it. */
export function registerSignatures(images: Command, bind: Bind): void {
  images
    .command("signatures <image>")
    .description(
      "the signatures of an image (ORG/REPO[:TAG|@DIGEST]): cosign .sig tag, OCI 1.1 referrers, Sigstore bundles; whether a key trusted at the repo or its folders verifies each, and why",
    )
    .action(bind(async (ctx, [ref]: [string]) => print(ctx, await signaturesOf(ctx, ref), signatureView)));
}
