import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * Secrets Wharf must use later (upstream and replication remote passwords) are stored sealed:
 * AES-256-GCM under a key kept in the store's settings, created once on first use and shared by
 * every replica. Implemented by `secretBoxOf` (issue 36, ADR 0051). A sealed value is a string
 * safe for a text column; it says which key version sealed it.
 */
export interface SecretBox {
  /** Seals `plain`; "" stays "" (no secret). */
  seal(plain: string): Promise<string>;
  /** Opens a value `seal` made; "" stays "". A value that was tampered with, or sealed under another key, throws. */
  open(sealed: string): Promise<string>;
}

/** The settings key holding the sealing key (32 random bytes, base64url). */
export const SECRET_BOX_KEY_SETTING = "secret_box_key_v1";

/** The version prefix of values sealed under SECRET_BOX_KEY_SETTING. */
const VERSION = "v1";
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

/**
 * Where the key lives: the store's settings (SettingsStore satisfies this). Declared here, not
 * imported, because core/ imports nothing of storage/.
 */
export interface SecretKeySettings {
  /** Sets `key` to `value` unless it already has a value; returns the value now stored. */
  putIfAbsent(key: string, value: string): Promise<string>;
}

/**
 * The SecretBox of a deployment: the key is read (or created, by the first process to need it:
 * `putIfAbsent` makes every replica agree on one) on first use and kept in memory. Sealed form:
 * `v1:<base64url iv>:<base64url ciphertext + GCM tag>`, a fresh 12-byte IV each time.
 */
export function secretBoxOf(settings: SecretKeySettings): SecretBox {
  let key: Promise<Buffer> | undefined;
  const keyOf = (): Promise<Buffer> => {
    key ??= settings
      .putIfAbsent(SECRET_BOX_KEY_SETTING, randomBytes(KEY_BYTES).toString("base64url"))
      .then((text) => {
        const bytes = Buffer.from(text, "base64url");
        if (bytes.length !== KEY_BYTES)
          throw new Error(`setting ${SECRET_BOX_KEY_SETTING} is not a 32-byte key`);
        return bytes;
      });
    // A failed read is not kept: the next use tries again.
    key.catch(() => {
      key = undefined;
    });
    return key;
  };
  return {
    async seal(plain) {
      if (plain === "") return "";
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", await keyOf(), iv);
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final(), cipher.getAuthTag()]);
      return `${VERSION}:${iv.toString("base64url")}:${body.toString("base64url")}`;
    },
    async open(sealed) {
      if (sealed === "") return "";
      const [version, ivText, bodyText, extra] = sealed.split(":");
      if (version !== VERSION || ivText === undefined || bodyText === undefined || extra !== undefined) {
        throw new Error("sealed secret: not a v1 sealed value");
      }
      const iv = Buffer.from(ivText, "base64url");
      const body = Buffer.from(bodyText, "base64url");
      if (iv.length !== IV_BYTES || body.length < TAG_BYTES) throw new Error("sealed secret: malformed");
      const decipher = createDecipheriv("aes-256-gcm", await keyOf(), iv);
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      try {
        return Buffer.concat([
          decipher.update(body.subarray(0, body.length - TAG_BYTES)),
          decipher.final(),
        ]).toString("utf8");
      } catch {
        throw new Error(
          "sealed secret: does not open under this deployment's key (tampered, or sealed elsewhere)",
        );
      }
    },
  };
}
