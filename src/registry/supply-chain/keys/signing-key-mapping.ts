import { toTimestamp } from "../../../core/api-convert.js";
import type { SigningKey } from "../../../gen/platform/registry/v2/signing_keys_pb.js";
import type { TrustedKeyRow } from "../../../storage/trusted-key-store.js";

/** The API message of a stored key. */
export function signingKeyMessage(row: TrustedKeyRow): SigningKey {
  return {
    $typeName: "platform.registry.v2.SigningKey",
    uid: row.uid,
    name: row.name,
    publicKeyPem: row.publicKeyPem,
    createTime: toTimestamp(row.createTime),
    algorithm: row.algorithm,
    fingerprint: row.fingerprint,
  };
}
