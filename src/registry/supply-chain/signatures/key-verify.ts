import { constants, createPublicKey, type KeyObject, verify } from "node:crypto";

/**
 * The public key of a trusted key's SPKI PEM, or undefined when it does not parse (a key the keyring
 * validated always does; a failure only means that key verifies nothing).
 */
export function publicKeyOf(pem: string): KeyObject | undefined {
  try {
    return createPublicKey({ key: pem, format: "pem" });
  } catch {
    return undefined;
  }
}

/**
 * Whether `signature` over `payload` verifies with `key` as cosign signs: ECDSA (any curve) over
 * the SHA-256 of the payload with an ASN.1 DER signature, Ed25519 over the payload itself, RSA
 * PKCS#1 v1.5 with SHA-256. Any other key type, or a signature that does not parse, is false.
 */
export function verifiesWith(key: KeyObject, payload: Uint8Array, signature: Uint8Array): boolean {
  try {
    switch (key.asymmetricKeyType) {
      case "ec":
        return verify("sha256", payload, { key, dsaEncoding: "der" }, signature);
      case "ed25519":
        return verify(null, payload, key, signature);
      case "rsa":
        return verify("sha256", payload, { key, padding: constants.RSA_PKCS1_PADDING }, signature);
      default:
        return false;
    }
  } catch {
    return false;
  }
}
