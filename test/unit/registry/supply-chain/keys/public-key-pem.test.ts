import assert from "node:assert/strict";
import { createHash, generateKeyPairSync, type KeyObject } from "node:crypto";
import { describe, it } from "node:test";
import { isDomainError } from "../../../../../src/core/errors.js";
import {
  MAX_PUBLIC_KEY_PEM_BYTES,
  validatePublicKeyPem,
} from "../../../../../src/registry/supply-chain/keys/public-key-pem.js";

const spki = (key: KeyObject) => key.export({ type: "spki", format: "pem" }).toString();

/** Asserts `text` is refused as INVALID_ARGUMENT on publicKeyPem with a message matching `pattern`. */
function refused(text: string, pattern: RegExp): void {
  assert.throws(
    () => validatePublicKeyPem(text),
    (err: unknown) => {
      assert.ok(isDomainError(err), String(err));
      assert.equal(err.code, 3);
      assert.match(err.message, /publicKeyPem/);
      assert.match(err.message, pattern);
      return true;
    },
  );
}

describe("validatePublicKeyPem", () => {
  it("accepts P-256, P-384, Ed25519 and RSA ≥ 2048, normalised, with algorithm and SPKI fingerprint", () => {
    const cases: [KeyObject, string][] = [
      [generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey, "ECDSA_P256"],
      [generateKeyPairSync("ec", { namedCurve: "P-384" }).publicKey, "ECDSA_P384"],
      [generateKeyPairSync("ed25519").publicKey, "ED25519"],
      [generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey, "RSA_2048"],
    ];
    for (const [key, algorithm] of cases) {
      const pem = spki(key);
      const der = key.export({ type: "spki", format: "der" });
      const got = validatePublicKeyPem(`\r\n${pem.replace(/\n/g, "\r\n")}\n\n`);
      assert.deepEqual(got, {
        pem,
        algorithm,
        fingerprint: createHash("sha256").update(der).digest("hex"),
      });
    }
  });

  it("refuses private keys before parsing them, certificates' labels, several blocks and oversize text", () => {
    const pair = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const pem = spki(pair.publicKey);
    refused(pair.privateKey.export({ type: "pkcs8", format: "pem" }).toString(), /private key/);
    refused(pair.privateKey.export({ type: "sec1", format: "pem" }).toString(), /private key/);
    refused(
      "-----BEGIN ENCRYPTED COSIGN PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED COSIGN PRIVATE KEY-----\n",
      /private key/,
    );
    refused("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", /certificate/);
    refused(`${pem}${pem}`, /exactly one PEM block, not 2/);
    refused(`${pem}trailing words`, /only the PEM block/);
    refused(pem + " ".repeat(MAX_PUBLIC_KEY_PEM_BYTES), /at most 16384 bytes/);
    refused("", /is required/);
    refused("MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE", /is not PEM/);
    refused("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", /does not parse/);
  });

  it("refuses weak RSA and other curves and key types", () => {
    refused(spki(generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey), /RSA key of 1024 bits/);
    refused(spki(generateKeyPairSync("ec", { namedCurve: "P-521" }).publicKey), /secp521r1/);
    refused(spki(generateKeyPairSync("ec", { namedCurve: "secp256k1" }).publicKey), /secp256k1/);
    refused(spki(generateKeyPairSync("x25519").publicKey), /x25519 key/);
    refused(spki(generateKeyPairSync("ed448").publicKey), /ed448 key/);
  });
});
