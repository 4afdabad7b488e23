// `--sigstore-trusted-root`: read at start-up (a bad file fails it, naming the flag), and keyless
// bundles are then checked against it rather than refused for the want of one.
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { certificateBundle, pushBundle } from "../support/cosign.js";
import { buildImage, pushImage } from "../support/registry-push.js";
import { makeThrowawayCa, opensslSkip } from "../support/throwaway-ca.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

describe("--sigstore-trusted-root", { skip: opensslSkip }, () => {
  let dir: string;
  let wharf: TestServer | undefined;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "wharf-trusted-root-"));
  });
  after(async () => {
    await wharf?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("fails start-up on a file that is not a trusted root, naming the flag", async () => {
    const bad = join(dir, "bad.json");
    await writeFile(bad, "{not json");
    await assert.rejects(
      startTestServer({ config: { sigstoreTrustedRoot: bad } }),
      /--sigstore-trusted-root .*bad\.json: the Sigstore trusted root is not JSON/,
    );
  });

  it("checks keyless bundles against the configured root", async () => {
    const ca = await makeThrowawayCa(dir);
    const rootFile = join(dir, "trusted_root.json");
    await writeFile(
      rootFile,
      JSON.stringify({
        mediaType: "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
        certificateAuthorities: [
          {
            subject: { organization: "test", commonName: "test" },
            uri: "https://fulcio.test",
            certChain: { certificates: [{ rawBytes: new X509Certificate(ca.pem).raw.toString("base64") }] },
            validFor: { start: "2020-01-01T00:00:00Z" },
          },
        ],
        tlogs: [],
        ctlogs: [],
        timestampAuthorities: [],
      }),
    );
    wharf = await startTestServer({ config: { sigstoreTrustedRoot: rootFile } });
    const org = await wharf.create("/iam/v2/groups", { name: "acme" });
    const token = await wharf.registryToken();
    const image = await pushImage(wharf, "acme/app", "v1", token, buildImage("keyless-e2e"));
    const leaf = await ca.issue("signer");
    const bundle = await certificateBundle({
      certPem: await readFile(leaf.certFile, "utf8"),
      keyPem: await readFile(leaf.keyFile, "utf8"),
      artifact: image.manifest,
    });
    await pushBundle({ registry: wharf, token, repo: "acme/app", digest: image.digest, bundle });
    const repos = await wharf.api(`/registry/v2/repos?uidp.children_of=${org}&name=app`, {
      token: wharf.adminToken,
    });
    const repo = ((await repos.json()) as { repos: { uid: string }[] }).repos[0]?.uid;
    const res = await wharf.api(`/registry/v2/repos/${repo}/digests/${image.digest}/signatures`, {
      token: wharf.adminToken,
    });
    const body = (await res.json()) as {
      signatures: { verified?: boolean; reason: string; layout: string }[];
    };
    assert.equal(body.signatures.length, 1);
    assert.equal(body.signatures[0]?.layout, "sigstore-bundle");
    assert.equal(body.signatures[0]?.verified ?? false, false);
    // Checked against the root (which this bundle, with no log entry, cannot satisfy), not refused for want of one.
    assert.match(
      body.signatures[0]?.reason ?? "",
      /^keyless bundle does not verify against the trusted root: /,
    );
  });
});
