import type { KeyObject } from "node:crypto";
import type { TrustedKey } from "../supply-chain.js";
import { verifiesWith } from "./key-verify.js";

/** The media type of a cosign simple-signing layer. */
export const SIMPLE_SIGNING_MEDIA_TYPE = "application/vnd.dev.cosign.simplesigning.v1+json";
/** The layer annotation holding the base64 signature over the layer's bytes. */
export const COSIGN_SIGNATURE_ANNOTATION = "dev.cosignproject.cosign/signature";

/** A trusted key with its parsed public key. */
export interface UsableKey {
  key: TrustedKey;
  publicKey: KeyObject;
}

/** The outcome of one signature check, without where it was found. */
export interface Verdict {
  verified: boolean;
  keyUid: string;
  keyName: string;
  reason: string;
}

/** A verdict that nothing verified, for `reason`. */
export function unverified(reason: string): Verdict {
  return { verified: false, keyUid: "", keyName: "", reason };
}

/** The verdict of `key` having verified a signature. */
export function verifiedBy(key: TrustedKey): Verdict {
  return {
    verified: true,
    keyUid: key.uid,
    keyName: key.name,
    reason: `verified by key ${key.name} trusted at ${key.parentPath}`,
  };
}

/** The reason given when none of `keys` verifies a well-formed signature. */
export function noKeyReason(keys: readonly UsableKey[]): string {
  return keys.length === 0
    ? "no trusted key verifies it: no signing key is registered at this repo or its folders"
    : "no trusted key verifies it";
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Checks one simple-signing layer of image `digest`: the annotation is base64, the payload is the
 * simple-signing JSON whose `critical.image.docker-manifest-digest` is `digest` (a signature
 * copied from another image names that image), and one of `keys` verifies the signature over the
 * payload's exact bytes. Never throws.
 */
export function checkSimpleSigning(
  digest: string,
  payload: Uint8Array,
  annotation: string | undefined,
  keys: readonly UsableKey[],
): Verdict {
  if (annotation === undefined || annotation === "") {
    return unverified(`malformed signature annotation: the layer has no ${COSIGN_SIGNATURE_ANNOTATION}`);
  }
  if (!BASE64.test(annotation)) return unverified("malformed signature annotation: not base64");
  const signed = signedDigest(payload);
  if (signed.error !== undefined) return unverified(`malformed payload: ${signed.error}`);
  if (signed.digest !== digest) return unverified(`payload names ${signed.digest}, not this image`);
  const signature = Buffer.from(annotation, "base64");
  for (const k of keys) {
    if (verifiesWith(k.publicKey, payload, signature)) return verifiedBy(k.key);
  }
  return unverified(noKeyReason(keys));
}

/** The digest a simple-signing payload names, or why it names none. */
function signedDigest(payload: Uint8Array): { digest: string; error?: undefined } | { error: string } {
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(payload).toString("utf8"));
  } catch {
    return { error: "not JSON" };
  }
  const critical = isObject(body) ? body.critical : undefined;
  const image = isObject(critical) ? critical.image : undefined;
  const digest = isObject(image) ? image["docker-manifest-digest"] : undefined;
  if (typeof digest !== "string" || digest === "") {
    return { error: "no critical.image.docker-manifest-digest" };
  }
  return { digest: digest.slice(0, 200) };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
