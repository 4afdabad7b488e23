import { createHash, type Hash } from "node:crypto";
import { InvalidDigestError } from "./content-errors.js";

/** Digest algorithms the registry verifies content against, with their hex lengths. */
const ALGORITHMS = { sha256: 64, sha512: 128 } as const;

export type DigestAlgorithm = keyof typeof ALGORITHMS;

/** A parsed `<algorithm>:<hex>` digest. */
export interface Digest {
  algorithm: DigestAlgorithm;
  hex: string;
  /** The canonical string form. */
  value: string;
}

const DIGEST_SYNTAX = /^([a-z0-9]+(?:[+._-][a-z0-9]+)*):([a-zA-Z0-9=_-]+)$/;

/**
 * Parses a digest: sha256 (64 lowercase hex) or sha512 (128). Throws InvalidDigestError for
 * anything else, UNSUPPORTED-algorithm digests included (named in the message).
 */
export function parseDigest(value: string): Digest {
  const match = DIGEST_SYNTAX.exec(value);
  if (!match) throw new InvalidDigestError(`"${truncate(value)}" is not a digest`);
  const algorithm = match[1] as string;
  const hex = match[2] as string;
  if (!(algorithm in ALGORITHMS)) {
    throw new InvalidDigestError(`digest algorithm "${algorithm}" is not supported (sha256, sha512)`);
  }
  const length = ALGORITHMS[algorithm as DigestAlgorithm];
  if (hex.length !== length || !/^[a-f0-9]+$/.test(hex)) {
    throw new InvalidDigestError(`${algorithm} digests are ${length} lowercase hex characters`);
  }
  return { algorithm: algorithm as DigestAlgorithm, hex, value };
}

/** True when `value` parses as a digest (a manifest reference is a digest or a tag). */
export function isDigest(value: string): boolean {
  return DIGEST_SYNTAX.test(value) && value.includes(":");
}

/** A running hash of `algorithm`. */
export function createDigester(algorithm: DigestAlgorithm): Hash {
  return createHash(algorithm);
}

/** The sha256 digest string of `bytes`. */
export function sha256Digest(bytes: Uint8Array): string {
  return digestOf(bytes, "sha256");
}

/** The digest string of `bytes` with `algorithm`. */
export function digestOf(bytes: Uint8Array, algorithm: DigestAlgorithm): string {
  return `${algorithm}:${createHash(algorithm).update(bytes).digest("hex")}`;
}

function truncate(value: string): string {
  return value.length > 80 ? `${value.slice(0, 80)}…` : value;
}
