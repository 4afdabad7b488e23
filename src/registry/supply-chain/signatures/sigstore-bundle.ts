import { type Bundle, bundleFromJSON } from "@sigstore/bundle";
import { TrustedRoot } from "@sigstore/protobuf-specs";
import {
  type SignedEntity,
  type TrustMaterial,
  toSignedEntity,
  toTrustMaterial,
  Verifier,
} from "@sigstore/verify";
import { noKeyReason, type UsableKey, unverified, type Verdict, verifiedBy } from "./simple-signing.js";

/**
 * Whether `type` (a referrer's artifact type or a layer's media type) is a Sigstore bundle: the
 * v0.3 form cosign writes (`application/vnd.dev.sigstore.bundle.v0.3+json`) and the older
 * `application/vnd.dev.sigstore.bundle+json;version=0.x` forms.
 */
export function isSigstoreBundleType(type: string | undefined): boolean {
  return (
    type !== undefined &&
    /^application\/vnd\.dev\.sigstore\.bundle(?:\.v0\.[1-3])?\+json(?:;\s*version=0\.[1-3])?$/.test(type)
  );
}

/** A parsed Sigstore trusted root (Fulcio CAs, Rekor and CT logs, timestamp authorities). */
export type SigstoreTrustedRoot = TrustedRoot;

/**
 * Parses a trusted-root JSON document (`trusted_root.json`, the Sigstore TUF repository's target or
 * one an operator builds for a private Sigstore); throws an Error naming what is wrong.
 */
export function parseTrustedRoot(json: string): SigstoreTrustedRoot {
  let body: unknown;
  try {
    body = JSON.parse(json);
  } catch {
    throw new Error("the Sigstore trusted root is not JSON");
  }
  const root = TrustedRoot.fromJSON(body);
  if (root.certificateAuthorities.length === 0 && root.tlogs.length === 0) {
    throw new Error("the Sigstore trusted root names no certificate authority and no transparency log");
  }
  return root;
}

const IN_TOTO = "application/vnd.in-toto+json";

/**
 * Checks a Sigstore bundle `bytes` found as a referrer of image `digest` (whose manifest bytes are
 * `image`, the artifact a message signature signs). The bundle's subject must be the image (the
 * in-toto statement's subject digest, or the message digest). A public-key bundle is verified with
 * each trusted key in turn (the hint is only a hint); its transparency-log entries are checked only
 * when a trusted root is configured (trust rests on the key, Rekor is not asked online). A
 * certificate (keyless) bundle needs `trustedRoot`: its chain, SCT and log entry are verified
 * against it. Never throws.
 */
export function checkBundle(
  digest: string,
  bytes: Uint8Array,
  image: Uint8Array | undefined,
  keys: readonly UsableKey[],
  trustedRoot: SigstoreTrustedRoot | undefined,
): Verdict {
  let bundle: Bundle;
  try {
    bundle = bundleFromJSON(JSON.parse(Buffer.from(bytes).toString("utf8")));
  } catch (err) {
    return unverified(`malformed Sigstore bundle: ${messageOf(err)}`);
  }
  const subject = subjectOf(bundle, digest);
  if (subject !== undefined) return unverified(subject);
  let entity: SignedEntity;
  try {
    entity = toSignedEntity(bundle, image === undefined ? undefined : Buffer.from(image));
  } catch (err) {
    return unverified(`malformed Sigstore bundle: ${messageOf(err)}`);
  }
  if (entity.key.$case === "certificate") return keyless(entity, trustedRoot);
  const checked: SignedEntity = trustedRoot ? entity : { ...entity, tlogEntries: [], timestamps: [] };
  for (const k of keys) {
    const finder = () => ({ publicKey: k.publicKey, validFor: () => true });
    const material: TrustMaterial = trustedRoot
      ? toTrustMaterial(trustedRoot, finder)
      : { certificateAuthorities: [], timestampAuthorities: [], tlogs: [], ctlogs: [], publicKey: finder };
    try {
      new Verifier(material, { tlogThreshold: 0, ctlogThreshold: 0, timestampThreshold: 0 }).verify(checked);
      return verifiedBy(k.key);
    } catch {
      // Not this key: try the next.
    }
  }
  return unverified(noKeyReason(keys));
}

/** Why the bundle's subject is not image `digest`, or undefined when it is. */
function subjectOf(bundle: Bundle, digest: string): string | undefined {
  const hex = digest.startsWith("sha256:") ? digest.slice("sha256:".length) : "";
  if (bundle.content.$case === "messageSignature") {
    const named = Buffer.from(bundle.content.messageSignature.messageDigest.digest).toString("hex");
    return named === hex ? undefined : `bundle signs sha256:${named}, not this image`;
  }
  const envelope = bundle.content.dsseEnvelope;
  if (envelope.payloadType !== IN_TOTO)
    return `bundle's envelope carries ${envelope.payloadType}, not an in-toto statement`;
  let statement: unknown;
  try {
    statement = JSON.parse(Buffer.from(envelope.payload).toString("utf8"));
  } catch {
    return "malformed Sigstore bundle: the in-toto statement is not JSON";
  }
  const subjects = (statement as { subject?: unknown }).subject;
  if (!Array.isArray(subjects) || subjects.length === 0) return "bundle's statement names no subject";
  const named = subjects.map((s) => (s as { digest?: { sha256?: unknown } })?.digest?.sha256);
  if (named.includes(hex)) return undefined;
  const first = named.find((n) => typeof n === "string");
  return `bundle's statement names ${first === undefined ? "no sha256 subject" : `sha256:${String(first).slice(0, 64)}`}, not this image`;
}

/** The verdict on a keyless (certificate) bundle. */
function keyless(entity: SignedEntity, trustedRoot: SigstoreTrustedRoot | undefined): Verdict {
  if (!trustedRoot) {
    return unverified(
      "keyless (certificate) bundle: no Sigstore trusted root is configured (--sigstore-trusted-root)",
    );
  }
  try {
    const material = toTrustMaterial(trustedRoot);
    const signer = new Verifier(material, {
      tlogThreshold: 1,
      ctlogThreshold: 1,
      timestampThreshold: 1,
    }).verify(entity);
    const identity = signer.identity?.subjectAlternativeName ?? "";
    const issuer = signer.identity?.extensions?.issuer ?? "";
    return {
      verified: true,
      keyUid: "",
      keyName: identity,
      reason: `verified keyless: certificate for ${identity}${issuer ? ` (issuer ${issuer})` : ""} under the configured Sigstore trusted root`,
    };
  } catch (err) {
    return unverified(`keyless bundle does not verify against the trusted root: ${messageOf(err)}`);
  }
}

function messageOf(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).slice(0, 200);
}
