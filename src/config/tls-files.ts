import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { createSecureContext } from "node:tls";
import type { TlsPair } from "../transport/tls-terminator.js";
import { TLS_MIN_VERSION } from "../transport/tls-terminator.js";

/** Where a listener's certificate and key are (PEM files), and the flags that named them. */
export interface TlsFiles {
  certFile: string;
  keyFile: string;
  /** `--tls-cert` or `--registry-tls-cert`: named in every problem with the file. */
  certFlag: string;
  keyFlag: string;
}

/**
 * Reads and checks a listener's PEM pair: the certificate file must hold a PEM certificate (a
 * chain: the leaf first), the key file a PEM private key (unencrypted), and the key must be the
 * certificate's. Throws an Error whose one-line message names the flag and file at fault; the
 * contents of the key file never appear in it.
 */
export function readTlsPair(files: TlsFiles): TlsPair & { certificate: X509Certificate } {
  const cert = readPem(files.certFile, files.certFlag);
  const key = readPem(files.keyFile, files.keyFlag);
  let certificate: X509Certificate;
  try {
    if (!/-----BEGIN CERTIFICATE-----/.test(cert.toString("latin1"))) throw new Error("no PEM block");
    certificate = new X509Certificate(cert);
  } catch {
    throw new Error(`${files.certFlag} ${files.certFile} holds no PEM certificate`);
  }
  let privateKey: KeyObject;
  try {
    if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(key.toString("latin1"))) throw new Error("no PEM block");
    privateKey = createPrivateKey(key);
  } catch {
    throw new Error(`${files.keyFlag} ${files.keyFile} holds no unencrypted PEM private key`);
  }
  if (!certificate.checkPrivateKey(privateKey))
    throw new Error(
      `${files.keyFlag} ${files.keyFile} is not the key of ${files.certFlag} ${files.certFile}`,
    );
  try {
    createSecureContext({ cert, key, minVersion: TLS_MIN_VERSION });
  } catch (err) {
    throw new Error(`${files.certFlag} ${files.certFile}: not usable for TLS (${(err as Error).message})`);
  }
  return { cert, key, certificate };
}

function readPem(file: string, flag: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : code;
    throw new Error(`${flag} ${file} cannot be read (${why ?? "unknown error"})`);
  }
}
