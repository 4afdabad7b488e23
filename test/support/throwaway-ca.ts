/**
 * A certificate authority made in the test, with the `openssl` command line (OpenSSL 3; Debian's
 * `openssl` package, on every machine the tests run on), and server certificates it signs:
 *
 * ```ts
 * const ca = await makeThrowawayCa(dir);
 * const leaf = await ca.issue("server-1");        // SAN 127.0.0.1, ::1 and localhost
 * startTestServer({ config: { tlsCert: leaf.certFile, tlsKey: leaf.keyFile } });
 * fetch(url, { dispatcher: new Agent({ connect: { ca: ca.pem } }) });
 * // skopeo/podman: --cert-dir ca.certDir (a folder holding ca.crt)
 * ```
 *
 * Keys are P-256, certificates valid for a day. `opensslSkip` is node:test's `skip` value.
 */
import { execFile } from "node:child_process";
import { randomBytes, X509Certificate } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { commandAvailable } from "./skopeo.js";

/** node:test `skip` value: `false` when `openssl` is on PATH, otherwise the reason to print. */
export const opensslSkip: false | string = commandAvailable("openssl")
  ? false
  : "openssl not installed: apt-get install openssl";

/** A server certificate and its key, as files and as what a client sees of it. */
export interface IssuedCertificate {
  certFile: string;
  keyFile: string;
  /** The certificate's serial number, upper-case hex as node's `X509Certificate.serialNumber`. */
  serialNumber: string;
  /** SHA-256 fingerprint as node prints it (`AB:CD:…`). */
  fingerprint256: string;
}

/** The CA: its certificate, and a way to issue server certificates. */
export interface ThrowawayCa {
  /** The CA certificate, PEM. */
  pem: Buffer;
  /** Its file. */
  certFile: string;
  /** A folder holding only `ca.crt`, for `--cert-dir` of skopeo and podman. */
  certDir: string;
  /** A server certificate for `127.0.0.1`, `::1` and `localhost`, in `<dir>/<name>.{crt,key}`. */
  issue(name: string): Promise<IssuedCertificate>;
}

/** Makes a CA in `dir` (which must exist). */
export async function makeThrowawayCa(dir: string): Promise<ThrowawayCa> {
  const certFile = join(dir, "ca.pem");
  const keyFile = join(dir, "ca.key");
  await openssl([
    ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"],
    ...["-keyout", keyFile, "-out", certFile, "-days", "1", "-subj", "/CN=Wharf throwaway test CA"],
    ...["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
  ]);
  const pem = await readFile(certFile);
  const certDir = join(dir, "cert-dir");
  await mkdir(certDir, { recursive: true });
  await writeFile(join(certDir, "ca.crt"), pem);
  return {
    pem,
    certFile,
    certDir,
    async issue(name) {
      const leafKey = join(dir, `${name}.key`);
      const leafCert = join(dir, `${name}.crt`);
      const csr = join(dir, `${name}.csr`);
      const ext = join(dir, `${name}.ext`);
      await writeFile(
        ext,
        [
          "basicConstraints=CA:FALSE",
          "keyUsage=critical,digitalSignature,keyEncipherment",
          "extendedKeyUsage=serverAuth",
          "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost",
          "",
        ].join("\n"),
      );
      await openssl([
        ...["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"],
        ...["-keyout", leafKey, "-out", csr, "-subj", `/CN=${name}`],
      ]);
      await openssl([
        ...["x509", "-req", "-in", csr, "-CA", certFile, "-CAkey", keyFile],
        ...["-set_serial", `0x${randomBytes(8).toString("hex")}`, "-days", "1"],
        ...["-extfile", ext, "-out", leafCert],
      ]);
      const x509 = new X509Certificate(await readFile(leafCert));
      return {
        certFile: leafCert,
        keyFile: leafKey,
        serialNumber: x509.serialNumber,
        fingerprint256: x509.fingerprint256,
      };
    },
  };
}

function openssl(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile("openssl", args, { timeout: 30_000 }, (err, _stdout, stderr) => {
      if (err) reject(new Error(`openssl ${args[0]} failed: ${stderr || err.message}`));
      else resolve();
    });
  });
}
