import type { X509Certificate } from "node:crypto";
import type { WharfConfig } from "../config/config.js";
import { readTlsPair, type TlsFiles } from "../config/tls-files.js";
import { createTlsTerminator, type TlsPair, type TlsTerminator } from "../transport/tls-terminator.js";

/** The TLS of both listeners: their terminators, and the reload of their certificates. */
export interface ServedTls {
  /** The API listener's; undefined = it serves cleartext. */
  api: TlsTerminator | undefined;
  /** The registry listener's; undefined = it serves cleartext. */
  registry: TlsTerminator | undefined;
  /**
   * Reads every listener's PEM files again and, when all of them are good, serves them to the
   * connections accepted from now on (open connections keep theirs); logs one `info` line naming
   * the certificates. When any is not good, nothing changes and one `error` line says why.
   * Returns whether it reloaded.
   */
  reload(): boolean;
}

/** Terminators for the listeners `config.tls` gives a pair (both share one when the files are the same). */
export function buildTls(config: Pick<WharfConfig, "tls">, logger: (line: object) => void): ServedTls {
  const listeners = (["api", "registry"] as const).flatMap((name) => {
    const files = config.tls[name];
    return files ? [{ name, files }] : [];
  });
  const terminators = new Map<string, TlsTerminator>();
  for (const { files } of listeners) {
    const key = keyOf(files);
    if (!terminators.has(key)) terminators.set(key, createTlsTerminator(readTlsPair(files)));
  }
  const terminatorOf = (files: TlsFiles | undefined) => (files ? terminators.get(keyOf(files)) : undefined);
  return {
    api: terminatorOf(config.tls.api),
    registry: terminatorOf(config.tls.registry),
    reload() {
      const time = () => new Date().toISOString();
      const read = new Map<string, TlsPair & { certificate: X509Certificate }>();
      try {
        for (const { files } of listeners) {
          const key = keyOf(files);
          if (!read.has(key)) read.set(key, readTlsPair(files));
        }
        for (const [key, pair] of read) terminators.get(key)?.reload(pair);
      } catch (err) {
        logger({
          time: time(),
          level: "error",
          msg: "tls reload failed; the current certificates stay",
          error: (err as Error).message,
        });
        return false;
      }
      logger({
        time: time(),
        level: "info",
        msg: "tls certificates reloaded",
        certificates: listeners.map(({ name, files }) => {
          const certificate = read.get(keyOf(files))?.certificate;
          return {
            listener: name,
            file: files.certFile,
            serialNumber: certificate?.serialNumber,
            fingerprint256: certificate?.fingerprint256,
            validTo: certificate?.validTo,
          };
        }),
      });
      return true;
    },
  };
}

function keyOf(files: TlsFiles): string {
  return `${files.certFile}\n${files.keyFile}`;
}
