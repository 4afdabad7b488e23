import { createHash, createPublicKey, type KeyObject } from "node:crypto";
import { invalidArgument } from "../../../core/errors.js";

/** Largest accepted PEM text, in bytes (an RSA 16384 SPKI is about 2.8 KiB). */
export const MAX_PUBLIC_KEY_PEM_BYTES = 16 * 1024;
/** Smallest accepted RSA modulus, in bits. */
export const MIN_RSA_BITS = 2048;

/** The field a refused key is reported on (extensions.md: INVALID_ARGUMENT on `publicKeyPem`). */
export const PUBLIC_KEY_FIELD = "publicKeyPem";

/** A public key as it is stored: normalised PEM and what it is. */
export interface ValidatedPublicKey {
  /** The key re-encoded as one SPKI `PUBLIC KEY` block, with a trailing newline. */
  pem: string;
  /** `ECDSA_P256`, `ECDSA_P384`, `ED25519` or `RSA_<modulus bits>`. */
  algorithm: string;
  /** Lower-case hex SHA-256 of the SPKI DER. */
  fingerprint: string;
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;
const ECDSA_CURVES: Record<string, string> = {
  prime256v1: "ECDSA_P256",
  "P-256": "ECDSA_P256",
  secp384r1: "ECDSA_P384",
  "P-384": "ECDSA_P384",
};

function refuse(problem: string): never {
  throw invalidArgument(PUBLIC_KEY_FIELD, problem);
}

/**
 * Checks `text` is exactly one PEM `PUBLIC KEY` block (SubjectPublicKeyInfo) of an ECDSA P-256 or
 * P-384, Ed25519, or RSA (modulus ≥ MIN_RSA_BITS) key, at most MAX_PUBLIC_KEY_PEM_BYTES, and
 * answers it normalised with its algorithm and fingerprint. Anything else is INVALID_ARGUMENT on
 * `publicKeyPem`: empty, no PEM, several blocks, a private key of any kind (it is never parsed, so
 * never derived from, stored or echoed), a certificate, another curve (P-521, secp256k1) or key type
 * (DSA, X25519, …), a weak RSA key, or bytes that do not parse. The problem text never quotes the input.
 */
export function validatePublicKeyPem(text: string): ValidatedPublicKey {
  if (text.trim() === "") refuse("is required: a PEM public key (-----BEGIN PUBLIC KEY-----)");
  if (Buffer.byteLength(text, "utf8") > MAX_PUBLIC_KEY_PEM_BYTES) {
    refuse(`must be at most ${MAX_PUBLIC_KEY_PEM_BYTES} bytes`);
  }
  if (/PRIVATE KEY/.test(text)) {
    refuse(
      "is a private key: register the public key only (e.g. cosign.pub, or `cosign public-key --key cosign.key`)",
    );
  }
  const blocks = [...text.matchAll(PEM_BLOCK)];
  if (blocks.length === 0) refuse("is not PEM: expected one -----BEGIN PUBLIC KEY----- block");
  if (blocks.length > 1) refuse(`must hold exactly one PEM block, not ${blocks.length}`);
  const [block] = blocks as [RegExpMatchArray];
  const label = block[1];
  if (label === "CERTIFICATE") {
    refuse("is a certificate: register its public key (e.g. `openssl x509 -pubkey -noout -in cert.pem`)");
  }
  if (label !== "PUBLIC KEY") refuse(`must be a PEM PUBLIC KEY block, not ${label}`);
  const outside = text.replace(block[0], "");
  if (outside.trim() !== "") refuse("must hold only the PEM block (no text around it)");
  const body = (block[2] ?? "").replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body)) refuse("is not valid PEM: the block is not base64");

  let key: KeyObject;
  try {
    key = createPublicKey({ key: Buffer.from(body, "base64"), format: "der", type: "spki" });
  } catch {
    refuse("does not parse as a SubjectPublicKeyInfo public key");
  }
  const algorithm = algorithmOf(key);
  const der = key.export({ type: "spki", format: "der" });
  return {
    pem: key.export({ type: "spki", format: "pem" }).toString(),
    algorithm,
    fingerprint: createHash("sha256").update(der).digest("hex"),
  };
}

/** The algorithm name of an accepted key; INVALID_ARGUMENT for the others. */
function algorithmOf(key: KeyObject): string {
  const type = key.asymmetricKeyType;
  const details = key.asymmetricKeyDetails ?? {};
  if (type === "ed25519") return "ED25519";
  if (type === "ec") {
    const curve = details.namedCurve ?? "";
    const name = ECDSA_CURVES[curve];
    if (name === undefined)
      refuse(`uses curve ${curve || "(unnamed)"}: only ECDSA P-256 and P-384 are accepted`);
    return name;
  }
  if (type === "rsa") {
    const bits = details.modulusLength ?? 0;
    if (bits < MIN_RSA_BITS) refuse(`is an RSA key of ${bits} bits: at least ${MIN_RSA_BITS} are required`);
    return `RSA_${bits}`;
  }
  return refuse(
    `is a ${type ?? "unknown"} key: only ECDSA P-256/P-384, Ed25519 and RSA (≥ ${MIN_RSA_BITS} bits) are accepted`,
  );
}
